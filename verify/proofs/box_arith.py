"""Interval arithmetic with first-order derivatives, for running the code of ``verify.theory`` on
a box (the chains proved by branch and bound, :mod:`verify.proofs.chain_boxes`).

A :class:`Num` is an enclosure (:class:`verify.proofs.interval.Iv`, exact arb endpoints) of a
function's values over a box, with enclosures of its partial derivatives (forward mode): the
mean value form f(box) in f(m) + sum_i f_i(box) (x_i - m_i) (axiom ``axiom.mean_value``) keeps
the difference of two equal formulas small where plain intervals cannot (x - x is [-w, w] in
plain interval arithmetic, 0 here). A comparison the box decides is a ``bool``; one it does not
decide (the box straddles the branch) raises :class:`Undecided`, and the box is split.

:func:`on_box` runs a coded function with this arithmetic bound to its names, by the machinery
of :mod:`verify.proofs.symbolic` (the same bytecode; float literals as the exact rationals they
are; ``math``, ``mpmath``, ``scipy.special``, ``float``, ``max``, ``min`` bound to the interval
versions; the validators run on the box). :func:`compile_num` evaluates a step expression
(sympy) in the same arithmetic.
"""

from __future__ import annotations

import builtins
import math
import numbers
import types
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import sympy as sp
from flint import arb

from verify.proofs.interval import Iv, Undefined

__all__ = ["Num", "Undecided", "compile_num", "lift", "on_box"]

Grad = tuple[Iv, ...] | None  # None: a constant (every partial derivative 0)


class Undecided(ArithmeticError):
    """A branch (comparison, min, max, abs) that the box does not decide: split the box."""


def _const(x: Any) -> Iv:
    if isinstance(x, Num):
        return x.v
    if isinstance(x, Iv):
        return x
    if isinstance(x, sp.Rational):
        return Iv.point(Fraction(int(x.p), int(x.q)))
    if isinstance(x, bool):
        return Iv.point(int(x))
    if isinstance(x, (int, Fraction)):
        return Iv.point(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            raise Undefined(f"{x} in interval arithmetic")
        return Iv.point(Fraction(x))
    if isinstance(x, sp.Basic) and x.is_number:
        v = arb(str(sp.N(x, 50)))
        return Iv(v.lower(), v.upper())
    raise TypeError(f"{type(x).__name__} {x!r} in interval arithmetic")


def lift(x: Any) -> Num:
    """A number (int, Fraction, float, sympy number) or a Num as a Num."""
    return x if isinstance(x, Num) else Num(_const(x))


def _scale(g: Grad, k: Iv) -> Grad:
    return None if g is None else tuple(gi * k for gi in g)


def _add(a: Grad, b: Grad) -> Grad:
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _sub(a: Iv, b: Iv) -> Iv:
    return a + (-b)


class Num:
    """An enclosure ``v`` of a value over a box and ``g`` of its gradient (module doc)."""

    __slots__ = ("g", "v")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, v: Iv, g: Grad = None) -> None:
        self.v, self.g = v, g

    def __repr__(self) -> str:
        return f"Num[{float(self.v.lo.mid()):.6g}, {float(self.v.hi.mid()):.6g}]"

    # --- arithmetic
    def __add__(self, o: Any) -> Num:
        o = lift(o)
        return Num(self.v + o.v, _add(self.g, o.g))

    __radd__ = __add__

    def __neg__(self) -> Num:
        return Num(-self.v, _scale(self.g, Iv.point(-1)))

    def __pos__(self) -> Num:
        return self

    def __sub__(self, o: Any) -> Num:
        return self + (-lift(o))

    def __rsub__(self, o: Any) -> Num:
        return lift(o) + (-self)

    def __mul__(self, o: Any) -> Num:
        o = lift(o)
        return Num(self.v * o.v, _add(_scale(self.g, o.v), _scale(o.g, self.v)))

    __rmul__ = __mul__

    def inv(self) -> Num:
        r = self.v.inv()
        return Num(r, _scale(self.g, -(r * r)))

    def __truediv__(self, o: Any) -> Num:
        return self * lift(o).inv()

    def __rtruediv__(self, o: Any) -> Num:
        return lift(o) * self.inv()

    def __pow__(self, e: Any) -> Num:
        if isinstance(e, Num):
            if e.g is None and e.v.lo == e.v.hi and e.v.lo.is_integer():
                return self ** int(e.v.lo.unique_fmpz())  # an integer point: exact powers
            return exp(e * log(self))
        if isinstance(e, (int, sp.Integer)) and not isinstance(e, bool):
            n = int(e)
            if n == 0:
                return Num(Iv.point(1))
            d = None if self.g is None else self.v.ipow(n - 1) * Iv.point(n)
            return Num(self.v.ipow(n), _scale(self.g, d) if d is not None else None)
        q = Fraction(int(e.p), int(e.q)) if isinstance(e, sp.Rational) else Fraction(e)
        if q.denominator == 1:
            return self ** int(q)
        ea = arb(q.numerator) / q.denominator
        val = self.v.rpow(ea, positive=q > 0)
        d = None if self.g is None else self.v.rpow(ea - 1, positive=q > 1) * Iv.point(q)
        return Num(val, _scale(self.g, d) if d is not None else None)

    def __rpow__(self, base: Any) -> Num:
        return lift(base) ** self

    def __abs__(self) -> Num:
        if self.v.lo >= 0:
            return self
        if self.v.hi <= 0:
            return -self
        raise Undecided("abs of an interval around 0")

    # --- comparisons: decided on the whole box, or Undecided
    def _cmp(self, o: Any) -> tuple[Iv, Iv]:
        return self.v, _const(o)

    def __lt__(self, o: Any) -> bool:
        a, b = self._cmp(o)
        return _decide(a.hi < b.lo, a.lo >= b.hi)

    def __le__(self, o: Any) -> bool:
        a, b = self._cmp(o)
        return _decide(a.hi <= b.lo, a.lo > b.hi)

    def __gt__(self, o: Any) -> bool:
        a, b = self._cmp(o)
        return _decide(a.lo > b.hi, a.hi <= b.lo)

    def __ge__(self, o: Any) -> bool:
        a, b = self._cmp(o)
        return _decide(a.lo >= b.hi, a.hi < b.lo)

    def __eq__(self, o: object) -> bool:  # type: ignore[override]
        a, b = self._cmp(o)
        return _decide(a.lo == a.hi == b.lo == b.hi, a.hi < b.lo or a.lo > b.hi)

    def __ne__(self, o: object) -> bool:  # type: ignore[override]
        return not self.__eq__(o)

    def __bool__(self) -> bool:
        return self.__ne__(0)


