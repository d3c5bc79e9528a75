"""The small-ball constant's derivation steps as obligations (docs/derivations_eps_zero.md
section 1)."""

from __future__ import annotations

import sympy as sp

from verify.proofs import aggregates as agg
from verify.proofs.methods import Use, sympy_identity, z3_step

__all__ = ["C_SB"]

DOC1 = "docs/derivations_eps_zero.md#1-small-ball-bound-sb"
SB = "Small-ball bound"

# ---- section 1: the small-ball constant
_m = agg.sum_all(agg.X, 0) / agg.D
agg.aggregate_step(
    "small_ball.variance_projection",
    SB,
    "var(d) = |Pd|^2/D",
    DOC1,
    "for every D >= 1: var(d) = sum d_i^2/D - mean(d)^2 = |Pd|^2/D = sum (d_i - mean)^2/D"
    " [symbolic D: the sums over d_1..d_D as their aggregates R = sum d_i, Q = sum d_i^2]",
    {"var(d) = |Pd|^2/D": (agg.sum_all(agg.X**2, 0) / agg.D - _m**2,
                           agg.sum_all((agg.X - _m) ** 2, 0) / agg.D)},
    ("var(d) = |Pd|^2/(2D)", agg.sum_all(agg.X**2, 0) / agg.D - _m**2,
     agg.sum_all((agg.X - _m) ** 2, 0) / (2 * agg.D)),
    explicit=0,
)  # fmt: skip
x, t1, t2, a, D = sp.symbols("x t1 t2 a D", real=True)
z3_step(
    "small_ball.line_segment",
    SB,
    "a line parallel to 1 meets the cube in a segment of length <= a sqrt(D)",
    DOC1,
    [
        a > 0,
        D >= 1,
        x + t1 / sp.sqrt(D) >= 0,
        x + t1 / sp.sqrt(D) <= a,
        x + t2 / sp.sqrt(D) >= 0,
        x + t2 / sp.sqrt(D) <= a,
    ],
    sp.Le(sp.Abs(t1 - t2), a * sp.sqrt(D)),
    sp.Le(sp.Abs(t1 - t2), a * sp.sqrt(D) / 2),
    note="one coordinate b_i = u_i + t/sqrt(D) of the cube confines t",
)
dens, ad, ln = sp.symbols("density a_D len", real=True)
_chord = [  # the line x + t/sqrt(D) meets the cube [0, a] between t1 and t2
    x + t1 / sp.sqrt(D) >= 0,
    x + t1 / sp.sqrt(D) <= a,
    x + t2 / sp.sqrt(D) >= 0,
    x + t2 / sp.sqrt(D) <= a,
]
z3_step(
    "small_ball.density",
    SB,
    "Pb has a density on the (D-1)-dim hyperplane bounded by a^-D a sqrt(D)",
    DOC1,
    [
        a > 0,
        D >= 1,
        ad > 0,
        *_chord,
        sp.Eq(ln, sp.Abs(t1 - t2)),
        sp.Abs(t1 - t2) <= a * sp.sqrt(D),
        dens <= ad * ln,
    ],
    sp.Le(dens, sp.sqrt(D) * ad * a),
    sp.Le(dens, sp.sqrt(D) * ad * a / 2),
    uses=(
        Use(
            "small_ball.line_segment",
            {"x": x, "t1": t1, "t2": t2, "a": a, "D": D},
            sp.Abs(t1 - t2) <= a * sp.sqrt(D),
        ),
        Use("axiom.fubini_density", {"dens": dens, "lint": ad * ln}, dens <= ad * ln),
    ),
    note="a_D = a^{-D}, the uniform density on the cube: the line through the point meets the"
    " cube in a chord of length len, so int_line f = a_D len (Fubini)",
)
Dp, ap, dl = sp.symbols("D a delta", positive=True)
k = Dp - 1
Vk = sp.pi ** (k / 2) / sp.gamma(k / 2 + 1)
C_SB = sp.sqrt(Dp) * Vk * Dp ** (k / 2) * ap ** (-k)
sympy_identity(
    "small_ball.compose",
    SB,
    "P[var(d) <= delta] <= C_SB delta^{(D-1)/2}",
    DOC1,
    sp.sqrt(Dp) * ap ** (-Dp) * ap * Vk * sp.sqrt(Dp * dl) ** k,
    C_SB * dl ** (k / 2),
    C_SB * dl ** (k / 2) / sp.sqrt(Dp),
    facts=("small_ball.density", "small_ball.variance_projection", "axiom.ball_volume"),
)
var, s = sp.symbols("var s", real=True)
z3_step(
    "small_ball.z_tail",
    SB,
    "At eps = 0: P[z > s] <= C_SB s^{-(D-1)}",
    DOC1,
    [var > 0, s > 0, var ** sp.Rational(-1, 2) > s],
    sp.Lt(var, s**-2),
    sp.Lt(var, s**-2 / 2),
    facts=("small_ball.compose",),
    note="z = var^{-1/2} > s iff var < s^{-2}; then (SB) at delta = s^{-2}",
)
