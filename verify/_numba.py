"""The one decorator policy for every Numba kernel in the toolkit.

Explicit signatures (compiled eagerly, so no JIT inside a timed Hypothesis example),
``cache=True`` (a second process loads the machine code in ~0.2 s), ``error_model="numpy"``
(x / 0.0 gives inf or nan, as IEEE says, instead of raising: eps = 0 layer norms meet it), and
no fastmath (it breaks isnan/isfinite and reorders sums, so rounding bounds would not hold).

The cache is salted. Numba keys a function's cache entry on its own source file only, so a
caller compiled against a callee in another file (whose code it links in) would load its stale
machine code after the callee changed. Here each entry's source stamp also carries a hash of
every module of the same package that the kernel's module imports, directly or not (at module
level: the callees, constants such as ``verify.model.arithmetic.rounding``, the intrinsics of
``stages.simd``, this policy): editing any of them recompiles the kernels that depend on it.

The cache files are per environment. Numba keeps one index file per function holding one Numba
version and one source stamp; a process that finds another version there treats the index as
empty and, once it has compiled, rewrites it whole with its own entries only. So two
environments sharing a checkout (the README's ``.venv`` and another venv, CI's, one with torch
for ``train``) each wiped the other's entries of every kernel, and each process of one
recompiled what the other had just saved. Processes on CPUs of different models sharing a
``NUMBA_CACHE_DIR`` read-modify-wrote one index too, and could give two entries one data file.
Here every file name carries :func:`environment_tag` (the Numba version and the CPU target
Numba keys its entries on), so each environment reads and writes its own files; within one,
Numba's own rules hold (an edited source replaces the stale entries).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core import typeinfer
from numba.core.caching import CompileResultCacheImpl, FunctionCache


def module_file(name: str) -> Path | None:
    """The source file of module ``name``, found without importing it (None when it is not a
    plain source file of its top-level package)."""
    top = name.split(".", 1)[0]
    init = getattr(sys.modules.get(top), "__file__", None)
    if not init:
        spec = importlib.util.find_spec(top)
        init = spec.origin if spec is not None else None
    if not init:
        return None
    base = Path(init).parent.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def module_imports(name: str) -> frozenset[str]:
    """The modules of ``name``'s own top-level package that its source imports at module
    level (``from pkg.a import b`` counts ``pkg.a.b`` when that is a module)."""
    path = module_file(name)
    if path is None:
        return frozenset()
    top = name.split(".", 1)[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == top)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == top:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
    return frozenset(m for m in found if m != name and module_file(m) is not None)


def dependencies(name: str, *, packages: bool = False) -> frozenset[str]:
    """``name`` and every module of its package it imports at module level, transitively;
    with ``packages`` also the parent packages every such import runs (their ``__init__``)."""
    seen = {name}
    todo = [name]
    while todo:
        mod = todo.pop()
        found = set(module_imports(mod))
        if packages:
            parts = mod.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts)))
        for dep in found:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return frozenset(seen)


@functools.cache
def source_salt(name: str) -> str:
    """SHA-256 over the sources of :func:`dependencies` of module ``name`` (sorted by name)."""
    h = hashlib.sha256()
    for dep in sorted(dependencies(name)):
        path = module_file(dep)
        h.update(dep.encode() + b"\0")
        h.update(path.read_bytes() if path else b"")
    return h.hexdigest()


class _SaltedLocator:
    """A Numba cache locator whose source stamp is the wrapped one's plus the salt."""

    def __init__(self, inner: Any, salt: str) -> None:
        self._inner = inner
        self._salt = salt

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)

    def get_source_stamp(self) -> Any:
        return (self._inner.get_source_stamp(), self._salt)


@functools.cache
def environment_tag() -> str:
    """A short hash of what makes compiled code of one environment unusable by another: the
    Numba version (its index format and code generation) and the CPU target (LLVM triple, CPU
    name and features: Numba's ``magic_tuple``, which ``NUMBA_CPU_NAME`` and
    ``NUMBA_CPU_FEATURES`` set)."""
    from numba.core.registry import cpu_target

    magic = cpu_target.target_context.codegen().magic_tuple()
    return hashlib.sha256(repr((numba.__version__, magic)).encode()).hexdigest()[:10]


class _SaltedCacheImpl(CompileResultCacheImpl):
    def __init__(self, py_func: Callable) -> None:
        super().__init__(py_func)
        self._locator = _SaltedLocator(self._locator, source_salt(py_func.__module__))

    def get_filename_base(self, fullname: str, abiflags: str) -> str:
        """Numba's ``name-line.pyXY`` plus the environment's tag (module doc)."""
        return f"{super().get_filename_base(fullname, abiflags)}-{environment_tag()}"


_reported_dirs: set[str] = set()


class SaltedFunctionCache(FunctionCache):
    """Numba's function cache, with the salted source stamp (module doc), that heals: an entry
    it cannot read (an empty or garbage ``.nbc``, a garbage ``.nbi``: what a full disk or a
    process killed while saving leaves) is discarded and the kernel compiled again, with one
    line on stderr naming the cache directory, instead of Numba's unpickling traceback in
    every later command."""

    _impl_class = _SaltedCacheImpl

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:  # unpickling garbage raises anything: nothing of it is used
            self._discard(exc)
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)
        except Exception as exc:  # an index that became unreadable since: start it afresh
            self._discard(exc)
            try:
                super().save_overload(sig, data)
            except Exception:  # not saved: the next process compiles it again, nothing worse
                pass

    def _discard(self, exc: Exception) -> None:
        """Remove this function's index and data files; say so once per cache directory."""
        files = self._cache_file
        index = Path(files._index_path)
        pattern = files._data_name_pattern.replace("{number:d}", "*")
        for path in [index, *index.parent.glob(pattern)]:
            try:
                path.unlink()
            except OSError:
                pass
        where = str(index.parent)
        if where not in _reported_dirs:
            _reported_dirs.add(where)
            print(
                f"verify: discarded an unreadable Numba cache entry in {where}"
                f" ({index.name}: {type(exc).__name__}); compiling it again",
                file=sys.stderr,
                flush=True,
            )


def kernel(signature: Any, *, parallel: bool = False) -> Callable[[Callable], Any]:
    """Decorate a pure numerical kernel with the project's Numba policy: compile every
    signature now (or load it from the salted cache), then no other."""
    sigs = signature if isinstance(signature, list) else [signature]

    def deco(fn: Callable) -> Any:
        disp = numba.njit(error_model="numpy", nogil=True, parallel=parallel, fastmath=False)(fn)
        if numba.config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: the plain function, as njit(sigs)
            return disp
        disp._cache = SaltedFunctionCache(fn)  # what cache=True does, with the salted stamp
        # registered with type inference before the decorator returns, as njit(sigs) does, so
        # that a self-recursive kernel (diagnostics.pairwise_split) can type its own calls
        with typeinfer.register_dispatcher(disp):
            for sig in sigs:
                disp.compile(sig)
            disp.disable_compile()
        return disp

    return deco