def _decide(true: Any, false: Any) -> bool:
    if bool(true):
        return True
    if bool(false):
        return False
    raise Undecided("the box straddles a comparison")


def _unary(f: Callable[[Iv], Iv], df: Callable[[Iv, Iv], Iv]) -> Callable[[Any], Num]:
    """A monotone or interval function with its derivative df(x, f(x))."""

    def fn(x: Any) -> Num:
        x = lift(x)
        val = f(x.v)
        return Num(val, None if x.g is None else _scale(x.g, df(x.v, val)))

    return fn


def _mono(fa: Callable[[arb], arb]) -> Callable[[Iv], Iv]:
    return lambda x: x.monotone(fa)


def _pos_domain(x: Iv) -> Iv:
    if not x.lo > 0:
        raise Undefined("log of an interval reaching 0")
    return x


_LN10 = arb(10).log()
sqrt = _unary(
    lambda x: x.monotone(lambda a: a.sqrt()) if x.lo >= 0 else _raise("sqrt of a negative"),
    lambda x, s: (s * Iv.point(2)).inv(),
)
exp = _unary(_mono(lambda a: a.exp()), lambda x, e: e)
log = _unary(lambda x: _pos_domain(x).monotone(lambda a: a.log()), lambda x, _: x.inv())
log10 = _unary(
    lambda x: _pos_domain(x).monotone(lambda a: a.log() / _LN10),
    lambda x, _: (x * Iv.of(_LN10.lower(), _LN10.upper())).inv(),
)
log1p = _unary(
    lambda x: _pos_domain(x + Iv.point(1)).monotone(lambda a: a.log()),
    lambda x, _: (x + Iv.point(1)).inv(),
)


def _raise(msg: str) -> Iv:
    raise Undefined(msg)


def gammaincc(a: Any, x: Any) -> Num:
    """Q(a, x), the regularised upper incomplete gamma function, for a constant a > 0:
    decreasing in x, dQ/dx = -x^{a-1} e^{-x} / Gamma(a)."""
    if isinstance(a, Num):
        raise Undefined("gammaincc with an interval order")
    av = _const(a)
    if av.lo != av.hi:
        raise Undefined("gammaincc with an inexact order")
    s = av.lo
    x = lift(x)
    if x.v.lo < 0:
        raise Undefined("gammaincc at a negative argument")
    val = x.v.monotone(lambda z: z.gamma_upper(s, regularized=1), increasing=False)
    if x.g is None:
        return Num(val)
    dens = (x.v.rpow(s - 1, positive=bool(s > 1)) if s != 1 else Iv.point(1)) * x.v.monotone(
        lambda z: (-z).exp(), increasing=False
    )
    ga = s.gamma()
    return Num(val, _scale(x.g, -(dens * Iv.of(1 / ga.upper(), 1 / ga.lower()).max(Iv.point(0)))))


def _extremum(pick_first: Callable[[Num, Num], bool], py: Callable[..., Any]):
    def ext(*args: Any, **kwargs: Any) -> Any:
        items = list(args[0]) if len(args) == 1 else list(args)
        if not any(isinstance(v, Num) for v in items):
            return py(items, **kwargs)
        best = lift(items[0])
        for v in items[1:]:
            v = lift(v)
            best = best if pick_first(best, v) else v
        return best

    return ext


