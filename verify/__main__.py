"""``python -m verify``: the command line (:func:`verify.cli.run`)."""

from verify.cli import run

run()
