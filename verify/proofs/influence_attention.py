"""Lemma 2.9's attention steps (step 3: softmax, logit changes, the two positions) as obligations
(docs/derivations.md#lemma-29) (symbols:
:mod:`verify.proofs.influence_terms`)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.exp_substitution import exp_step
from verify.proofs.influence_terms import (
    ATT_N_A,
    ATT_N_B,
    ATT_OTHER_A,
    ATT_OTHER_B,
    E,
    G_k,
    G_q,
    K,
    Q,
    S,
    V,
    Y,
    a,
    b,
    bk,
    bq,
    k_bar,
    q_bar,
    sd,
    v_c,
)
from verify.proofs.methods import Use, sympy_identity, z3_step
from verify.proofs.positions import INSTANCE_SIZE, SIZE, sum_induction, unroll

ST = "Lemma 2.9"
DOC = "docs/derivations.md#lemma-29"

p, qq, c, zu, zv, z, z2, tau, tau2, w = sp.symbols("p q c z_u z_v z z' tau tau' w", real=True)
rho, H, d, e = sp.symbols("rho H d e", real=True)

# ---- step 3: attention, over S positions (S a symbol: sums over j = 1..S)
j_, i_ = sp.symbols("j i", integer=True, positive=True)
s_, t_ = sp.IndexedBase("s", real=True), sp.IndexedBase("t", real=True)
shift = sp.Symbol("epsilon", real=True)


def _partition(along: sp.Expr) -> sp.Expr:
    """sum_i e^{s_i + along t_i} over the S positions."""
    return sp.Sum(sp.exp(s_[i_] + along * t_[i_]), (i_, 1, SIZE))


_pj = sp.exp(s_[j_]) / _partition(0)
sympy_identity(
    "lemma_2_9.softmax_derivative",
    ST,
    "Step 3: softmax, dp = (diag p - p p^T) ds",
    DOC,
    sp.diff(sp.exp(s_[j_] + shift * t_[j_]) / _partition(shift), shift).subs(shift, 0),
    _pj * (t_[j_] - sp.Sum(sp.exp(s_[i_]) * t_[i_], (i_, 1, SIZE)) / _partition(0)),
    _pj * t_[j_],
    instance=(INSTANCE_SIZE, lambda e: unroll(e.subs(j_, 1), INSTANCE_SIZE)),
)
t1 = sp.Symbol("t1", real=True)
pj, tj, m_ = sp.symbols("p t m", real=True)
sp_, sa_, sm_, sdp_ = sp.symbols("P A M sum_dp", real=True)
sum_induction(
    "lemma_2_9.softmax_dp_l1",
    ST,
    "Step 3: softmax, ||dp||_1 <= 2 sum_j p_j |ds_j|",
    DOC,
    terms=(pj, tj),
    term_hyps=(pj >= 0,),
    sums={sp_: pj, sa_: pj * sp.Abs(tj), sm_: pj * tj, sdp_: sp.Abs(pj * (tj - m_))},
    invariant=(sdp_ <= sa_ + sp.Abs(m_) * sp_, sp.Abs(sm_) <= sa_, sp_ >= 0),
    final=(sp.Eq(sp_, 1), sp.Eq(m_, sm_)),
    concl=sp.Le(sdp_, 2 * sa_),
    twin=sp.Le(sdp_, sa_),
    facts=("lemma_2_9.softmax_derivative", "axiom.triangle"),
    note="t = ds, dp_j = p_j (t_j - m) (softmax_derivative), m = sum_j p_j t_j",
)
sa, sm, sdp = sp.symbols("A m sum_dp", real=True)
z3_step(
    "lemma_2_9.softmax_dp_l1_any_s",
    ST,
    "Step 3: softmax, ||dp||_1 <= 2 sum_j p_j |ds_j|",
    DOC,
    [sa >= 0, sp.Abs(sm) <= sa, sdp >= 0, sdp <= sa + sp.Abs(sm)],
    sp.Le(sdp, 2 * sa),
    sp.Le(sdp, sa),
    facts=("lemma_2_9.softmax_derivative", "axiom.triangle"),
    note="any S: A = sum_j p_j |ds_j| >= |m|, m = p . ds (triangle), and"
    " sum_j |p_j (ds_j - m)| <= A + |m| sum_j p_j (triangle)",
)
u_, wsum, big_e = sp.symbols("u w E", real=True)
z3_step(
    "lemma_2_9.softmax_weight",
    ST,
    "Step 3: softmax, p_j <= pi := 1/(1 + (S-1) e^{-2R})",
    DOC,
    [
        S >= 1,
        big_e >= 1,
        u_ > 0,
        u_ * u_ <= big_e,
        wsum * u_ >= 0,
        wsum >= (S - 1) / sp.sqrt(big_e),
    ],
    sp.Le(u_ / (u_ + wsum), 1 / (1 + (S - 1) / big_e)),
    sp.Le(u_ / (u_ + wsum), 1 / (2 * (1 + (S - 1) / big_e))),
    facts=("lemma_2_9.logit_bound",),
    note="substitution E = e^{2R}, u = e^{s_j} <= e^R, w = sum_{i != j} e^{s_i} >= (S-1) e^{-R}",
)
R, sig = sp.symbols("R sigma", real=True)
exp_step(
    "lemma_2_9.softmax_weight_simple",
    ST,
    "Step 3: softmax, pi <= e^{2R}/S",
    DOC,
    [R >= 0, sig >= 0, sig <= 1],
    sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R)),
    sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R) / 2),
    {big_e: (R, 2)},
    facts=("lemma_2_9.softmax_weight",),
    note="sigma = 1/S in (0, 1]; the claim times S; every R = q k/sqrt(d_h) >= 0",
)
s0, s1_, tt_ = sp.symbols("s_0 s_1 t", real=True)
_R = q_bar * k_bar / sd  # R, lemma_2_9.logit_bound
_ends = [(s0, *sp.symbols("n_q0 n_k0", real=True)), (s1_, *sp.symbols("n_q1 n_k1", real=True))]
z3_step(
    "lemma_2_9.segment_logits",
    ST,
    "Step 3: softmax, every logit on the straight logit path stays in [-R, R]",
    DOC,
    [
        sd > 0,
        *(x >= 0 for x in (Y, Q, K, bq, bk)),
        tt_ >= 0,
        tt_ <= 1,
        *(
            h
            for sj, nqj, nkj in _ends
            for h in (
                nqj >= 0,
                nkj >= 0,
                nqj <= Q * Y + bq,
                nkj <= K * Y + bk,
                sp.Abs(sj) * sd <= nqj * nkj,
                sp.Abs(sj) <= _R,
            )
        ),
    ],
    sp.Le(sp.Abs(s0 + tt_ * (s1_ - s0)), _R),
    sp.Le(sp.Abs(s0 + tt_ * (s1_ - s0)), _R / 2),
    uses=tuple(
        Use(
            "lemma_2_9.logit_bound",
            {**{x.name: x for x in (sd, Y, Q, K, bq, bk)}, "s": sj, "n_q": nqj, "n_k": nkj},
            sp.Abs(sj) <= _R,
        )
        for sj, nqj, nkj in _ends
    ),
    note="s + t ds with both endpoints in [-R, R], R = q k/sqrt(d_h) (logit_bound at each end;"
    " the box is convex)",
)
z3_step(
    "lemma_2_9.softmax_weight_simple_all_r",
    ST,
    "Step 3: softmax, pi <= e^{2R}/S",
    DOC,
    [S >= 1, big_e >= 1],
    sp.Le(1 / (1 + (S - 1) / big_e), big_e / S),
    sp.Le(1 / (1 + (S - 1) / big_e), big_e / (2 * S)),
    facts=("lemma_2_9.softmax_weight_simple",),
    note="every R >= 0 by the substitution E = e^{2R} >= 1 (the exp form: the step it cites)",
)
qn, kn, dq, dk, kp = sp.symbols("n_q n_k dq dk n_k'", real=True)
z3_step(
    "lemma_2_9.logit_change",
    ST,
    "Step 3: logit changes, |ds_mj| <= (||dq_m|| k + q ||dk_j||)/sqrt(d_h)",
    DOC,
    [
        sd > 0,
        dq >= 0,
        dk >= 0,
        kp >= 0,
        qn >= 0,
        kp <= k_bar,
        qn <= q_bar,
        Y >= 0,
        Q >= 0,
        K >= 0,
        bq >= 0,
        bk >= 0,
        t1 * sd <= dq * kp + qn * dk,
        -t1 * sd <= dq * kp + qn * dk,
    ],
    sp.Le(sp.Abs(t1), (dq * k_bar + q_bar * dk) / sd),
    sp.Le(sp.Abs(t1), (dq * k_bar + q_bar * dk) / (2 * sd)),
    facts=("lemma_3_1.logit_identity", "axiom.cauchy_schwarz"),
)
v_, w_, r_, pp_ = (sp.IndexedBase(n, real=True) for n in ("v", "v'", "p'", "p"))
bv = sp.Symbol("b_v", real=True)


def _sum(e: sp.Expr) -> sp.Expr:
    return sp.Sum(e, (j_, 1, SIZE))


sympy_identity(
    "lemma_2_9.attention_split",
    ST,
    "Step 3: the change of o_m splits as sum p dv + sum dp (v' - b_v)",
    DOC,
    _sum(r_[j_] * w_[j_]) - _sum(pp_[j_] * v_[j_]),
    _sum(pp_[j_] * (w_[j_] - v_[j_]))
    + _sum((r_[j_] - pp_[j_]) * (w_[j_] - bv))
    + bv * (_sum(r_[j_]) - _sum(pp_[j_])),
    _sum(pp_[j_] * (w_[j_] - v_[j_])),
    positive=False,
    instance=(INSTANCE_SIZE, lambda e: unroll(e, INSTANCE_SIZE)),
)
pn, val, rew = sp.symbols("p_n val rew", real=True)
_coef = [
    S >= 1,
    E >= 1,
    pn >= 0,
    pn <= 1,
    pn * S <= E,
    V >= 0,
    Y >= 0,
    Q >= 0,
    K >= 0,
    bq >= 0,
    bk >= 0,
    sd > 0,
    a >= 0,
    b >= 0,
]
_PI = 1 / (1 + (S - 1) / E)  # pi, the softmax weight's bound in E = e^{2R}
_pn_u, _pn_w = sp.symbols("u_n w_n", real=True)  # e^{s_n}, sum_{i != n} e^{s_i}
z3_step(
    "lemma_2_9.other_position",
    ST,
    "Step 3: at another position m != n",
    DOC,
    [
        *(h for h in _coef if h != (pn * S <= E)),
        # p_n = u/(u + w) <= pi (softmax_weight) <= E/S (softmax_weight_simple_all_r)
        _pn_u > 0,
        _pn_u * _pn_u <= E,
        _pn_w * _pn_u >= 0,
        _pn_w >= (S - 1) / sp.sqrt(E),
        pn * (_pn_u + _pn_w) <= _pn_u,  # p_n = u/(u + w)
        _pn_u / (_pn_u + _pn_w) <= _PI,
        _PI <= E / S,
        val <= pn * V * a + (1 - pn) * V * b / S,
        rew <= 2 * v_c * (G_q * b / S + G_k * (pn * a + (1 - pn) * b / S)),
    ],
    sp.Le(S * (val + rew), ATT_OTHER_B * b + ATT_OTHER_A * a),
    sp.Le(S * (val + rew), ATT_OTHER_B * b + ATT_OTHER_A.subs(E, 1) * a),
    uses=(
        Use(
            "lemma_2_9.softmax_weight",
            {"S": S, "E": E, "u": _pn_u, "w": _pn_w},
            _pn_u / (_pn_u + _pn_w) <= _PI,
        ),
        Use("lemma_2_9.softmax_weight_simple_all_r", {"S": S, "E": E}, _PI <= E / S),
    ),
    facts=(
        "lemma_2_9.attention_split",
        "lemma_2_9.softmax_dp_l1",
        "lemma_2_9.softmax_weight_simple",
        "lemma_2_9.logit_change",
        "axiom.triangle",
        "axiom.mean_value",
    ),
    note="E = e^{2R} bounds S p_mn along the logit path",
)
rng_ = sp.symbols("range", real=True)
# sqrt(d_h) times the range of the logit changes: the pairs (i, j) off n, the pair (n, j)
_PAIRS = sp.Max(
    2 * Q * a * k_bar + 2 * q_bar * K * b / S,
    2 * Q * a * k_bar + q_bar * K * a + q_bar * K * b / S,
)
_RANGE = 2 * Q * a * k_bar + q_bar * K * a + 2 * q_bar * K * b
z3_step(
    "lemma_2_9.flip_range",
    ST,
    "Step 3: at position n, the range of the logit changes",
    DOC,
    [S >= 1, Q >= 0, K >= 0, Y >= 0, bq >= 0, bk >= 0, sd > 0, a >= 0, b >= 0],
    sp.Le(_PAIRS, _RANGE),
    sp.Le(_PAIRS, Q * a * k_bar + q_bar * K * a + 2 * q_bar * K * b),
    facts=("lemma_2_9.logit_change",),
    note="sqrt(d_h) times the range: pairs (i, j) off n and the pair (n, j)",
)
z3_step(
    "lemma_2_9.flip_position",
    ST,
    "Step 3: at position n",
    DOC,
    [
        *_coef,
        val <= V * a + V * b,
        rng_ >= 0,
        rng_ * sd <= _PAIRS,
        _PAIRS <= _RANGE,
        rew <= v_c * rng_ / 2,
    ],
    sp.Le(val + rew, ATT_N_A * a + ATT_N_B * b),
    sp.Le(val + rew, V * a + V * b + v_c * rng_ / 4),
    uses=(
        Use(
            "lemma_2_9.flip_range",
            {x.name: x for x in (S, Q, K, Y, bq, bk, sd, a, b)},
            _PAIRS <= _RANGE,
        ),
    ),
    facts=(
        "lemma_2_9.attention_split",
        "axiom.popoviciu",
        "axiom.cauchy_schwarz",
        "lemma_3_1.covariance_identity",
        "axiom.mean_value",
    ),
)
