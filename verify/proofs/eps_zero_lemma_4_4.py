"""Lemma 4.4's cube covering as obligations (docs/derivations_eps_zero.md section 4)."""

from __future__ import annotations

import sympy as sp

from verify.proofs import aggregates as agg
from verify.proofs.core import Verdict
from verify.proofs.links import off_event_domain, per_flip_link
from verify.proofs.methods import Use, custom_step, z3_step
from verify.proofs.positions import sum_induction

DOC4 = "docs/derivations_eps_zero.md#4-lemma-44"
L44 = "Lemma 4.4"

# ---- section 4: Lemma 4.4's cube covering


K_SLICE = sp.Symbol("k", positive=True, integer=True)
D_GRAM = sp.Symbol("D", positive=True)
GRAM_DET = 1 - K_SLICE / D_GRAM  # det(I_k - 11^T/D), the claim


def _gram_det() -> Verdict:
    """Every k >= 1: M = I_k - 11^T/D is symmetric, (M 1)_1 = 1 - k/D and (M v)_1 = v_1 for v
    orthogonal to 1 (row 1 against rows 2..k through their aggregates, symbolic k), so M has
    the eigenvalue 1 - k/D on 1 and 1 on its (k - 1)-dimensional complement: det M, the
    product of the eigenvalues of a symmetric matrix, is (1 - k/D) 1^{k-1}. Cross-check:
    sympy's determinant at k = 1..8."""
    m11, m1j = 1 - 1 / D_GRAM, -1 / D_GRAM
    lam = m11 + agg.sum_rest(m1j, 1, K_SLICE)  # (M 1)_1
    mv = (m11 * agg.X1 + agg.sum_rest(m1j * agg.X, 1, K_SLICE)).subs(agg.R, -agg.X1)
    if sp.cancel(mv - agg.X1) != 0:
        return Verdict("failed", "M v != v for v orthogonal to 1")
    if sp.cancel(lam - GRAM_DET) != 0:
        return Verdict("failed", f"the eigenvalue on 1 is {sp.cancel(lam)}, not {GRAM_DET}")
    for kk in range(1, 9):
        g = sp.eye(kk) - sp.ones(kk, kk) / D_GRAM
        if sp.cancel(g.det() - GRAM_DET.subs(K_SLICE, kk)) != 0:
            return Verdict("failed", f"k = {kk}: det = {sp.factor(g.det())}", {"k": str(kk)})
    return Verdict(
        "proved",
        "sympy, symbolic k: M 1 = (1 - k/D) 1, M v = v on 1-perp (aggregates), so det ="
        " 1 - k/D; sympy's det agrees at k = 1..8",
    )


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
    "A^T P A = I_k - 11^T/D has det 1 - k/D for every k >= 1 (symbolic k: eigenvalue 1 - k/D"
    " on 1, 1 on its complement; the determinant of a symmetric matrix is the product of its"
    " eigenvalues)",
    "det = 1 - k/(2D)",
    _gram_det,
    _gram_twin,
)
# d = c + A u moves the first k coordinates (x1, x2 two of them; the rest through R, Q, which
# do not depend on u1, u2): (1/2) Hess_u |Pd|^2 has the entries of A^T P A = I_k - 11^T/D
_m = agg.sum_all(agg.X) / agg.D
_half_hessian = sp.hessian(agg.sum_all((agg.X - _m) ** 2), (agg.X1, agg.X2)) / 2
agg.aggregate_step(
    "lemma_4_4.slice_quadratic",
    L44,
    "Certified slices: explicit slice bound",
    DOC4,
    "for every D >= k >= 2: (1/2) Hess_u |P(c + A u)|^2 = A^T P A = I_k - 11^T/D (entries"
    " (1, 1) and (1, 2); every (i, j) by symmetry) [symbolic D: the other coordinates through"
    " their aggregates]",
    {
        "(1/2) H_11 = 1 - 1/D": (_half_hessian[0, 0], 1 - 1 / agg.D),
        "(1/2) H_12 = -1/D": (_half_hessian[0, 1], -1 / agg.D),
    },
    ("(1/2) H_12 = 0 (the 11^T/D term dropped)", _half_hessian[0, 1], sp.S.Zero),
    facts=("lemma_4_4.gram_det", "axiom.ball_volume", "axiom.union_bound"),
)
wq, qq, Bb, Wsum, Ssum = sp.symbols("w q B W Sigma", real=True)
# per cube: Lemma 4.2's premises on the cube's own (uniform) law, at the common N, k, p
_pb, _pm, _ex = sp.symbols("p_b p_m E", real=True)
_nn, _kk, _pp = sp.symbols("N k p", real=True)
_NEIGHBOURHOOD = _pp * (1 + _nn / (_nn - _kk + 1))  # lemma_4_2.neighbourhood's bound
sum_induction(
    "lemma_4_4.volume_average",
    L44,
    "P_Theta[bad] is the volume average of the per-cube probabilities",
    DOC4,
    terms=(wq, qq, _pb, _pm, _ex),
    # the cube's terms, and at the common N, k, p (in every cube's hypotheses: with no cube
    # there is nothing to bound) the bound <= B
    term_hyps=(
        _nn >= 1,
        _kk >= 0,
        _kk <= _nn,
        _pp >= 0,
        _NEIGHBOURHOOD <= Bb,
        wq >= 0,
        _pb <= _pp,
        _ex >= 0,
        _ex <= _nn * _pp,
        _pm >= 0,
        _pm * (_nn - _kk + 1) <= _ex,
        qq <= _pb + _pm,
        qq <= _NEIGHBOURHOOD,
    ),
    sums={Wsum: wq, Ssum: wq * qq},
    invariant=(Ssum <= Wsum * Bb,),
    final=(sp.Eq(Wsum, 1),),
    concl=sp.Le(Ssum, Bb),
    twin=sp.Le(Ssum, Bb / 2),
    facts=("axiom.total_probability",),
    uses=(
        Use(
            "lemma_4_2.neighbourhood",
            {"N": _nn, "k": _kk, "p": _pp, "p_b": _pb, "p_m": _pm, "E": _ex, "P": qq},
            qq <= _NEIGHBOURHOOD,
        ),
    ),
    note="any number of cubes, each of volume share w_j >= 0 (summing to 1) and per-cube"
    " probability q_j at most the Lemma 4.2 bound p (1 + N/(N - k + 1)) <= B"
    " (lemma_4_2.neighbourhood on the cube's law, a checked use at each cube)",
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
        *off_event_domain(_N, _w, _C, _t, _b1, _b2),
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
