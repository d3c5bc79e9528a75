"""Rigorous interval arithmetic on arb endpoints, sympy expressions compiled to it, and the
branch-and-bound that proves ``f >= 0`` (or ``> 0``) on a compact box.

An :class:`Iv` is a pair of exact arb numbers [lo, hi] enclosing a set of reals. Every operation
evaluates arb on the (exact) endpoints and keeps the outer end of each result ball
(``.lower()`` / ``.upper()``), so an interval that touches 0 keeps 0 exactly: a bound that holds
with equality at a corner (e^0 = 1) can still be proven, which plain midpoint-radius balls
cannot do (the union of the balls 0 and 1 has lower end -9e-10 at arb's 30-bit radii).

Branch and bound (:func:`prove_nonnegative`): a box is proven when the enclosure of f over it
has lower end >= 0; when some partial derivative has a proven sign on the box, f is monotone in
that variable there (mean value theorem, axiom ``axiom.mean_value``) and the box is replaced by
the face where f is smallest; otherwise the box is split along its widest side. A box whose
midpoint gives f < 0 (proven) is a counterexample.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from flint import arb, ctx, fmpq

__all__ = ["Iv", "compile_expr", "find_violation", "point_value", "prove_nonnegative"]

ctx.prec = 128


def _exact(x: object) -> arb:
    if isinstance(x, arb):
        return x
    if isinstance(x, Fraction):
        return arb(fmpq(x.numerator, x.denominator))
    if isinstance(x, int):
        return arb(x)
    return arb(fmpq(*Fraction(x).as_integer_ratio()))


def _lo(x: arb) -> arb:
    return x.lower()


def _hi(x: arb) -> arb:
    return x.upper()


def _min(xs: Sequence[arb]) -> arb:
    """The first smallest (builtin min: keeps the first x with no later x < it)."""
    return min(xs)


def _max(xs: Sequence[arb]) -> arb:
    """The first largest (builtin max: keeps the first x with no later x > it)."""
    return max(xs)


class Undefined(ArithmeticError):
    """The enclosure is unbounded or leaves the domain (division by an interval with 0,
    log of an interval reaching 0, ...): the box decides nothing."""


@dataclass(frozen=True, slots=True)
class Iv:
    """The interval [lo, hi] with exact arb endpoints."""

    lo: arb
    hi: arb

    @staticmethod
    def point(x: object) -> Iv:
        a = _exact(x)
        return Iv(_lo(a), _hi(a))

    @staticmethod
    def of(lo: object, hi: object) -> Iv:
        return Iv(_lo(_exact(lo)), _hi(_exact(hi)))

    def __add__(self, o: Iv) -> Iv:
        return Iv((self.lo + o.lo).lower(), (self.hi + o.hi).upper())

    def __neg__(self) -> Iv:
        return Iv(-self.hi, -self.lo)

    def __mul__(self, o: Iv) -> Iv:
        # the outer ends of the four corner products' balls (the hot path: no helper calls)
        a, b, c, d = self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi
        return Iv(
            min(a.lower(), b.lower(), c.lower(), d.lower()),
            max(a.upper(), b.upper(), c.upper(), d.upper()),
        )

    def inv(self) -> Iv:
        if not (self.lo > 0 or self.hi < 0):
            raise Undefined("division by an interval containing 0")
        return Iv(_lo(1 / self.hi), _hi(1 / self.lo))

    def monotone(self, f: Callable[[arb], arb], increasing: bool = True) -> Iv:
        a, b = f(self.lo), f(self.hi)
        if not (a.is_finite() and b.is_finite()):
            raise Undefined("non-finite value")
        return Iv(a.lower(), b.upper()) if increasing else Iv(b.lower(), a.upper())

    def ipow(self, n: int) -> Iv:
        if n < 0:
            return self.ipow(-n).inv()
        if n == 0:
            return Iv.point(1)
        if n % 2 == 1 or self.lo >= 0:
            return self.monotone(lambda x: x**n)
        if self.hi <= 0:
            return self.monotone(lambda x: x**n, increasing=False)
        top = _max([_hi(self.lo**n), _hi(self.hi**n)])
        return Iv(arb(0), top)

    def rpow(self, e: arb, positive: bool) -> Iv:
        """x^e for x >= 0 and a constant real exponent e (sign given)."""
        if self.lo < 0:
            raise Undefined("real power of a negative interval")
        if self.lo == 0 and not positive:
            raise Undefined("negative power of an interval reaching 0")

        def f(x: arb) -> arb:
            return arb(0) if x == 0 else (x.log() * e).exp()

        return self.monotone(f, increasing=positive)

    def abs(self) -> Iv:
        if self.lo >= 0:
            return self
        if self.hi <= 0:
            return -self
        return Iv(arb(0), _max([-self.lo, self.hi]))

    def max(self, o: Iv) -> Iv:
        return Iv(_max([self.lo, o.lo]), _max([self.hi, o.hi]))

    def min(self, o: Iv) -> Iv:
        return Iv(_min([self.lo, o.lo]), _min([self.hi, o.hi]))

    def contains_zero(self) -> bool:
        return bool(self.lo <= 0 and self.hi >= 0)


def _sqrt(x: Iv) -> Iv:
    if x.lo < 0:
        raise Undefined("sqrt of a negative interval")
    return x.monotone(lambda a: a.sqrt())


def _log(x: Iv) -> Iv:
    if not x.lo > 0:
        raise Undefined("log of an interval reaching 0")
    return x.monotone(lambda a: a.log())


def _gamma(x: Iv) -> Iv:
    if x.lo == x.hi:
        return Iv.of(x.lo.gamma(), x.lo.gamma())
    if x.lo >= 2:  # Gamma is increasing on [1.4616..., inf)
        return x.monotone(lambda a: a.gamma())
    raise Undefined("Gamma on a wide interval below 2")


Compiled = Callable[[Mapping[sp.Symbol, Iv]], Iv]


def compile_expr(expr: sp.Expr) -> Compiled:
    """A function of an assignment symbol -> :class:`Iv` returning an enclosure of ``expr``.
    Supported: + * /, integer and constant real powers, exp, log, sqrt, Abs, Max, Min, tanh,
    gamma, pi, E, rationals."""
    expr = sp.sympify(expr)
    if expr.is_Symbol:
        return lambda env: env[expr]
    if expr.is_Integer or expr.is_Rational:
        c = Iv.point(Fraction(int(expr.p), int(expr.q)))
        return lambda env: c
    if expr is sp.pi:
        c = Iv.of(arb.pi(), arb.pi())
        return lambda env: c
    if expr is sp.E:
        c = Iv.of(arb(1).exp(), arb(1).exp())
        return lambda env: c
    if expr.is_Float:
        c = Iv.point(Fraction(str(expr)))
        return lambda env: c
    args = [compile_expr(a) for a in expr.args]
    if isinstance(expr, sp.Add):

        def add(env: Mapping[sp.Symbol, Iv]) -> Iv:
            out = args[0](env)
            for f in args[1:]:
                out = out + f(env)
            return out

        return add
    if isinstance(expr, sp.Mul):

        def mul(env: Mapping[sp.Symbol, Iv]) -> Iv:
            out = args[0](env)
            for f in args[1:]:
                out = out * f(env)
            return out

        return mul
    if isinstance(expr, sp.Pow):
        base, e = args[0], expr.args[1]
        if e.is_Integer:
            n = int(e)
            return lambda env: base(env).ipow(n)
        if e == sp.Rational(1, 2):
            return lambda env: _sqrt(base(env))
        if e == sp.Rational(-1, 2):
            return lambda env: _sqrt(base(env)).inv()
        if e.is_number:
            ea = arb(str(sp.N(e, 60))) if not e.is_Rational else arb(fmpq(int(e.p), int(e.q)))
            pos = bool(e > 0)
            return lambda env: base(env).rpow(ea, pos)
        ef = args[1]
        return lambda env: _exp(ef(env) * _log(base(env)))
    unary = {
        sp.exp: _exp,
        sp.log: _log,
        sp.Abs: Iv.abs,
        sp.tanh: lambda x: x.monotone(lambda a: a.tanh()),
        sp.gamma: _gamma,
    }
    for kind, fn in unary.items():
        if isinstance(expr, kind):
            a0 = args[0]
            return lambda env, fn=fn: fn(a0(env))
    if isinstance(expr, (sp.Max, sp.Min)):
        pick = Iv.max if isinstance(expr, sp.Max) else Iv.min

        def mm(env: Mapping[sp.Symbol, Iv]) -> Iv:
            out = args[0](env)
            for f in args[1:]:
                out = pick(out, f(env))
            return out

        return mm
    raise NotImplementedError(f"no interval rule for {type(expr).__name__}: {expr}")


def _exp(x: Iv) -> Iv:
    return x.monotone(lambda a: a.exp())


def point_value(expr: sp.Expr, point: Mapping[sp.Symbol, object]) -> Iv:
    """Enclosure of ``expr`` at a point (values: ints, Fractions, floats read exactly)."""
    env = {s: Iv.point(v) for s, v in point.items()}
    return compile_expr(expr)(env)


Box = dict  # symbol -> (Fraction lo, Fraction hi)


def _env(box: Box) -> dict[sp.Symbol, Iv]:
    return {s: Iv.of(_exact(lo), _exact(hi)) for s, (lo, hi) in box.items()}


@dataclass
class BnbResult:
    """``proved``: every box closed; ``counterexample``: a point with f < 0 (proven);
    otherwise the budget ran out (unknown)."""

    proved: bool
    boxes: int
    counterexample: dict | None = None


class _Faces:
    """f and its gradient with some variables fixed at face values, simplified by sympy (a
    face often removes a cancellation that interval arithmetic cannot see: e^{2R} / e^{2R})."""

    def __init__(self, f: sp.Expr, syms: list[sp.Symbol]) -> None:
        self.f, self.syms = f, syms
        self.cache: dict[tuple, tuple[Compiled, dict[sp.Symbol, Compiled]]] = {}

    def get(self, fixed: tuple) -> tuple[Compiled, dict[sp.Symbol, Compiled]]:
        if fixed not in self.cache:
            g = self.f
            if fixed:
                g = sp.simplify(
                    g.subs({s: sp.Rational(v.numerator, v.denominator) for s, v in fixed})
                )
            free = [s for s in self.syms if s not in dict(fixed)]
            self.cache[fixed] = (compile_expr(g), {s: compile_expr(sp.diff(g, s)) for s in free})
        return self.cache[fixed]


def prove_nonnegative(
    f: sp.Expr, box: Mapping[sp.Symbol, tuple], *, strict: bool = False, max_boxes: int = 20000
) -> BnbResult:
    """Prove f >= 0 (f > 0 with ``strict``) on the box {lo <= s <= hi}: branch and bound with
    the monotone-face reduction (module doc)."""
    syms = list(box)
    for sym, (lo, hi) in box.items():
        if Fraction(lo) > Fraction(hi):
            raise ValueError(f"box: {sym} in [{lo}, {hi}] has lo > hi (an empty box)")
    faces = _Faces(sp.sympify(f), syms)
    stack = [{s: (Fraction(lo), Fraction(hi)) for s, (lo, hi) in box.items()}]
    n = 0
    while stack:
        b = stack.pop()
        n += 1
        if n > max_boxes:
            return BnbResult(False, n)
        fixed = tuple((s, lo) for s, (lo, hi) in b.items() if lo == hi)
        fc, grads = faces.get(fixed)
        env = _env(b)
        try:
            val = fc(env)
            if (val.lo > 0) if strict else (val.lo >= 0):
                continue
        except Undefined:
            pass
        mid = {s: (lo + hi) / 2 for s, (lo, hi) in b.items()}
        try:
            mv = fc({s: Iv.point(v) for s, v in mid.items()})
            if (mv.hi <= 0) if strict else (mv.hi < 0):
                return BnbResult(False, n, counterexample=mid)
        except Undefined:
            pass
        reduced = False
        for s, g_c in grads.items():
            lo, hi = b[s]
            if lo == hi:
                continue
            try:
                g = g_c(env)
            except Undefined:
                continue
            if g.lo >= 0 or g.hi <= 0:
                face = lo if g.lo >= 0 else hi
                b = {**b, s: (face, face)}
                reduced = True
                break
        if reduced:
            stack.append(b)
            continue
        widths = {s: hi - lo for s, (lo, hi) in b.items()}
        s = max(syms, key=lambda t: widths[t])
        if widths[s] == 0:
            return BnbResult(False, n)  # a point that could not be decided
        lo, hi = b[s]
        m = (lo + hi) / 2
        stack.append({**b, s: (lo, m)})
        stack.append({**b, s: (m, hi)})
    return BnbResult(True, n)


def find_violation(
    f: sp.Expr, box: Mapping[sp.Symbol, tuple], *, strict: bool = False, grid: int = 9
) -> dict | None:
    """A point of the box where f < 0 (f <= 0 with ``strict``) is proven, from a regular grid
    (corners included), or None."""
    import itertools

    for sym, (lo, hi) in box.items():
        if Fraction(lo) > Fraction(hi):
            raise ValueError(f"box: {sym} in [{lo}, {hi}] has lo > hi (an empty box)")
    fc = compile_expr(f)
    syms = list(box)
    axes = [
        [Fraction(lo) + (Fraction(hi) - Fraction(lo)) * Fraction(i, grid - 1) for i in range(grid)]
        for lo, hi in box.values()
    ]
    for pt in itertools.product(*axes):
        env = {s: Iv.point(v) for s, v in zip(syms, pt, strict=True)}
        try:
            v = fc(env)
        except Undefined:
            continue
        if (v.hi <= 0) if strict else (v.hi < 0):
            return dict(zip(syms, pt, strict=True))
    return None


def to_float(x: Iv) -> float:
    """The midpoint of an interval as a float (for messages)."""
    return float(math.fsum([float(x.lo.mid()), float(x.hi.mid())]) / 2)
