"""Compile (or load from the Numba cache) the report's kernels before any timed work.

Every kernel has an explicit signature (``verify._numba.kernel``), so it is compiled when its
module is imported: on the first run that takes a minute on 2 cores, later runs load the
machine code from the cache in a fraction of a second. :func:`compile_kernels` imports every
module of ``verify.boolean`` and ``verify.model`` but the ``DEFERRED`` ones (kernels no report
check calls: they compile on first use), times it and reports how many kernels were compiled
and how many came from the cache, so that the report shows compilation as its own step and no
check's run time includes it. When the cache lacks a kernel, the kernel modules are compiled
in parallel processes in the order their imports allow (``verify.kernel_cache.compile_pool``), and
this process then loads them from the cache.

The cache lives next to the sources (``verify/**/__pycache__/*.nbi, *.nbc``) when that folder is
writable, else in a per-user folder; ``NUMBA_CACHE_DIR`` moves it anywhere (e.g. a shared disk
for a cluster's workers). See docs/cli.md.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from verify.kernel_cache.compile_pool import (
    can_spawn,
    compile_units,
    import_unit,
    kernel_units,
    module_dispatchers,
    warm_parallel,
)

KERNEL_PACKAGES = ("verify.boolean", "verify.model")
#: Modules the warm-up leaves alone: kernels no report check calls compile on first use.
DEFERRED = (
    "verify.model.double_double.dd_kernel",  # the double-double tier (strings float64 left open)
    "verify.model.double_double.dd_norm",  # and its stages
    "verify.model.double_double.dd_l2",
    "verify.model.double_double.dd_dense",
    "verify.model.double_double.dd_arith",
    "verify.model.plain.diagnostics",  # forward(engine="numba"): check-model, not the report
    "verify.model.plain.forward_numba",  # (imports diagnostics)
)
MESSAGE = "compiling kernels (first run only)"


@dataclass
class KernelStats:
    """What :func:`compile_kernels` did."""

    seconds: float = 0.0
    kernels: int = 0  # Numba dispatchers found
    compiled: int = 0  # signatures compiled now (cache misses, here or in the processes)
    from_cache: int = 0  # signatures loaded from the cache (not counting those compiled now)
    processes: int = 1  # processes that compiled (1: this one)
    deferred: list[str] = field(default_factory=list)  # modules left to compile on first use
    cache_dirs: list[str] = field(default_factory=list)
    numba_cache_dir: str | None = None  # the NUMBA_CACHE_DIR setting, if any
    errors: list[str] = field(default_factory=list)  # modules that failed to import

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if self.compiled:
            what = f"{self.compiled} compiled, {self.from_cache} loaded from the cache"
        else:
            what = f"all {self.from_cache} loaded from the cache"
        if self.processes > 1:
            what += f", in {self.processes} processes"
        where = ", ".join(self.cache_dirs) or "no cache"
        return f"{self.seconds:.1f} s ({self.kernels} kernels: {what}; cache: {where})"


def kernel_modules(*, deferred: bool = False) -> list[str]:
    """Every module of the kernel packages (the Numba kernels are among them), without the
    ``DEFERRED`` ones unless ``deferred``; found on disk, so that listing them compiles
    nothing (importing ``verify.boolean`` imports its kernels)."""
    import verify

    root = Path(verify.__file__).parent
    names: list[str] = []
    for pkg_name in KERNEL_PACKAGES:
        folder = root.joinpath(*pkg_name.split(".")[1:])
        for path in sorted(folder.rglob("*.py")):
            parts = (*pkg_name.split("."), *path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts)
            if parts[-1] == "cli" or (name in DEFERRED and not deferred):
                continue
            names.append(name)
    return names


def _dispatchers() -> list[Any]:
    seen: dict[int, Any] = {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("verify.") and mod is not None:
            for d in module_dispatchers(mod):
                seen.setdefault(id(d), d)
    return list(seen.values())


def _compile_units(modules: list[str], jobs: int, stats: KernelStats) -> int:
    """Import the kernel units here in order until one compiles (a cold or stale cache), then
    the rest in ``jobs`` processes (``compile_pool``); returns the signatures they compiled."""
    try:
        units = kernel_units(modules)
    except Exception as exc:  # the imports below meet and report the same problem
        stats.errors.append(f"{type(exc).__name__}: {exc}")
        return 0
    done: set[str] = set()
    for unit in units:
        _, compiled, _, err = import_unit(unit)
        done.add(unit)
        if compiled and jobs > 1 and can_spawn() and len(done) < len(units):
            try:
                n, errors, stats.processes = compile_units(units, jobs, done)
            except Exception as exc:  # e.g. no processes here: this one compiles the rest
                stats.errors.append(f"parallel compilation: {type(exc).__name__}: {exc}")
                return 0
            stats.errors.extend(errors)
            return n
        if err:
            stats.errors.append(f"{unit}: {err}")
    return 0


def compile_kernels(
    log: Callable[[str], None] | None = None, *, jobs: int | None = None
) -> KernelStats:
    """Import the report's kernel modules (compiling what the cache lacks, in ``jobs``
    processes: None = one per core, 1 = here only); ``log`` gets a line before (the step's
    name) and after (its time and counts)."""
    if log:
        log(f"{MESSAGE} ...")
    start = time.perf_counter()
    stats = KernelStats(
        numba_cache_dir=os.environ.get("NUMBA_CACHE_DIR") or None, deferred=list(DEFERRED)
    )
    try:
        modules = kernel_modules()
    except Exception as exc:  # reported; the checks will meet the same problem
        modules = []
        stats.errors.append(f"{type(exc).__name__}: {exc}")
    in_pool = _compile_units(modules, jobs or os.cpu_count() or 1, stats)
    for name in modules:
        try:
            warm_parallel(importlib.import_module(name))
        except Exception as exc:  # a module that cannot be imported is reported, not fatal
            stats.errors.append(f"{name}: {type(exc).__name__}: {exc}")
    stats.seconds = time.perf_counter() - start
    dirs: set[str] = set()
    hits = 0
    for d in _dispatchers():
        stats.kernels += 1
        st = d.stats
        stats.compiled += sum(st.cache_misses.values())
        hits += sum(st.cache_hits.values())
        if st.cache_path:
            dirs.add(str(st.cache_path))
    stats.compiled += in_pool  # what the processes compiled, this one loaded
    stats.from_cache = max(0, hits - in_pool)
    stats.cache_dirs = sorted(_common_roots(dirs))
    if log:
        log(f"{MESSAGE}: {stats.summary()}")
        for err in stats.errors:
            log(f"  warning: {err}")
    return stats


def _common_roots(dirs: set[str]) -> set[str]:
    """The cache folders, shortened to the folder above the package when they are the in-tree
    ``__pycache__`` folders (one line instead of one per subpackage)."""
    if not dirs:
        return set()
    if all(Path(d).name == "__pycache__" for d in dirs):
        root = os.path.commonpath([str(Path(d).parent) for d in dirs])
        return {os.path.join(root, "**", "__pycache__")}
    return dirs
