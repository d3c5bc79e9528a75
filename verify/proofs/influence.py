"""Lemma 2.9's derivation steps as obligations (docs/derivations.md#lemma-29), and the step
expressions that compose to C_infl (used by :mod:`verify.proofs.compose`).

Symbols: Q, K, V the spectral norms of a head's query, key and value blocks, b_q, b_k their bias
norms, Y the bound on the attention inputs, sd = sqrt(d_h), q = Q Y + b_q, k = K Y + b_k,
v_c = V Y, G_q = Q k / sd, G_k = q K / sd; E = e^{2R} with R = q k / sd (substitution: the
polynomial steps are stated in E, the exp step proves E's role by arb).
"""

from __future__ import annotations

import sympy as sp

from verify.proofs.methods import Use, arb_step, sympy_identity, z3_step

__all__ = ["ATT_N_A", "ATT_N_B", "ATT_OTHER_A", "ATT_OTHER_B", "E_SOFTMAX", "LN_FACTOR", "SYM"]

ST = "Lemma 2.9"
DOC = "docs/derivations.md#lemma-29"
SYM = dict(
    zip(
        "Q K V bq bk Y sd g W1 W2 a b S E".split(),
        sp.symbols("Q K V b_q b_k Y sd g W1 W2 a b S E", real=True),
        strict=True,
    )
)
Q, K, V, bq, bk, Y, sd, g, W1, W2, a, b, S, E = SYM.values()
q_bar, k_bar = Q * Y + bq, K * Y + bk
v_c = V * Y
G_q, G_k = Q * k_bar / sd, q_bar * K / sd

# the step expressions (per head, per unit of a and of bt) that the recursion composes
LN_FACTOR = g / 4  # step 2: each layer norm, per unit of rho = tau tau'
FFN_FACTOR = W2 * W1  # step 4
E_SOFTMAX = sp.exp(2 * q_bar * k_bar / sd)  # step 3: S max_j p_j <= e^{2R}
ATT_OTHER_B = V + 2 * v_c * (G_q + G_k)  # step 3, another position: coefficient of bt
ATT_OTHER_A = E * (V + 2 * v_c * G_k)  # ... of a (E = e^{2R})
ATT_N_A = V + v_c * (2 * G_q + G_k) / 2  # step 3, at the flipped position: coefficient of a
ATT_N_B = V + v_c * (2 * G_k) / 2  # ... of bt

p, qq, c, zu, zv, z, z2, tau, tau2, w = sp.symbols("p q c z_u z_v z z' tau tau' w", real=True)
rho, H, d, e = sp.symbols("rho H d e", real=True)

# ---- bounded attention inputs (section 0)
var, eps, D = sp.symbols("var epsilon D", real=True)
z3_step(
    "lemma_2_9.ln_output_bound",
    ST,
    "Bounded attention inputs: ||g(v)||^2 = D var/(var + eps) <= D",
    DOC,
    [var >= 0, eps >= 0, var + eps > 0, D >= 1],
    sp.Le(D * var / (var + eps), D),
    sp.Le(D * var / (var + eps), D / 2),
)
s_qk, nq, nk = sp.symbols("s n_q n_k", real=True)
z3_step(
    "lemma_2_9.logit_bound",
    ST,
    "Bounded attention inputs: every logit |s| <= R = q k / sqrt(d_h)",
    DOC,
    [
        sd > 0,
        Y >= 0,
        Q >= 0,
        K >= 0,
        bq >= 0,
        bk >= 0,
        nq >= 0,
        nk >= 0,
        nq <= Q * Y + bq,
        nk <= K * Y + bk,
        sp.Abs(s_qk) * sd <= nq * nk,
    ],
    sp.Le(sp.Abs(s_qk), q_bar * k_bar / sd),
    sp.Le(sp.Abs(s_qk), q_bar * k_bar / (2 * sd)),
    facts=("axiom.cauchy_schwarz", "axiom.triangle", "axiom.submultiplicative"),
)

