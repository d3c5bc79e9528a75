"""Vectors of symbolic length for the code of ``verify.theory`` run on symbols: numpy's
elementwise arithmetic, dot products, norms, means and maxima over a vector whose length is a
symbol (D entries, 2^N strings) and whose i-th entry is an expression in the index i.

:func:`symbolic_np` is :func:`verify.proofs.symbolic.symbolic` with ``np`` bound too: a
:class:`SymVec` passes through ``np.asarray``; ``np.linalg.norm`` is sqrt(sum_i v_i^2),
``v @ u`` is sum_i v_i u_i, ``np.average`` the mean (or the weighted mean sum_i p_i v_i /
sum_i p_i), ``np.sum``/``np.mean``/``np.dot`` and the elementwise ``np.abs``, ``np.square``,
``np.sqrt``, ``np.exp``, ``np.log`` likewise, ``np.max`` of a vector whose entries depend on i
the function ``max_entry`` (i -> v_i, n) (a constant vector's max is its entry),
``np.ones``/``np.zeros`` of a symbolic length constant vectors. Every other numpy name is
numpy's own, on numbers. numpy's 2-norm, mean and max are taken for their definitions, as
``math.sqrt`` is: what is checked is the formula the code builds from them, for every length
at once.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.symbolic import _NAMES, _Env, exact

__all__ = ["INDEX", "MAX_ENTRY", "SymParams", "SymVec", "symbolic_np"]

INDEX = sp.Symbol("i", integer=True, nonnegative=True)
MAX_ENTRY = sp.Function("max_entry")  # max_entry(Lambda(i, v_i), n) = max over 0 <= i < n


class SymVec:
    """The vector (entry(i))_{0 <= i < n}, n a symbol or an integer."""

    __array_ufunc__ = None  # numpy defers to these operators

    def __init__(self, entry: Any, n: Any) -> None:
        self.entry, self.n = exact(entry), exact(n)

    def __repr__(self) -> str:
        return f"SymVec({self.entry}, i < {self.n})"

    def _with(self, other: Any, fn: Callable[[Any, Any], Any]) -> SymVec:
        if isinstance(other, SymVec):
            if sp.simplify(other.n - self.n) != 0:
                raise ValueError(f"lengths {self.n} and {other.n} differ")
            return SymVec(fn(self.entry, other.entry), self.n)
        if isinstance(other, np.ndarray):
            raise TypeError("a numeric array with a symbolic-length vector")
        return SymVec(fn(self.entry, exact(other)), self.n)

    def __add__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: a + b)

    def __radd__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: b + a)

    def __sub__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: a - b)

    def __rsub__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: b - a)

    def __mul__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: a * b)

    def __rmul__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: b * a)

    def __truediv__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: a / b)

    def __rtruediv__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: b / a)

    def __pow__(self, o: Any) -> SymVec:
        return self._with(o, lambda a, b: a**b)

    def __neg__(self) -> SymVec:
        return SymVec(-self.entry, self.n)

    def __abs__(self) -> SymVec:
        return SymVec(sp.Abs(self.entry), self.n)

    def __matmul__(self, o: SymVec) -> sp.Expr:
        return (self * o).total()

    def total(self) -> sp.Expr:
        """sum_{0 <= i < n} entry(i)."""
        return sp.Sum(self.entry, (INDEX, 0, self.n - 1))


def _norm(v: Any, *args: Any, **kwargs: Any) -> Any:
    if isinstance(v, SymVec):
        return sp.sqrt((v * v).total())
    return np.linalg.norm(v, *args, **kwargs)


def _max(v: Any, *args: Any, **kwargs: Any) -> Any:
    if isinstance(v, SymVec):
        if INDEX not in v.entry.free_symbols:
            return v.entry  # a constant vector (of length >= 1)
        return MAX_ENTRY(sp.Lambda(INDEX, v.entry), v.n)
    return np.max(v, *args, **kwargs)


def _average(v: Any, axis: Any = None, weights: Any = None, **kwargs: Any) -> Any:
    if isinstance(v, SymVec):
        if weights is None:
            return v.total() / v.n
        w = weights if isinstance(weights, SymVec) else SymVec(weights, v.n)
        return (v * w).total() / w.total()
    return np.average(v, axis=axis, weights=weights, **kwargs)


def _asarray(x: Any, dtype: Any = None, **kwargs: Any) -> Any:
    if isinstance(x, SymVec):
        return x
    if isinstance(x, sp.Basic):
        return exact(x)
    return np.asarray(x, dtype=dtype, **kwargs)


def _elementwise(sym_fn: Callable[[Any], Any], np_fn: Callable[..., Any]) -> Callable[..., Any]:
    def fn(v: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(v, SymVec):
            return SymVec(sym_fn(v.entry), v.n)
        if isinstance(v, sp.Basic):
            return sym_fn(v)
        return np_fn(v, *args, **kwargs)

    return fn


def _reduce(sym_fn: Callable[[SymVec], Any], np_fn: Callable[..., Any]) -> Callable[..., Any]:
    def fn(v: Any, *args: Any, **kwargs: Any) -> Any:
        return sym_fn(v) if isinstance(v, SymVec) else np_fn(v, *args, **kwargs)

    return fn


def _filled(value: int, fallback: Callable[..., Any]) -> Callable[..., Any]:
    def fill(n: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(n, sp.Basic) and not n.is_number:
            return SymVec(value, n)
        return fallback(n, *args, **kwargs)

    return fill


class _Numpy(types.SimpleNamespace):
    """numpy with the symbolic-length vector rules above; every other name numpy's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


