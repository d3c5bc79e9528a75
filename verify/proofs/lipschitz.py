"""Lemma 3.1's derivation steps as obligations (docs/derivations.md#lemma-31), and the step
expressions that compose to C_Lip (used by :mod:`verify.proofs.compose`). Lemma 3.2, Cor 3.3,
Cor 3.4 and Prop 3.5: :mod:`verify.proofs.blowup`."""

from __future__ import annotations

import sympy as sp

from verify.proofs import layer_norm_jacobian  # noqa: F401  (lemma_3_1.ln_jacobian, every D)
from verify.proofs.core import Verdict
from verify.proofs.methods import Use, custom_step, sympy_identity, z3_step
from verify.proofs.positions import INSTANCE_SIZE, SIZE, sum_induction, unroll

__all__ = ["LIP"]

DOC31 = "docs/derivations.md#lemma-31"
ST = "Lemma 3.1"
g, eps, D, Y, V, sd, yout = sp.symbols("g epsilon D Y V sd Y_out", real=True)
# the per-unit coefficients of the linear form (step expressions composed by the chain)
LIP = {
    "ln_input": g * eps ** sp.Rational(-1, 2),  # step 2: g eps^{-1/2} on the input change
    "ln_gain": sp.sqrt(D - 1),  # step 2: ||g-hat||_inf <= sqrt(D - 1)
    "ln_bias": sp.Integer(1),
    "value_w": Y,  # step 3: dv <= V e + Y ||dW_v|| + ||db_v||
    "value_b": sp.Integer(1),
    "reweight": V * Y / sd,  # step 3: V Y (k dq + q dk)/sqrt(d_h)
    "readout_w": yout,  # step 4: dT <= ||w|| e + Y_out ||dw|| + |d omega|
    "readout_b": sp.Integer(1),
}

# ---- step 2: layer norm, input and parameters
gam, gam2, gh, gh2, be, be2 = sp.symbols("gamma gamma' ghat ghat' beta beta'", real=True)
sympy_identity(
    "lemma_3_1.ln_decomposition",
    ST,
    "Step 2: layer norm, input and parameters",
    DOC31,
    (gam * gh + be) - (gam2 * gh2 + be2),
    gam * (gh - gh2) + (gam - gam2) * gh2 + (be - be2),
    gam * (gh - gh2) + (gam - gam2) * gh2,
    positive=False,
)
var, zz, nrm = sp.symbols("var z n2", real=True)
z3_step(
    "lemma_3_1.ln_jacobian_norm",
    ST,
    "Step 2: layer norm, input and parameters (spectral norm of the Jacobian: z)",
    DOC31,
    [var >= 0, eps > 0, zz > 0],
    sp.Le(sp.Max(0, zz * eps / (var + eps), zz), zz),
    sp.Le(sp.Max(0, zz * eps / (var + eps), zz), zz / 2),
    facts=("lemma_3_1.ln_jacobian", "axiom.mean_value"),
    note="eigenvalues 0 (on 1), z eps/(var + eps) (on g-hat) and z: the largest is z"
    " (z <= eps^{-1/2}, lemma_3_2.z_max, enters at lemma_3_1.ln_step)",
)
c1, rest = sp.symbols("c1 r", real=True)
_JNORM = sp.Max(0, zz * eps / (var + eps), zz)  # the Jacobian's spectral norm (its eigenvalues)
_CENTRED = [
    D >= 2,
    rest >= 0,
    c1**2 + rest > 0,
    c1**2 <= (D - 1) * rest,
    nrm >= 0,
    var >= 0,
    eps >= 0,
    var + eps > 0,
    sp.Eq(nrm * (var + eps), D * var),
    D * var / (var + eps) <= D,
    nrm * (c1**2 + rest) >= 0,
    gh * gh * (c1**2 + rest) <= c1**2 * nrm,
]
z3_step(
    "lemma_3_1.centred_entry",
    ST,
    "Step 2: layer norm, input and parameters (||g-hat||_inf <= sqrt(D - 1))",
    DOC31,
    _CENTRED,
    sp.Le(sp.Abs(gh), sp.sqrt(D - 1)),
    sp.Le(sp.Abs(gh), sp.sqrt(D - 1) / 2),
    facts=("axiom.cauchy_schwarz",),
    uses=(
        Use(
            "lemma_2_9.ln_output_bound",
            {"var": var, "epsilon": eps, "D": D},
            D * var / (var + eps) <= D,
        ),
    ),
    note="n2 = |g-hat|^2 = D var/(var + eps) <= D (ln_output_bound); c_1 = -sum_{i>1} c_i,"
    " so c_1^2 <= (D-1) r (Cauchy-Schwarz); g-hat_1^2 = c_1^2 n2/|c|^2",
)
du, dgam, dbe, out = sp.symbols("du dgamma dbeta dout", real=True)
z3_step(
    "lemma_3_1.ln_step",
    ST,
    "Step 2: layer norm, input and parameters",
    DOC31,
    [
        g >= 0,
        eps > 0,
        du >= 0,
        dgam >= 0,
        dbe >= 0,
        *_CENTRED,
        zz > 0,
        zz <= (var + eps) ** sp.Rational(-1, 2),
        (var + eps) ** sp.Rational(-1, 2) <= eps ** sp.Rational(-1, 2),
        _JNORM <= zz,
        sp.Abs(gh) <= sp.sqrt(D - 1),
        out <= g * _JNORM * du + sp.Abs(gh) * dgam + dbe,
    ],
    sp.Le(out, LIP["ln_input"] * du + LIP["ln_gain"] * dgam + LIP["ln_bias"] * dbe),
    sp.Le(out, LIP["ln_input"] * du / 2 + LIP["ln_gain"] * dgam + LIP["ln_bias"] * dbe),
    facts=("lemma_3_1.ln_decomposition", "axiom.hoelder_gain", "axiom.triangle"),
    uses=(
        Use(
            "lemma_3_2.z_max",
            {"var": var, "epsilon": eps},
            (var + eps) ** sp.Rational(-1, 2) <= eps ** sp.Rational(-1, 2),
        ),
        Use("lemma_3_1.ln_jacobian_norm", {"var": var, "epsilon": eps, "z": zz}, _JNORM <= zz),
        Use(
            "lemma_3_1.centred_entry",
            {x.name: x for x in (D, rest, c1, nrm, var, eps, gh)},
            sp.Abs(gh) <= sp.sqrt(D - 1),
        ),
    ),
    note="the change splits as gamma (g-hat - g-hat') + dgamma g-hat' + dbeta"
    " (ln_decomposition): the first moves by <= g ||J|| du, ||J|| = z (ln_jacobian_norm),"
    " the second by ||g-hat'||_inf dgamma <= sqrt(D - 1) dgamma (centred_entry)",
)