def _isfinite(x: Any) -> bool:
    if isinstance(x, Num):
        return bool(x.v.lo.is_finite() and x.v.hi.is_finite())
    return math.isfinite(x) if isinstance(x, (int, float)) else bool(sp.sympify(x).is_finite)


def _float(x: Any = 0.0) -> Any:
    return x if isinstance(x, (Num, sp.Basic)) else (float(x) if isinstance(x, str) else x)


_PI = Num(Iv.of(arb.pi().lower(), arb.pi().upper()))
_E = Num(Iv.of(arb(1).exp().lower(), arb(1).exp().upper()))
_MATH = types.SimpleNamespace(
    sqrt=sqrt, exp=exp, log=lambda x, b=None: log(x) if b is None else log(x) / log(b),
    log10=log10, log1p=log1p, pi=_PI, e=_E, inf=math.inf, isfinite=_isfinite,
    isnan=lambda x: False if isinstance(x, Num) else math.isnan(x),
)  # fmt: skip
_MPMATH = types.SimpleNamespace(mpf=lift, exp=exp, sqrt=sqrt, log=_MATH.log, log10=log10, pi=_PI)
_SPECIAL = types.SimpleNamespace(gammaincc=gammaincc)


def _int(x: Any = 0) -> Any:
    return x if isinstance(x, Num) else int(x)


def _validators() -> dict[str, Any]:
    """``check_real`` and ``check_int`` running their own bytecode on a box: a Num counts as a
    real (and, on an int side, as an integer), ``float``/``int`` pass it on, ``np.isfinite``
    decides on it, and a bound the box straddles is :class:`Undecided` (the box is split); a
    box outside the accepted range raises the validator's own error."""
    from verify import validation

    shims = {
        "numbers": types.SimpleNamespace(
            Real=(numbers.Real, Num), Integral=(numbers.Integral, Num)
        ),
        "float": _float,
        "int": _int,
        "np": types.SimpleNamespace(isfinite=_isfinite),
    }
    out = {}
    for fn in (validation.check_real, validation.check_int):
        copy = types.FunctionType(fn.__code__, {**fn.__globals__, **shims}, fn.__name__,
                                  fn.__defaults__)  # fmt: skip
        copy.__kwdefaults__ = fn.__kwdefaults__
        out[fn.__name__] = copy
    return out


# name in a module's globals -> what it is bound to in the interval copy (the validators run:
# ``checked_probability`` is code of verify.theory, copied like the rest)
NAMES: dict[str, Any] = {
    "math": _MATH,
    "mpmath": _MPMATH,
    "special": _SPECIAL,
    "float": _float,
    "max": _extremum(lambda a, b: a >= b, builtins.max),
    "min": _extremum(lambda a, b: a <= b, builtins.min),
    **_validators(),
}


def on_box(fn: Callable[..., Any], names: dict[str, Any] | None = None) -> Callable[..., Any]:
    """``fn`` (code of ``verify.theory``, or a test's replacement) running in the interval
    arithmetic (module doc): the same bytecode, its names bound to :data:`NAMES` (or
    ``names``: a validator left out of it runs, on the box)."""
    from verify.proofs.symbolic import _Env

    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"{fn!r} is not a Python function")
    return _Env(NAMES if names is None else names).copy(fn)


CompiledNum = Callable[[Mapping[str, Any]], Num]


def compile_num(expr: sp.Expr) -> CompiledNum:
    """A step expression as a function of an assignment name -> Num (or number): + * /,
    powers, exp, log, sqrt, Abs, Max, Min, pi, E, rationals."""
    expr = sp.sympify(expr)
    if expr.is_Symbol:
        name = expr.name
        return lambda env: lift(env[name])
    if expr.is_number and not expr.free_symbols:
        c = Num(_const(expr))
        return lambda env: c
    args = [compile_num(x) for x in expr.args]
    if isinstance(expr, (sp.Add, sp.Mul)):
        add = isinstance(expr, sp.Add)

        def fold(env: Mapping[str, Any]) -> Num:
            out = args[0](env)
            for f in args[1:]:
                out = out + f(env) if add else out * f(env)
            return out

        return fold
    if isinstance(expr, sp.Pow):
        base, e = args[0], expr.args[1]
        if e.is_number:
            return lambda env: base(env) ** e
        ef = args[1]
        return lambda env: base(env) ** ef(env)
    unary = {sp.exp: exp, sp.log: log, sp.Abs: abs}
    for kind, fn in unary.items():
        if isinstance(expr, kind):
            a0 = args[0]
            return lambda env, fn=fn: fn(a0(env))
    if isinstance(expr, (sp.Max, sp.Min)):
        ext = NAMES["max"] if isinstance(expr, sp.Max) else NAMES["min"]
        return lambda env: ext(*(f(env) for f in args))
    raise NotImplementedError(f"no interval rule for {type(expr).__name__}: {expr}")
