"""Compile the kernel modules in parallel processes, in the order their imports allow.

A kernel module's kernels compile when it is imported, and a kernel that calls a kernel of
another module needs that module compiled first (it links the callee's code in). The units are
the kernel modules (those with an ``@kernel(``) among the module-level imports of the modules
to warm up and of their packages' ``__init__`` (``verify._numba.dependencies``); a unit
becomes ready when every unit it imports is in the cache, and the ready units go to ``jobs``
spawned processes, the one with the most units depending on it (then the largest source)
first. Each process imports its unit, so compiles what the cache lacks and writes it to the
shared cache (Numba writes an index or data file to a temporary name and renames it, so a
reader never sees half a file); an import of a unit done elsewhere loads it from the cache.
The calling process then imports everything from the cache.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import multiprocessing
import time
from typing import Any

from verify._numba import dependencies, module_file


def is_kernel_module(name: str) -> bool:
    """Whether module ``name``'s source defines a Numba kernel (``@kernel(``)."""
    path = module_file(name)
    return path is not None and "@kernel(" in path.read_text()


def _size(name: str) -> int:
    path = module_file(name)
    return path.stat().st_size if path else 0


def kernel_units(modules: list[str]) -> dict[str, frozenset[str]]:
    """The kernel modules the given modules import at module level (themselves included),
    each with the kernel modules it imports (transitively), in a topological order: fewest
    such imports first (a unit imports all its units' imports too), then the smallest."""
    units = {d for m in modules for d in dependencies(m, packages=True) if is_kernel_module(d)}
    graph = {
        u: frozenset(d for d in dependencies(u, packages=True) if d in units and d != u)
        for u in units
    }
    return {u: graph[u] for u in sorted(graph, key=lambda u: (len(graph[u]), _size(u), u))}


def warm_parallel(mod: Any) -> list[Any]:
    """Compile (or load) the parallel builds of the serial-and-parallel pairs a module lists
    in ``WARM_PARALLEL`` (``verify.boolean.kernels``); returns their dispatchers."""
    return [pair.parallel() for pair in getattr(mod, "WARM_PARALLEL", ())]


def module_dispatchers(mod: Any) -> list[Any]:
    """The Numba dispatchers a module defines: its module-level ones, the ``serial`` build of
    ``verify.boolean.kernels``' serial-and-parallel pairs and the parallel builds compiled by
    :func:`warm_parallel`."""
    from numba.core.registry import CPUDispatcher

    found: dict[int, Any] = {}
    cands = [c for obj in list(vars(mod).values()) for c in (obj, getattr(obj, "serial", None))]
    if getattr(mod, "WARM_PARALLEL", ()):
        cands += warm_parallel(mod)  # built already: this only looks them up
    for cand in cands:
        if isinstance(cand, CPUDispatcher) and cand.py_func.__module__ == mod.__name__:
            found.setdefault(id(cand), cand)
    return list(found.values())


def import_unit(name: str) -> tuple[str, int, float, str]:
    """Import ``name`` here; (name, signatures compiled, CPU seconds, error or "")."""
    start = time.process_time()
    try:
        mod = importlib.import_module(name)
        warm_parallel(mod)
    except Exception as exc:  # reported by the caller (its own import meets it again)
        return name, 0, time.process_time() - start, f"{type(exc).__name__}: {exc}"
    compiled = sum(sum(d.stats.cache_misses.values()) for d in module_dispatchers(mod))
    return name, compiled, time.process_time() - start, ""


def _priority(units: dict[str, frozenset[str]]) -> dict[str, tuple[int, int]]:
    """The units depending on each unit, then its source size: the larger goes first."""
    return {u: (sum(u in deps for deps in units.values()), _size(u)) for u in units}


def compile_units(
    units: dict[str, frozenset[str]], jobs: int, done: set[str]
) -> tuple[int, list[str], int]:
    """Import the units not in ``done`` in ``jobs`` spawned processes (module doc); returns
    (signatures compiled, errors, processes used)."""
    todo = [u for u in units if u not in done]
    jobs = max(1, min(jobs, len(todo)))
    prio = _priority(units)
    finished = set(done)
    compiled = 0
    errors: list[str] = []
    pending: dict[cf.Future, str] = {}
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        while todo or pending:
            ready = [u for u in todo if units[u] <= finished]
            if not ready and not pending:  # cannot happen (imports are acyclic): run the rest
                ready = list(todo)
            ready.sort(key=lambda u: prio[u], reverse=True)
            for u in ready[: jobs - len(pending)]:
                todo.remove(u)
                pending[pool.submit(import_unit, u)] = u
            first, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in first:
                finished.add(pending.pop(fut))
                _, n, _, err = fut.result()
                compiled += n
                if err:
                    errors.append(f"{fut.result()[0]}: {err}")
    return compiled, errors, jobs


def can_spawn() -> bool:
    """Whether this process may start child processes (not a daemonic pool worker)."""
    return not multiprocessing.current_process().daemon