# ---- step 3: attention, with no factor of S
W, W2_, y, y2, bb, bb2 = sp.symbols("W W' y y' b_v b_v'", real=True)
sympy_identity(
    "lemma_3_1.value_identity",
    ST,
    "Step 3: attention, values",
    DOC31,
    (W2_ * y2 + bb2) - (W * y + bb),
    W2_ * (y2 - y) + (W2_ - W) * y + (bb2 - bb),
    W2_ * (y2 - y) + (bb2 - bb),
    positive=False,
)
e_, dW, dbv, dv = sp.symbols("e dW db dv", real=True)
t1_, t2_, t3_, vw, ey, ny = sp.symbols("t_1 t_2 t_3 V' e' n_y", real=True)
z3_step(
    "lemma_3_1.value_term",
    ST,
    "Step 3: attention, values",
    DOC31,
    [
        V >= 0,
        Y >= 0,
        e_ >= 0,
        dW >= 0,
        dbv >= 0,
        vw >= 0,
        vw <= V,
        ey >= 0,
        ey <= e_,
        ny >= 0,
        ny <= Y,
        dv <= t1_ + t2_ + t3_,
        t1_ <= vw * ey,
        t2_ <= dW * ny,
        t3_ <= dbv,
    ],
    sp.Le(dv, V * e_ + LIP["value_w"] * dW + LIP["value_b"] * dbv),
    sp.Le(dv, V * e_ / 2 + LIP["value_w"] * dW + LIP["value_b"] * dbv),
    facts=("lemma_3_1.value_identity", "axiom.submultiplicative", "axiom.triangle"),
    note="the three terms of value_identity: ||W'_v(y' - y)|| <= ||W'_v|| ||y' - y|| with"
    " ||W'_v|| <= V, ||y' - y|| <= e; ||dW_v y|| <= ||dW_v|| ||y|| with ||y|| <= Y",
)
qa, qb, ka, kb = sp.symbols("q1 q2 k1 k2", real=True)
qa2, qb2, ka2, kb2 = sp.symbols("q1' q2' k1' k2'", real=True)
sympy_identity(
    "lemma_3_1.logit_identity",
    ST,
    "Step 3: attention, logits",
    DOC31,
    (qa2 * ka2 + qb2 * kb2) - (qa * ka + qb * kb),
    (qa2 - qa) * ka2 + (qb2 - qb) * kb2 + qa * (ka2 - ka) + qb * (kb2 - kb),
    (qa2 - qa) * ka2 + (qb2 - qb) * kb2,
    positive=False,
)
j_ = sp.Symbol("j", integer=True, positive=True)
pp_, ds_, u_ = (sp.IndexedBase(n, real=True) for n in ("p", "ds", "u"))
mean = sp.Symbol("m", real=True)


