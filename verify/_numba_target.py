"""Numba's CPU target made ready, with no kernel loaded: imported by the fork servers.

A process's first kernel load (even from the cache) first loads the CPU target's registries
(``BaseContext.refresh``: the numpy implementations, BLAS through scipy), about 0.5 s here.
Done once in a fork server (``verify._forkserver``), every worker forked from it starts with
them loaded. No kernel is imported and no threading layer starts, so forking stays safe: a
child forked after a parallel kernel's load aborts when it runs one (``tests/
test_report_preload.py`` checks both preloads for a launched layer). Only a speed-up: a Numba
whose internals differ leaves the workers to load the registries themselves.
"""

from __future__ import annotations

try:
    from numba.core.registry import cpu_target

    cpu_target.target_context.refresh()
except Exception:  # pragma: no cover - another Numba's internals; the workers do it then
    pass