# ---- step 2: the layer norm's endpoint bound
sympy_identity(
    "lemma_2_9.ln_lift_identity",
    ST,
    "Step 2: a layer-norm Lipschitz bound that uses only the two endpoints",
    DOC,
    4 * (p**2 + qq**2 - 2 * p * qq * c) - (2 - 2 * c) * (p + qq) ** 2,
    (2 + 2 * c) * (p - qq) ** 2,
    (1 + c) * (p - qq) ** 2,
)
z3_step(
    "lemma_2_9.ln_unit_chord",
    ST,
    "Step 2: a layer-norm Lipschitz bound that uses only the two endpoints",
    DOC,
    [p > 0, qq > 0, c >= -1, c <= 1],
    sp.Le(sp.sqrt(2 - 2 * c) * (p + qq), 2 * sp.sqrt(p**2 + qq**2 - 2 * p * qq * c)),
    sp.Le(sp.sqrt(2 - 2 * c) * (p + qq), sp.sqrt(p**2 + qq**2 - 2 * p * qq * c)),
    facts=("lemma_2_9.ln_lift_identity", "axiom.projection_contraction"),
    note="|A| = p, |B| = q, cos = c: |A^ - B^| (|A| + |B|) <= 2 |A - B|",
)
sympy_identity(
    "lemma_2_9.ln_endpoint",
    ST,
    "Step 2: a layer-norm Lipschitz bound that uses only the two endpoints",
    DOC,
    sp.sqrt(D) * 2 * (w / sp.sqrt(D)) / (1 / zu + 1 / zv),
    2 * zu * zv / (zu + zv) * w,
    zu * zv / (zu + zv) * w,
    facts=("lemma_2_9.ln_unit_chord",),
)
z3_step(
    "lemma_2_9.hm_le_gm",
    ST,
    "Step 2, remarks: H(z, z') <= sqrt(z z') (AM-GM)",
    DOC,
    [z > 0, z2 > 0],
    sp.Le(2 * z * z2 / (z + z2), sp.sqrt(z * z2)),
    sp.Le(2 * z * z2 / (z + z2), sp.sqrt(z * z2) / 2),
)
z3_step(
    "lemma_2_9.gm_le_tau",
    ST,
    "Step 2, remarks: sqrt(z z') <= (1 + z)(1 + z')/4",
    DOC,
    [z >= 0, z2 >= 0],
    sp.Le(sp.sqrt(z * z2), (1 + z) * (1 + z2) / 4),
    sp.Le(sp.sqrt(z * z2), (1 + z) * (1 + z2) / 8),
)
z3_step(
    "lemma_2_9.tau_product",
    ST,
    "Step 2, remarks: (1 + z)(1 + z') <= tau^k(x) tau^k(x')",
    DOC,
    [z >= 0, z2 >= 0, 1 + z <= tau, 1 + z2 <= tau2],
    sp.Le((1 + z) * (1 + z2), tau * tau2),
    sp.Le((1 + z) * (1 + z2), tau * tau2 / 2),
)
_HM = 2 * z * z2 / (z + z2)
z3_step(
    "lemma_2_9.ln_factor",
    ST,
    "Step 2, remarks: each layer norm contributes (g_k/4) rho_k",
    DOC,
    [
        g >= 0,
        e >= 0,
        z > 0,
        z2 > 0,
        1 + z <= tau,
        1 + z2 <= tau2,
        sp.Eq(rho, tau * tau2),
        d <= g * _HM * e,
        _HM <= sp.sqrt(z * z2),
        sp.sqrt(z * z2) <= (1 + z) * (1 + z2) / 4,
        (1 + z) * (1 + z2) <= tau * tau2,
    ],
    sp.Le(d, LN_FACTOR * rho * e),
    sp.Le(d, LN_FACTOR * rho * e / 2),
    uses=(
        Use("lemma_2_9.hm_le_gm", {"z": z, "z'": z2}, _HM <= sp.sqrt(z * z2)),
        Use(
            "lemma_2_9.gm_le_tau",
            {"z": z, "z'": z2},
            sp.sqrt(z * z2) <= (1 + z) * (1 + z2) / 4,
        ),
        Use(
            "lemma_2_9.tau_product",
            {"z": z, "z'": z2, "tau": tau, "tau'": tau2},
            (1 + z) * (1 + z2) <= tau * tau2,
        ),
    ),
    note="the endpoint bound moves the output by g H(z, z') e, H = 2 z z'/(z + z') (ln_endpoint,"
    " Hoelder for the gain); H <= sqrt(z z') <= (1 + z)(1 + z')/4 <= tau tau'/4 = rho/4",
    facts=(
        "lemma_2_9.ln_endpoint",
        "lemma_2_9.hm_le_gm",
        "lemma_2_9.gm_le_tau",
        "lemma_2_9.tau_product",
        "axiom.hoelder_gain",
        "axiom.projection_contraction",
    ),
)

