"""Claims about every size D, by aggregates (issue 42: general forms where the code is general).

A function of x_1, ..., x_D built from sums over the coordinates (a mean, a variance, |Pd|^2,
the layer norm) depends on the coordinates it does not single out only through their *rest
aggregates* R = sum_{i > e} x_i and Q = sum_{i > e} x_i^2 (e explicit coordinates, e <= 2).
Summing a polynomial of degree <= 2 in a coordinate over the rest is linearity of the sum:
sum_{i > e} (a x_i^2 + b x_i + c) = a Q + b R + c (D - e) (:func:`sum_rest`), with D a symbol.
R and Q do not depend on x_1, x_2, so the partial derivatives in x_1, x_2 are those of the
aggregate form (chain rule); by the permutation symmetry of the coordinates the entries
(1, 1) and (1, 2) give every (i, i) and (i, j), i != j. Each identity is then one sympy
identity in a fixed number of symbols, for every D at once.

:func:`aggregate_step` registers such a claim: each identity must simplify to 0 (a nonzero
value at a realised point fails it, naming the identity); the weakened twin is refuted at a
*realised* point, D and R, Q computed from a concrete rational vector (so the point is a real
configuration, R^2 <= (D - e) Q), checked in interval arithmetic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction

import sympy as sp

from verify.proofs.core import Obligation, Verdict
from verify.proofs.interval import Undefined, point_value
from verify.proofs.methods import custom_step

__all__ = ["D", "Q", "R", "X", "X1", "X2", "aggregate_step", "realise", "sum_all", "sum_rest"]

D = sp.Symbol("D", positive=True, integer=True)
X = sp.Symbol("x", real=True)  # a generic coordinate, summed over by sum_rest
X1, X2, R, Q = sp.symbols("x1 x2 R Q", real=True)
_EXPLICIT = (X1, X2)


def sum_rest(expr: sp.Expr, explicit: int = 2, size: sp.Expr = D) -> sp.Expr:
    """sum_{explicit < i <= size} expr(x_i): ``expr`` a polynomial of degree <= 2 in :data:`X`
    whose coefficients do not involve X (a mean, x1, x2, R, Q, D may appear)."""
    poly = sp.Poly(sp.expand(expr), X)
    if poly.degree() > 2:
        raise ValueError(f"sum_rest: degree {poly.degree()} in x (at most 2): {expr}")
    c2, c1, c0 = (poly.coeff_monomial(X**k) for k in (2, 1, 0))
    return c2 * Q + c1 * R + c0 * (size - explicit)


def sum_all(expr: sp.Expr, explicit: int = 2) -> sp.Expr:
    """sum_{i = 1}^{D} expr(x_i): the explicit coordinates x1 (, x2) and the rest."""
    return sum((expr.subs(X, xi) for xi in _EXPLICIT[:explicit]), sp.S.Zero) + sum_rest(
        expr, explicit
    )


def realise(vector: Sequence[Fraction], explicit: int = 2) -> dict[sp.Symbol, Fraction]:
    """The aggregate point of a concrete vector: D its length, x1 (, x2) its first entries,
    R and Q the sums over the rest."""
    rest = vector[explicit:]
    point: dict[sp.Symbol, Fraction] = {D: Fraction(len(vector))}
    point.update(zip(_EXPLICIT[:explicit], vector[:explicit], strict=True))
    point[R] = sum(rest, Fraction(0))
    point[Q] = sum((v * v for v in rest), Fraction(0))
    return point


def _points(
    explicit: int,
    extra: Mapping[sp.Symbol, tuple[int, int]],
    domain: sp.Basic,
    seed: int,
    n: int = 40,
) -> list[dict[sp.Symbol, Fraction]]:
    """Seeded realised points: vectors of length 3..7 with entries in [-3, 3] (halves), each
    extra symbol a rational in its (lo, hi) range; those where ``domain`` holds (exactly)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        vec = [Fraction(rng.randint(-6, 6), 2) for _ in range(rng.randint(3, 7))]
        pt = realise(vec, explicit)
        for s, (lo, hi) in extra.items():
            pt[s] = Fraction(rng.randint(2 * lo, 2 * hi), 2)
        exact = {k: sp.Rational(v.numerator, v.denominator) for k, v in pt.items()}
        if domain.subs(exact) is sp.true:
            out.append(pt)
    return out


def _nonzero_at(
    diff: sp.Expr, points: Sequence[dict[sp.Symbol, Fraction]]
) -> dict[sp.Symbol, Fraction] | None:
    """A point where ``diff`` is certainly nonzero (interval arithmetic), or None."""
    for pt in points:
        try:
            if not point_value(diff, pt).contains_zero():
                return pt
        except Undefined:
            continue
    return None


def _fmt(pt: Mapping[sp.Symbol, Fraction]) -> dict[str, str]:
    return {str(k): str(v) for k, v in sorted(pt.items(), key=lambda kv: str(kv[0]))}


def _is_zero(e: sp.Expr) -> bool:
    for simp in (sp.cancel, sp.simplify):
        e = simp(e)
        if e == 0:
            return True
    return False


def aggregate_step(
    id: str,
    statement: str,
    step: str,
    doc: str,
    claim: str,
    identities: Mapping[str, tuple[sp.Expr, sp.Expr]],
    twin: tuple[str, sp.Expr, sp.Expr],
    *,
    explicit: int = 2,
    extra: Mapping[sp.Symbol, tuple[int, int]] | None = None,
    domain: sp.Basic = sp.true,
    facts: Sequence[str] = (),
    seed: int = 0,
) -> Obligation:
    """A claim for every D: each ``identities`` entry (name -> (lhs, rhs), aggregate forms with
    D symbolic) is an identity; ``twin`` = (text, lhs, rhs) the weakened one, refuted at a
    realised point. ``extra``: the other symbols' (lo, hi) ranges for the points, ``domain``
    a condition they must meet (eps = s^2 - var > 0)."""
    points = _points(explicit, dict(extra or {}), domain, seed)

    def prove() -> Verdict:
        for name, (lhs, rhs) in identities.items():
            if _is_zero(lhs - rhs):
                continue
            pt = _nonzero_at(lhs - rhs, points)
            if pt is not None:
                return Verdict("failed", f"{name}: lhs != rhs at a realised point", _fmt(pt))
            return Verdict("unknown", f"{name}: sympy could not simplify lhs - rhs to 0")
        return Verdict(
            "proved",
            f"sympy, symbolic D (aggregates over {explicit} explicit coordinates): "
            + ", ".join(identities),
        )

    def refute() -> Verdict:
        pt = _nonzero_at(twin[1] - twin[2], points)
        if pt is None:
            return Verdict("not refuted", "the twin held at every realised point tried")
        return Verdict("refuted", "realised point, checked in interval arithmetic", _fmt(pt))

    return custom_step(
        id, statement, step, doc, "sympy", claim, twin[0], prove, refute, facts=facts
    )