def _sum(e: sp.Expr) -> sp.Expr:
    return sp.Sum(e, (j_, 1, SIZE))


sympy_identity(
    "lemma_3_1.covariance_identity",
    ST,
    "Step 3: attention, reweighting: the covariance bound",
    DOC31,
    _sum(pp_[j_] * (ds_[j_] - mean) * u_[j_]),
    _sum(pp_[j_] * ds_[j_] * u_[j_]) - mean * _sum(pp_[j_] * u_[j_]),
    _sum(pp_[j_] * ds_[j_] * u_[j_]),
    positive=False,
    facts=("lemma_2_9.softmax_derivative", "axiom.mean_value"),
    instance=(INSTANCE_SIZE, lambda e: unroll(e, INSTANCE_SIZE)),
)
dl = sp.symbols("delta", real=True)
pj, tj = sp.symbols("p ds", real=True)
sp_, sm_, sq_, sv_ = sp.symbols("P M Q Var_p", real=True)
sum_induction(
    "lemma_3_1.variance_second_moment",
    ST,
    "Step 3: attention, reweighting: the covariance bound (Var <= E[ds^2] <= delta^2)",
    DOC31,
    terms=(pj, tj),
    term_hyps=(pj >= 0, sp.Abs(tj) <= dl),
    sums={sp_: pj, sm_: pj * tj, sq_: pj * tj**2, sv_: pj * (tj - mean) ** 2},
    invariant=(sp.Eq(sv_, sq_ - 2 * mean * sm_ + mean**2 * sp_), sq_ <= dl**2 * sp_, sp_ >= 0),
    global_hyps=(dl >= 0,),
    final=(sp.Eq(sp_, 1), sp.Eq(mean, sm_)),
    concl=sp.Le(sv_, dl**2),
    twin=sp.Le(sv_, dl**2 / 4),
    note="Var_p = sum_j p_j (ds_j - m)^2 with m = sum_j p_j ds_j",
)
e2, mm_, vr = sp.symbols("E2 m Var_p", real=True)
z3_step(
    "lemma_3_1.variance_any_s",
    ST,
    "Step 3: attention, reweighting: the covariance bound (Var <= E[ds^2] <= delta^2)",
    DOC31,
    [dl >= 0, e2 >= 0, e2 <= dl**2, sp.Eq(vr, e2 - mm_**2)],
    sp.Le(vr, dl**2),
    sp.Le(vr, dl**2 / 2),
    note="any S: Var_p = E_p[ds^2] - (E_p ds)^2 and E_p[ds^2] <= max_j ds_j^2 <= delta^2"
    " (the moment form of lemma_3_1.variance_second_moment, proved here on its own)",
)
cov, vv, vc, dq, dk, qbar, kbar = sp.symbols("cov Var v_c dq dk q k", real=True)
z3_step(
    "lemma_3_1.reweighting",
    ST,
    "Step 3: attention, reweighting: the covariance bound",
    DOC31,
    [
        V >= 0,
        Y >= 0,
        sd > 0,
        dq >= 0,
        dk >= 0,
        qbar >= 0,
        kbar >= 0,
        vv >= 0,
        cov >= 0,
        sp.Eq(dl * sd, kbar * dq + qbar * dk),
        vv <= dl**2,
        cov**2 <= vv * (V * Y) ** 2,
    ],
    sp.Le(cov, LIP["reweight"] * (kbar * dq + qbar * dk)),
    sp.Le(cov, LIP["reweight"] * (kbar * dq + qbar * dk) / 2),
    facts=("lemma_3_1.covariance_identity", "lemma_3_1.logit_identity", "axiom.cauchy_schwarz"),
    uses=(
        # the variance over S positions of a distribution p (sum p = 1, mean m = M)
        Use(
            "lemma_3_1.variance_second_moment",
            {"delta": dl, "P": 1, "m": mean, "M": mean, "Var_p": vv},
            vv <= dl**2,
        ),
    ),
)
tt = sp.symbols("t", positive=True)


def _tanh_limit() -> Verdict:
    lim = sp.limit(sp.tanh(tt) / tt, tt, 0)
    return Verdict("proved" if lim == 1 else "failed", f"sympy: lim tanh(d)/d = {lim}")


