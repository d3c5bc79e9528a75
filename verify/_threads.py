"""BLAS on one thread while the toolkit's Numba kernels run.

The toolkit's matrices are small (d_model x d_ff), so a multithreaded BLAS gains nothing on
them; but an OpenBLAS thread pool, once woken by a product, busy-waits for its next job for a
while (OpenBLAS's thread timeout), and numpy and scipy each load their own OpenBLAS. On a
2-core machine those spinning threads took the cores Numba's parallel kernels needed: the
exhaustive truth-table kernel ran ~2x slower after the table preparation's products had woken
them (measured 2026-12-01: 400 against 205 ns per string at L = 1, N = 18, one Numba thread;
benchmarks/bench_truth_table.py). ``one_blas_thread`` limits every loaded BLAS to one thread
for the duration of a call (``threadpoolctl``) and restores the previous limits after it; it
nests.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

F = TypeVar("F", bound=Callable[..., Any])

# the controller lists the loaded BLAS libraries (~4 ms); it is made again when the set of
# imported modules has changed, since an import may load another BLAS (scipy's own OpenBLAS)
_controller: dict[str, Any] = {"modules": -1, "controller": None}


def _blas_controller() -> ThreadpoolController:
    n_modules = len(sys.modules)
    if n_modules != _controller["modules"]:
        _controller["controller"] = ThreadpoolController()
        _controller["modules"] = n_modules
    return _controller["controller"]


@contextlib.contextmanager
def blas_on_one_thread() -> Iterator[None]:
    """Every loaded BLAS on one thread inside the ``with`` block (previous limits restored)."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


def one_blas_thread(fn: F) -> F:
    """Decorator: ``fn`` runs with every loaded BLAS on one thread (``blas_on_one_thread``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with blas_on_one_thread():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def numba_threads_for(items: int, minimum: int) -> Iterator[None]:
    """Numba's parallel kernels on one thread inside the ``with`` block when ``items`` (strings,
    blocks) is below ``minimum``, else as they were: waking another thread costs up to a
    scheduler time slice (4-8 ms measured when another process holds the other core) against
    microseconds of work. Every kernel this guards computes each item on its own, so the thread
    count changes no number. The previous count is restored."""
    if items >= minimum:
        yield
        return
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)