# ---- step 3: attention
s1, s2, s3, t1, t2, t3 = sp.symbols("s1 s2 s3 t1 t2 t3", real=True)
_den = sp.exp(s1) + sp.exp(s2) + sp.exp(s3)
_p1 = sp.exp(s1) / _den
sympy_identity(
    "lemma_2_9.softmax_derivative",
    ST,
    "Step 3: softmax, dp = (diag p - p p^T) ds",
    DOC,
    sp.diff(_p1, s1) * t1 + sp.diff(_p1, s2) * t2 + sp.diff(_p1, s3) * t3,
    _p1 * (t1 - (_p1 * t1 + sp.exp(s2) / _den * t2 + sp.exp(s3) / _den * t3)),
    _p1 * t1,
)
p1, p2, p3 = sp.symbols("p1 p2 p3", real=True)
_m = p1 * t1 + p2 * t2 + p3 * t3
z3_step(
    "lemma_2_9.softmax_dp_l1",
    ST,
    "Step 3: softmax, ||dp||_1 <= 2 sum_j p_j |ds_j|",
    DOC,
    [p1 >= 0, p2 >= 0, p3 >= 0, sp.Eq(p1 + p2 + p3, 1)],
    sp.Le(
        sp.Abs(p1 * (t1 - _m)) + sp.Abs(p2 * (t2 - _m)) + sp.Abs(p3 * (t3 - _m)),
        2 * (p1 * sp.Abs(t1) + p2 * sp.Abs(t2) + p3 * sp.Abs(t3)),
    ),
    sp.Le(
        sp.Abs(p1 * (t1 - _m)) + sp.Abs(p2 * (t2 - _m)) + sp.Abs(p3 * (t3 - _m)),
        p1 * sp.Abs(t1) + p2 * sp.Abs(t2) + p3 * sp.Abs(t3),
    ),
    facts=("lemma_2_9.softmax_derivative", "axiom.triangle"),
    note="three positions; any S by the same triangle inequality",
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
arb_step(
    "lemma_2_9.softmax_weight_simple",
    ST,
    "Step 3: softmax, pi <= e^{2R}/S",
    DOC,
    {R: (0, 8), sig: (0, 1)},
    sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R)),
    sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R) / 2),
    facts=("lemma_2_9.softmax_weight", "axiom.mean_value"),
    substitution="sigma = 1/S in (0, 1]; the claim times S; R in [0, 8] (R = q k/sqrt(d_h);"
    " beyond 8 the same monotone argument: e^{2R} grows)",
    coq="forall R, 0 <= R <= 8 -> 1 <= exp (2 * R)",
)
s0, s1_, tt_, rr = sp.symbols("s_0 s_1 t R", real=True)
z3_step(
    "lemma_2_9.segment_logits",
    ST,
    "Step 3: softmax, every logit on the straight logit path stays in [-R, R]",
    DOC,
    [rr >= 0, tt_ >= 0, tt_ <= 1, sp.Abs(s0) <= rr, sp.Abs(s1_) <= rr],
    sp.Le(sp.Abs(s0 + tt_ * (s1_ - s0)), rr),
    sp.Le(sp.Abs(s0 + tt_ * (s1_ - s0)), rr / 2),
    facts=("lemma_2_9.logit_bound",),
    note="s + t ds with both endpoints in [-R, R] (the box is convex)",
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
    note="every R >= 0 by the substitution E = e^{2R} >= 1 (the arb step checks the exp form"
    " on R in [0, 8])",
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
v1, v2, v3, w1, w2, w3, r1, r2, r3, bv = sp.symbols("v1 v2 v3 v1' v2' v3' p1' p2' p3' b_v")
sympy_identity(
    "lemma_2_9.attention_split",
    ST,
    "Step 3: the change of o_m splits as sum p dv + sum dp (v' - b_v)",
    DOC,
    (r1 * w1 + r2 * w2 + r3 * w3) - (p1 * v1 + p2 * v2 + p3 * v3),
    p1 * (w1 - v1)
    + p2 * (w2 - v2)
    + p3 * (w3 - v3)
    + (r1 - p1) * (w1 - bv)
    + (r2 - p2) * (w2 - bv)
    + (r3 - p3) * (w3 - bv)
    + bv * ((r1 + r2 + r3) - (p1 + p2 + p3)),
    p1 * (w1 - v1) + p2 * (w2 - v2) + p3 * (w3 - v3),
    positive=False,
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
z3_step(
    "lemma_2_9.other_position",
    ST,
    "Step 3: at another position m != n",
    DOC,
    [
        *_coef,
        val <= pn * V * a + (1 - pn) * V * b / S,
        rew <= 2 * v_c * (G_q * b / S + G_k * (pn * a + (1 - pn) * b / S)),
    ],
    sp.Le(S * (val + rew), ATT_OTHER_B * b + ATT_OTHER_A * a),
    sp.Le(S * (val + rew), ATT_OTHER_B * b + ATT_OTHER_A.subs(E, 1) * a),
    facts=(
        "lemma_2_9.attention_split",
        "lemma_2_9.softmax_dp_l1",
        "lemma_2_9.softmax_weight",
        "lemma_2_9.softmax_weight_simple",
        "lemma_2_9.logit_change",
        "axiom.triangle",
        "axiom.mean_value",
    ),
    note="E = e^{2R} bounds S p_mn along the logit path",
)
rng_ = sp.symbols("range", real=True)
z3_step(
    "lemma_2_9.flip_range",
    ST,
    "Step 3: at position n, the range of the logit changes",
    DOC,
    [S >= 1, Q >= 0, K >= 0, Y >= 0, bq >= 0, bk >= 0, sd > 0, a >= 0, b >= 0],
    sp.Le(
        sp.Max(
            2 * Q * a * k_bar + 2 * q_bar * K * b / S,
            2 * Q * a * k_bar + q_bar * K * a + q_bar * K * b / S,
        ),
        2 * Q * a * k_bar + q_bar * K * a + 2 * q_bar * K * b,
    ),
    sp.Le(
        sp.Max(
            2 * Q * a * k_bar + 2 * q_bar * K * b / S,
            2 * Q * a * k_bar + q_bar * K * a + q_bar * K * b / S,
        ),
        Q * a * k_bar + q_bar * K * a + 2 * q_bar * K * b,
    ),
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
        rng_ * sd <= 2 * Q * a * k_bar + q_bar * K * a + 2 * q_bar * K * b,
        rew <= v_c * rng_ / 2,
    ],
    sp.Le(val + rew, ATT_N_A * a + ATT_N_B * b),
    sp.Le(val + rew, V * a + V * b + v_c * rng_ / 4),
    facts=(
        "lemma_2_9.flip_range",
        "lemma_2_9.attention_split",
        "axiom.popoviciu",
        "axiom.cauchy_schwarz",
        "lemma_3_1.covariance_identity",
        "axiom.mean_value",
    ),
)

# ---- step 4: residuals and the MLP
x1, x2 = sp.symbols("x1 x2", real=True)
z3_step(
    "lemma_2_9.relu_lipschitz",
    ST,
    "Step 4: residuals and MLP (ReLU is 1-Lipschitz)",
    DOC,
    [],
    sp.Le(sp.Abs(sp.Max(x1, 0) - sp.Max(x2, 0)), sp.Abs(x1 - x2)),
    sp.Le(sp.Abs(sp.Max(x1, 0) - sp.Max(x2, 0)), sp.Abs(x1 - x2) / 2),
)
h1, h2, dres, dpre, drel, n1, n2 = sp.symbols("h dffn dres dpre drelu W1' W2'", real=True)
z3_step(
    "lemma_2_9.mlp_residual",
    ST,
    "Step 4: residuals and MLP",
    DOC,
    [
        W1 >= 0,
        W2 >= 0,
        h1 >= 0,
        h2 >= 0,
        n1 >= 0,
        n1 <= W1,
        n2 >= 0,
        n2 <= W2,
        dres <= h1 + h2,
        dpre <= n1 * h1,
        drel <= dpre,
        h2 <= n2 * drel,
    ],
    sp.Le(dres, (1 + FFN_FACTOR) * h1),
    sp.Le(dres, (1 + FFN_FACTOR / 2) * h1),
    facts=("lemma_2_9.relu_lipschitz", "axiom.submultiplicative", "axiom.triangle"),
    note="|y + F(y) - y' - F(y')| <= h + dffn (triangle); the first map moves by <= ||W_1|| h,"
    " the ReLU by no more (relu_lipschitz), the second map by <= ||W_2|| times that",
)

# ---- step 5: the recursion's monomials
r_1, r_2, r_3 = sp.symbols("rho1 rho2 rho3", real=True)
cs = sp.symbols("c0:8", real=True)
_mon = [1, r_1, r_2, r_3, r_1 * r_2, r_1 * r_3, r_2 * r_3, r_1 * r_2 * r_3]
z3_step(
    "lemma_2_9.recursion_monomials",
    ST,
    "Step 5: recursion",
    DOC,
    [r_1 >= 1, r_2 >= 1, r_3 >= 1, *(ci >= 0 for ci in cs)],
    sp.Le(sum(ci * m for ci, m in zip(cs, _mon, strict=True)), sum(cs) * r_1 * r_2 * r_3),
    sp.Le(sum(ci * m for ci, m in zip(cs, _mon, strict=True)), sum(cs[1:]) * r_1 * r_2 * r_3),
    note="three norms; a polynomial with non-negative coefficients in rho_k >= 1",
)

mono, prod_, rk = sp.symbols("m P rho_k", real=True)
z3_step(
    "lemma_2_9.recursion_induction",
    ST,
    "Step 5: recursion",
    DOC,
    [mono >= 0, mono <= prod_, rk >= 1],
    sp.Le(sp.Max(mono, mono * rk), prod_ * rk),
    sp.Le(sp.Max(mono, mono * rk), prod_ * rk / 2),
    note="induction over the norms: a monomial m <= P = rho_1...rho_{k-1} stays below P rho_k"
    " whether or not it contains rho_k (any number of norms)",
)

# ---- step 6: the constant
beta, beta2, cc, nn, at, bt_, ii = sp.symbols("beta beta' C N a_L bt_L I", real=True)
z3_step(
    "lemma_2_9.constant_off_readout",
    ST,
    "Step 6: the constant",
    DOC,
    [nn >= 1, S >= nn, beta >= 1, beta2 >= 1, bt_ >= 0, bt_ <= cc, ii <= bt_ * beta * beta2 / S],
    sp.Le(ii, cc * beta * beta2 / nn),
    sp.Le(ii, cc * beta * beta2 / (2 * nn)),
)
z3_step(
    "lemma_2_9.constant_at_readout",
    ST,
    "Step 6: the constant",
    DOC,
    [nn >= 1, beta >= 1, beta2 >= 1, at >= 0, at <= cc, ii <= at * beta * beta2],
    sp.Le(ii, cc * beta * beta2 * (1 + 1 / nn)),
    sp.Le(ii, cc * beta * beta2 * (1 + 1 / nn) / 2),
)