_NP = _Numpy(
    asarray=_asarray,
    array=_asarray,
    abs=_elementwise(sp.Abs, np.abs),
    square=_elementwise(lambda e: e**2, np.square),
    sqrt=_elementwise(sp.sqrt, np.sqrt),
    exp=_elementwise(sp.exp, np.exp),
    log=_elementwise(sp.log, np.log),
    sum=_reduce(SymVec.total, np.sum),
    mean=_reduce(lambda v: v.total() / v.n, np.mean),
    dot=lambda u, v: u @ v if isinstance(u, SymVec) else np.dot(u, v),
    max=_max,
    average=_average,
    ones=_filled(1, np.ones),
    zeros=_filled(0, np.zeros),
    linalg=types.SimpleNamespace(norm=_norm),
)
NAMES_NP: dict[str, Any] = {**_NAMES, "np": _NP}


def symbolic_np(fn: Callable[..., Any], names: dict[str, Any] | None = None) -> Callable[..., Any]:
    """``fn`` in the symbolic arithmetic with numpy on symbolic-length vectors (module doc), and
    ``names`` bound too; numbers in its result exact, a :class:`SymVec` as it is."""
    copied = _Env({**NAMES_NP, **(names or {})}).copy(fn)

    def run(*args: Any, **kwargs: Any) -> Any:
        out = copied(*args, **kwargs)
        return out if isinstance(out, SymVec) else exact(out)

    return run


class SymParams(Mapping[str, Any]):
    """A model's parameters as symbols: each scalar (``scalars``) a real symbol named after it,
    every other name a :class:`SymVec` of length D whose entries are ``IndexedBase(name)[i]``
    (real): code that reads another array than the composition's gets other symbols, and the
    chain fails there."""

    def __init__(self, config: Any, d: Any, scalars: tuple[str, ...]) -> None:
        self.config, self.d, self.scalars = config, d, scalars

    def __getitem__(self, name: str) -> Any:
        if name in self.scalars:
            return sp.Symbol(name, real=True)
        return SymVec(self.entry(name), self.d)

    def __iter__(self) -> Iterator[str]:
        return iter(self.scalars)

    def __len__(self) -> int:
        return len(self.scalars)

    @staticmethod
    def entry(name: str) -> sp.Expr:
        """The i-th entry of the named vector."""
        return sp.IndexedBase(name, real=True)[INDEX]
