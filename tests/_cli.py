"""The CLI in-process for tests: exit code, stderr and stdout of ``python -m verify ARGV``."""

from __future__ import annotations

import pytest

from verify.cli import main


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stderr, stdout); argparse's own errors (SystemExit) give their code too."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    got = capsys.readouterr()
    return code, got.err, got.out


def assert_one_line(err: str, *needles: str) -> None:
    """``err`` is exactly one line, no traceback, and holds every needle."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], err
