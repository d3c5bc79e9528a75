"""This process's multiprocessing fork server, started early (standard library only, so the
command line can start it before importing anything heavy).

The local process pools (``verify.sweep.executors.local_executor``) take their workers from a
"forkserver": each worker is a fork of the server, which imports the ``preload`` modules once.
Started at the beginning of ``report``, the server's imports run while the command loads the
kernels and the statements, and the first workers fork at once.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from typing import Any

#: what a sweep's local pool's fork server imports (Numba's target ready, no kernel)
SWEEP_PRELOAD = ("verify._numba_target", "verify.sweep")
#: what a report's local pool's fork server imports for all its workers (no Numba kernel)
REPORT_PRELOAD = ("verify._numba_target", "verify.report.preload")


def start_fork_server(preload: Sequence[str] = SWEEP_PRELOAD) -> Any:
    """Start this process's fork server (if it is not running yet) importing ``preload``, and
    return the "forkserver" context. The server is one per process: once it runs, a later
    ``preload`` has no effect."""
    from multiprocessing import forkserver

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))
    forkserver.ensure_running()
    return ctx