def _tanh_twin() -> Verdict:
    lim = sp.limit(sp.tanh(tt) / tt, tt, 0)
    return Verdict(
        "refuted" if lim != sp.Rational(1, 2) else "not refuted",
        f"sympy: the limit is {lim}, not 1/2",
        {"d": "0+"},
    )


custom_step(
    "lemma_3_1.reweighting_tight",
    ST,
    "The reweighting term is tight",
    DOC31,
    "sympy",
    "lim_{d -> 0} tanh(d) v_c / (d v_c) = 1 (uniform p, ds = +-d, u = +-v_c attains d v_c)",
    "the same limit equals 1/2 (the term could be halved)",
    _tanh_limit,
    _tanh_twin,
)
Wo, Wo2, o, o2, bo, bo2 = sp.symbols("W_o W_o' o o' b_o b_o'", real=True)
sympy_identity(
    "lemma_3_1.out_proj_identity",
    ST,
    "Step 3: heads and output projection",
    DOC31,
    (Wo2 * o2 + bo2) - (Wo * o + bo),
    Wo2 * (o2 - o) + (Wo2 - Wo) * o + (bo2 - bo),
    Wo2 * (o2 - o) + (bo2 - bo),
    positive=False,
    facts=("axiom.triangle", "axiom.submultiplicative"),
)
bvn = sp.Symbol("b_v", real=True)
uj, su_ = sp.symbols("u U", real=True)
sum_induction(
    "lemma_3_1.head_output",
    ST,
    "Step 3: heads and output projection (||o_h|| <= V_h Y + b_v^h)",
    DOC31,
    terms=(pj, uj),
    term_hyps=(pj >= 0, uj <= V * Y + bvn),
    sums={sp_: pj, su_: pj * uj},
    invariant=(su_ <= (V * Y + bvn) * sp_, sp_ >= 0),
    global_hyps=(V >= 0, Y >= 0, bvn >= 0),
    final=(sp.Eq(sp_, 1),),
    concl=sp.Le(su_, V * Y + bvn),
    twin=sp.Le(su_, (V * Y + bvn) / 2),
    facts=("axiom.triangle",),
    note="u_j bounds ||v_j|| <= V Y + b_v; ||o_h|| <= sum_j p_j ||v_j|| (triangle)",
)

