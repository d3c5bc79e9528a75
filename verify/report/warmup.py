"""Compile (or load from the Numba cache) every kernel before any timed work.

Every kernel has an explicit signature (``verify._numba.kernel``), so it is compiled when its
module is imported: on the first run that takes minutes on 2 cores, later runs load the machine
code from the cache in a fraction of a second. :func:`compile_kernels` imports every module of
``verify.boolean`` and ``verify.model`` once, times it and reports how many kernels were
compiled and how many came from the cache, so that the report shows compilation as its own step
and no check's run time includes it.

The cache lives next to the sources (``verify/**/__pycache__/*.nbi, *.nbc``) when that folder is
writable, else in a per-user folder; ``NUMBA_CACHE_DIR`` moves it anywhere (e.g. a shared disk
for a cluster's workers). See docs/cli.md.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

KERNEL_PACKAGES = ("verify.boolean", "verify.model")
MESSAGE = "compiling kernels (first run only)"


@dataclass
class KernelStats:
    """What :func:`compile_kernels` did."""

    seconds: float = 0.0
    kernels: int = 0  # Numba dispatchers found
    compiled: int = 0  # signatures compiled now (cache misses)
    from_cache: int = 0  # signatures loaded from the cache
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
        where = ", ".join(self.cache_dirs) or "no cache"
        return f"{self.seconds:.1f} s ({self.kernels} kernels: {what}; cache: {where})"


def kernel_modules() -> list[str]:
    """Every module of the kernel packages (the Numba kernels are among them)."""
    names: list[str] = []
    for pkg_name in KERNEL_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + "."):
            if info.name.rsplit(".", 1)[-1] in ("cli",):
                continue
            names.append(info.name)
    return names


def _dispatchers() -> list[Any]:
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return []
    seen: dict[int, Any] = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("verify.") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, CPUDispatcher):
                seen.setdefault(id(obj), obj)
    return list(seen.values())


def compile_kernels(log: Callable[[str], None] | None = None) -> KernelStats:
    """Import every kernel module (compiling what the cache lacks); ``log`` gets a line before
    (the step's name) and after (its time and counts)."""
    if log:
        log(f"{MESSAGE} ...")
    start = time.perf_counter()
    stats = KernelStats(numba_cache_dir=os.environ.get("NUMBA_CACHE_DIR") or None)
    try:
        modules = kernel_modules()
    except Exception as exc:  # reported; the checks will meet the same problem
        modules = []
        stats.errors.append(f"{type(exc).__name__}: {exc}")
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a module that cannot be imported is reported, not fatal
            stats.errors.append(f"{name}: {type(exc).__name__}: {exc}")
    stats.seconds = time.perf_counter() - start
    dirs: set[str] = set()
    for d in _dispatchers():
        stats.kernels += 1
        st = d.stats
        stats.compiled += sum(st.cache_misses.values())
        stats.from_cache += sum(st.cache_hits.values())
        if st.cache_path:
            dirs.add(str(st.cache_path))
    stats.cache_dirs = sorted(_common_roots(dirs))
    if log:
        log(f"{MESSAGE}: {stats.summary()}")
        for err in stats.errors:
            log(f"  warning: {err}")
    return stats


def _common_roots(dirs: set[str]) -> set[str]:
    """The cache folders, shortened to the folder above the package when they are the in-tree
    ``__pycache__`` folders (one line instead of one per subpackage)."""
    from pathlib import Path

    if not dirs:
        return set()
    if all(Path(d).name == "__pycache__" for d in dirs):
        root = os.path.commonpath([str(Path(d).parent) for d in dirs])
        return {os.path.join(root, "**", "__pycache__")}
    return dirs
