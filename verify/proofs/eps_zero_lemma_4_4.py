"""Lemma 4.4's cube covering as obligations (docs/derivations_eps_zero.md section 4)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.links import per_flip_link
from verify.proofs.methods import Use, custom_step, sympy_identity, z3_step

DOC4 = "docs/derivations_eps_zero.md#4-lemma-44"
L44 = "Lemma 4.4"

# ---- section 4: Lemma 4.4's cube covering


def _gram_det() -> Verdict:
    dd = sp.symbols("D", positive=True)
    for kk in range(1, 4):
        g = sp.eye(kk) - sp.ones(kk, kk) / dd
        if sp.simplify(g.det() - (1 - sp.Rational(kk) / dd)) != 0:
            return Verdict("failed", f"k = {kk}")
    return Verdict("proved", "sympy: det(I_k - 11^T/D) = 1 - k/D for k = 1, 2, 3")


def _gram_twin() -> Verdict:
    g = sp.eye(2) - sp.ones(2, 2) / 4
    if g.det() != 1 - sp.Rational(2, 4 * 2):
        return Verdict("refuted", f"k = 2, D = 4: det = {g.det()} != 3/4", {"k": "2", "D": "4"})
    return Verdict("not refuted")


custom_step(
    "lemma_4_4.gram_det",
    L44,
    "Certified slices: explicit slice bound",
    DOC4,
    "sympy",
    "A^T P A = I_k - 11^T/D has det 1 - k/D (k = 1, 2, 3)",
    "det = 1 - k/(2D)",
    _gram_det,
    _gram_twin,
)
u1, u2, c1, c2, c3, c4 = sp.symbols("u1 u2 c1 c2 c3 c4", real=True)
_d = sp.Matrix([c1 + u1, c2 + u2, c3, c4])
_pd = _d - sp.ones(4, 1) * sum(_d) / 4
_q = (_pd.T * _pd)[0]
sympy_identity(
    "lemma_4_4.slice_quadratic",
    L44,
    "Certified slices: explicit slice bound",
    DOC4,
    sp.hessian(_q, (u1, u2))[0, 0] / 2 + 10 * sp.hessian(_q, (u1, u2))[0, 1] / 2,
    (1 - sp.Rational(1, 4)) + 10 * (-sp.Rational(1, 4)),
    (1 - sp.Rational(1, 4)),
    facts=("lemma_4_4.gram_det", "axiom.ball_volume", "axiom.union_bound"),
    positive=False,
)
ws, pss, Bb = sp.symbols("w1:4"), sp.symbols("q1:4"), sp.symbols("B", real=True)
z3_step(
    "lemma_4_4.volume_average",
    L44,
    "P_Theta[bad] is the volume average of the per-cube probabilities",
    DOC4,
    [*(wi >= 0 for wi in ws), sp.Eq(sum(ws), 1), *(qi <= Bb for qi in pss)],
    sp.Le(sum(wi * qi for wi, qi in zip(ws, pss, strict=True)), Bb),
    sp.Le(sum(wi * qi for wi, qi in zip(ws, pss, strict=True)), Bb / 2),
    facts=("axiom.total_probability", "lemma_4_2.neighbourhood"),
    note="three cubes; each per-cube probability is at most the Lemma 4.2 bound",
)
Bc, rc, nc, xc = sp.symbols("B rho n x", real=True)
z3_step(
    "lemma_4_4.cube_count",
    L44,
    "covering Theta with cubes of side 2 rho",
    DOC4,
    [Bc > 0, rc > 0, nc >= Bc / rc, nc < Bc / rc + 1, xc >= -Bc, xc <= Bc],
    sp.Le(xc, -Bc + 2 * rc * nc),
    sp.Le(xc, -Bc + rc * nc),
    note="n = ceil(B/rho) cubes [-B + 2 rho j, -B + 2 rho (j + 1)], j < n, per axis reach past"
    " every x in [-B, B], so ceil(B/rho)^M cubes of side 2 rho cover Theta = [-B, B]^M"
    " ((B/rho)^M is no count when B/rho is not an integer)",
)
TT, T2 = sp.symbols("T T'", real=True)
_N, _w, _C, _t, _b1, _b2 = sp.symbols("N w C t beta beta'", real=True)
_X = _w * _C * _t**2 / _N  # Cor 4.3's flip bound on the good event
_FLIP_HYPS, _FLIP_USES, _PER_FLIP_AT = per_flip_link(_N, _w, _C, _b1, _b2, TT - T2)
z3_step(
    "lemma_4_4.sign_kept",
    L44,
    "The sensitivity event, directly",
    DOC4,
    [
        _N >= 1,
        _w >= 0,
        _C >= 0,
        _t >= 1,
        _b1 >= 1,
        _b1 <= _t,
        _b2 >= 1,
        _b2 <= _t,
        *_FLIP_HYPS,
        TT * T2 <= 0,
        sp.Abs(TT - T2) <= _X,
    ],
    sp.Le(sp.Abs(TT), _X),
    sp.Le(sp.Abs(TT), _X / 2),
    uses=(
        *_FLIP_USES,
        Use("cor_4_3.good_event", {**_PER_FLIP_AT, "t": _t}, sp.Abs(TT - T2) <= _X),
    ),
    note="a neighbour with the other sign forces |T(x)| <= ||w|| C_infl t^2/N (Cor 4.3's flip"
    " bound on the good event, from the per-flip bound of Lemma 2.9)",
)
om_c, aa = sp.symbols("c a", real=True)
z3_step(
    "lemma_4_4.bias_uniform",
    L44,
    "The sensitivity event, directly",
    DOC4,
    [aa >= 0],
    sp.Le(sp.Max(sp.Min(-om_c + aa, 1) - sp.Max(-om_c - aa, -1), 0) / 2, aa),
    sp.Le(sp.Max(sp.Min(-om_c + aa, 1) - sp.Max(-om_c - aa, -1), 0) / 2, aa / 2),
    note="omega ~ Unif[-1, 1]: P[|c + omega| < a] is the length of an interval over 2",
)