# ---- step 4: MLP, residuals, readout
r = sp.Function("relu")
h, h2, A1, A2, c_1, c_2 = sp.symbols("h h' W_1 W_1' b_1 b_1'", real=True)
B2, B22 = sp.symbols("W_2 W_2'", real=True)
sympy_identity(
    "lemma_3_1.ffn_identity",
    ST,
    "Step 4: MLP, residuals, readout",
    DOC31,
    B22 * r(A2 * h2 + c_2) - B2 * r(A1 * h + c_1),
    B22 * (r(A2 * h2 + c_2) - r(A1 * h + c_1)) + (B22 - B2) * r(A1 * h + c_1),
    B22 * (r(A2 * h2 + c_2) - r(A1 * h + c_1)),
    positive=False,
    facts=("lemma_2_9.relu_lipschitz", "lemma_3_1.value_identity"),
)
ww, ww2, yy, yy2, om, om2 = sp.symbols("w w' y y' omega omega'", real=True)
sympy_identity(
    "lemma_3_1.readout_identity",
    ST,
    "Step 4: MLP, residuals, readout",
    DOC31,
    (ww2 * yy2 + om2) - (ww * yy + om),
    ww2 * (yy2 - yy) + (ww2 - ww) * yy + (om2 - om),
    ww2 * (yy2 - yy) + (om2 - om),
    positive=False,
    facts=("axiom.cauchy_schwarz",),
)
dh_, dW1, db1, dW2, db2, drelu, nrelu, W1n, W2n, b1n, dff = sp.symbols(
    "dh dW_1 db_1 dW_2 db_2 d_relu n_relu W_1 W_2 b_1 dFFN", real=True
)
z3_step(
    "lemma_3_1.ffn_bound",
    ST,
    "Step 4: MLP, residuals, readout (the MLP's coefficients)",
    DOC31,
    [
        W1n >= 0,
        W2n >= 0,
        Y >= 0,
        b1n >= 0,
        dh_ >= 0,
        dW1 >= 0,
        db1 >= 0,
        dW2 >= 0,
        db2 >= 0,
        drelu >= 0,
        drelu <= W1n * dh_ + dW1 * Y + db1,
        nrelu >= 0,
        nrelu <= W1n * Y + b1n,
        dff <= W2n * drelu + dW2 * nrelu + db2,
    ],
    sp.Le(dff, W2n * (W1n * dh_ + dW1 * Y + db1) + dW2 * (W1n * Y + b1n) + db2),
    sp.Le(dff, W2n * (W1n * dh_ + dW1 * Y + db1) + db2),
    facts=(
        "lemma_3_1.ffn_identity",
        "lemma_2_9.relu_lipschitz",
        "lemma_3_1.value_identity",
        "axiom.submultiplicative",
        "axiom.triangle",
    ),
    note="|relu(a) - relu(b)| <= |a - b| and |relu(a)| <= |a| per unit; the first map as in"
    " lemma_3_1.value_identity",
)
dw_, dom, ee, dt_, wn_, ra, rb = sp.symbols("dw domega e dT w t_1 t_2", real=True)
z3_step(
    "lemma_3_1.readout_bound",
    ST,
    "Step 4: MLP, residuals, readout (the readout's coefficients)",
    DOC31,
    [
        wn_ >= 0,
        ee >= 0,
        dw_ >= 0,
        yout >= 0,
        sp.Abs(dt_) <= sp.Abs(ra) + sp.Abs(rb) + sp.Abs(dom),
        sp.Abs(ra) <= wn_ * ee,
        sp.Abs(rb) <= dw_ * yout,
    ],
    sp.Le(sp.Abs(dt_), wn_ * ee + LIP["readout_w"] * dw_ + LIP["readout_b"] * sp.Abs(dom)),
    sp.Le(sp.Abs(dt_), wn_ * ee + LIP["readout_b"] * sp.Abs(dom)),
    facts=("lemma_3_1.readout_identity", "axiom.cauchy_schwarz", "axiom.triangle"),
)
do_, dWo, dbo, obar, Won, dmha = sp.symbols("do dW_o db_o obar W_o dMHA", real=True)
m1_, m2_, m3_, won2, do2, on_ = sp.symbols("m_1 m_2 m_3 W_o' do' n_o", real=True)
z3_step(
    "lemma_3_1.out_proj_bound",
    ST,
    "Step 3: heads and output projection (the coefficients of W_o and b_o)",
    DOC31,
    [
        Won >= 0,
        do_ >= 0,
        dWo >= 0,
        dbo >= 0,
        obar >= 0,
        won2 >= 0,
        won2 <= Won,
        do2 >= 0,
        do2 <= do_,
        on_ >= 0,
        on_ <= obar,
        dmha <= m1_ + m2_ + m3_,
        m1_ <= won2 * do2,
        m2_ <= dWo * on_,
        m3_ <= dbo,
    ],
    sp.Le(dmha, Won * do_ + dWo * obar + dbo),
    sp.Le(dmha, Won * do_ + dbo),
    facts=(
        "lemma_3_1.out_proj_identity",
        "lemma_3_1.head_output",
        "axiom.triangle",
        "axiom.submultiplicative",
    ),
    note="the three terms of out_proj_identity (triangle), each by the operator norm;"
    " obar = sqrt(sum_h (V_h Y + b_v^h)^2) bounds ||o|| (head_output, Minkowski)",
)

# ---- step 5: Cauchy-Schwarz over the groups
lg, dg, sx_, sl_, sd_ = sp.symbols("L d X A B", real=True)


def _max_twin(positions: list[dict[sp.Symbol, sp.Symbol]]) -> sp.Basic:
    """max_g L_g in place of sqrt(sum_g L_g^2)."""
    ls, ds = [pos[lg] for pos in positions], [pos[dg] for pos in positions]
    lhs = sp.Add(*(a_ * b_ for a_, b_ in zip(ls, ds, strict=True)))
    return sp.Le(lhs, sp.Max(*ls) * sp.sqrt(sp.Add(*(x**2 for x in ds))))


sum_induction(
    "lemma_3_1.group_combine",
    ST,
    "Step 5: the constant",
    DOC31,
    terms=(lg, dg),
    term_hyps=(),
    sums={sx_: lg * dg, sl_: lg**2, sd_: dg**2},
    invariant=(sl_ >= 0, sd_ >= 0, sx_**2 <= sl_ * sd_),
    concl=sp.Le(sx_, sp.sqrt(sl_) * sp.sqrt(sd_)),
    twin=_max_twin,
    cite_hyps=(sl_ >= 0, sd_ >= 0),
    facts=("axiom.cauchy_schwarz",),
    note="Cauchy-Schwarz over any number of groups, L_g and d_g any reals",
)
