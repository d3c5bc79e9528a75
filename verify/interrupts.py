"""Ctrl-C and SIGTERM for long commands: acknowledged at once, finished work kept.

:class:`InterruptGuard` (a context manager) installs handlers for SIGINT and SIGTERM:

- the first signal prints, at once, what happens next (the ``announce`` callback's line, e.g.
  "writing the report of the 12 finished checks ...") and raises KeyboardInterrupt in the main
  thread, which stops the running step (a check, the cells in flight, the figures); inside
  :meth:`InterruptGuard.deferred` (writing the files) it only records the signal, so the files
  are finished first;
- a second signal raises :class:`Abandoned` (not a KeyboardInterrupt, so no step's "keep what
  finished" handler catches it): the command gives up at once, leaving its previous outputs as
  they were (a report is moved into place only when complete; see verify.report.writer).

The exit code is 128 + the signal number: 130 for Ctrl-C, 143 for SIGTERM.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Abandoned(BaseException):
    """A second interrupt: give up now (outputs not yet moved into place are dropped)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"abandoned after a second signal {signum}")
        self.signum = signum


def exit_code(signum: int | None) -> int:
    """128 + the signal number (130 for SIGINT), the shell's convention."""
    return 128 + int(signum or signal.SIGINT)


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: the exit code still tells
        pass


class InterruptGuard:
    """See the module docstring. ``announce()``: the line printed at the first signal;
    ``abandon``: the line printed at the second."""

    def __init__(
        self, announce: Callable[[], str], abandon: str = "second interrupt: stopping now"
    ) -> None:
        self.announce = announce
        self.abandon = abandon
        self.signum: int | None = None
        self._defer = 0
        self._previous: dict[int, object] = {}

    @property
    def interrupted(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None:
            _say(self.abandon)
            raise Abandoned(signum)
        self.signum = signum
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        try:
            line = self.announce()
        except Exception:  # the announcement must not fail the interrupt
            line = "stopping"
        _say(f"{name}: {line} (a second {name} stops at once)")
        if not self._defer:
            raise KeyboardInterrupt

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]
        self._previous.clear()

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A first signal inside this block is recorded, not raised (a second one abandons)."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1


__all__ = ["Abandoned", "InterruptGuard", "exit_code"]


def in_worker_thread(what: str, fn: Callable[..., object], *args: object, **kwargs: object):
    """``fn(*args, **kwargs)`` in a worker thread while the main thread waits in short slices,
    so that Ctrl-C is acted on at once: Python runs signal handlers only in the
    main thread between bytecodes, and a compiled Numba kernel holds it until it returns (14 s
    at N = 20 for `check-model`'s table). ``fn`` must not install signal handlers. On Ctrl-C
    with ``fn`` still running, the process says so in one line (``what``: the command's name)
    and ends at once with exit code 130; ``fn`` writes nothing, so nothing is left
    half-written. (SIGTERM keeps its default: the process ends at once.)"""
    import os

    done: dict[str, object] = {}

    def target() -> None:
        try:
            done["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the main thread
            done["error"] = exc

    worker = threading.Thread(target=target, name="verify-work", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        if worker.is_alive():  # a compiled call cannot be stopped: the process ends instead
            _say(f"{what}: interrupted")
            os._exit(exit_code(signal.SIGINT))
        raise
    if "error" in done:
        raise done["error"]  # type: ignore[misc]
    return done["value"]
