"""Command line: python -m verify COMMAND ... (or the console script verify-transformers).

Each command lives in its own module under ``verify/commands/`` and exposes
``register(subparsers) -> None``, which adds its parser and sets ``func`` (a callable taking the
parsed arguments and returning the exit code). New modules are found automatically; modules
whose name starts with "_" hold shared code (``_options``: the one flag vocabulary).
Command modules import only the standard library at registration, so ``--help`` and usage
errors answer at once; the numerical packages load when a command runs.
Bad input (ValidationError) is reported on one line naming the flag, without a traceback, with
exit code 2. A failure of the environment or of a plugin (an OSError such as a full disk, an
optional package missing at run time, a plugin returning the wrong thing: PluginError) is one
line with exit code 1. Ctrl-C ends with exit code 130 (SIGTERM: 143); see verify.interrupts.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from verify import __version__
from verify.errors import PluginError, ValidationError
from verify.interrupts import Abandoned

INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        # a negative number in any notation is a value, not a flag (argparse's own pattern
        # misses "-1e-5", so `--eps -1e-5` got "expected one argument", not the range error)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")

    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _command_modules() -> list[str]:
    import pkgutil

    import verify.commands

    return sorted(
        info.name
        for info in pkgutil.iter_modules(verify.commands.__path__)
        if not info.name.startswith("_")
    )


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = _Parser(prog="python -m verify", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"verify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _command_modules():
        importlib.import_module(f"verify.commands.{name}").register(sub)
    for command in sub.choices.values():  # every command sees families of other packages
        command.add_argument(
            "--import",
            dest="imports",
            action="append",
            default=[],
            metavar="MODULE",
            help="import MODULE first (repeatable): its families and statements join the"
            " registries, also in sweep workers (installed packages are found by entry points)",
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        from verify.environment import check_environment

        check_environment()
        if args.imports:
            from verify.plugins import request_imports

            request_imports(args.imports)
        return int(args.func(args) or 0)
    except ValidationError as exc:
        from verify.commands._options import flag_message

        overrides = getattr(args, "flag_names", None)
        msg = flag_message(str(exc), exc.argument, overrides)
        print(f"{parser.prog} {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except PluginError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader of stdout left (`... | head`): quiet, like `yes | head`
        return _reader_gone()
    except OSError as exc:  # the file system or the machine refused: one line, exit 1
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        why = exc.strerror or type(exc).__name__
        print(f"{parser.prog} {args.command}: error: {why}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Abandoned as exc:
        return 128 + exc.signum


def _reader_gone() -> int:
    """The reader of stdout left (`... | head`): stdout to /dev/null, so that no second error
    comes when Python flushes it at exit; exit code 141 (128 + SIGPIPE), quiet like `yes`."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def run() -> NoReturn:
    """The process's entry point (``python -m verify``, the ``verify-transformers`` script):
    :func:`main`, then a quick exit. A signal while the interpreter shuts down (the work done,
    the outputs written) exits at once with 128 + its number instead of a traceback or a death
    by signal. The objects still alive are frozen out of the garbage collector
    (``gc.freeze``): the collections of the interpreter's shutdown otherwise walk every one of
    them (the imported sympy, Numba and matplotlib graphs), 0.9-1.5 s after a report (measured
    2026-12-06); the exit handlers (atexit, weakref finalizers) still run, and the memory goes
    back to the system with the process."""
    code = main()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: os._exit(128 + signum))
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _reader_gone()
    gc.freeze()
    raise SystemExit(code)


if __name__ == "__main__":
    run()
