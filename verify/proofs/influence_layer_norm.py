"""Lemma 2.9's bounded attention inputs (section 0) and the layer norm's endpoint bound (step 2)
as obligations (docs/derivations.md#lemma-29) (symbols:
:mod:`verify.proofs.influence_terms`)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.influence_terms import (
    LN_FACTOR,
    K,
    Q,
    Y,
    bk,
    bq,
    g,
    k_bar,
    q_bar,
    sd,
)
from verify.proofs.methods import Use, sympy_identity, z3_step

ST = "Lemma 2.9"
DOC = "docs/derivations.md#lemma-29"

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
_LIFT = (
    4 * (p**2 + qq**2 - 2 * p * qq * c) - (2 - 2 * c) * (p + qq) ** 2,
    (2 + 2 * c) * (p - qq) ** 2,
)
sympy_identity(
    "lemma_2_9.ln_lift_identity",
    ST,
    "Step 2: a layer-norm Lipschitz bound that uses only the two endpoints",
    DOC,
    *_LIFT,
    (1 + c) * (p - qq) ** 2,
)
z3_step(
    "lemma_2_9.ln_unit_chord",
    ST,
    "Step 2: a layer-norm Lipschitz bound that uses only the two endpoints",
    DOC,
    [p > 0, qq > 0, c >= -1, c <= 1, sp.Eq(*_LIFT)],
    sp.Le(sp.sqrt(2 - 2 * c) * (p + qq), 2 * sp.sqrt(p**2 + qq**2 - 2 * p * qq * c)),
    sp.Le(sp.sqrt(2 - 2 * c) * (p + qq), sp.sqrt(p**2 + qq**2 - 2 * p * qq * c)),
    facts=("axiom.projection_contraction",),
    uses=(Use("lemma_2_9.ln_lift_identity", {"p": p, "q": qq, "c": c}, sp.Eq(*_LIFT)),),
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
_RAW = 2 * e / (1 / z + 1 / z2)  # the endpoint bound as the chord gives it (ln_endpoint's lhs)
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
        d <= g * _RAW,
        sp.Eq(_RAW, _HM * e),
        _HM <= sp.sqrt(z * z2),
        sp.sqrt(z * z2) <= (1 + z) * (1 + z2) / 4,
        (1 + z) * (1 + z2) <= tau * tau2,
    ],
    sp.Le(d, LN_FACTOR * rho * e),
    sp.Le(d, LN_FACTOR * rho * e / 2),
    uses=(
        Use("lemma_2_9.ln_endpoint", {"z_u": z, "z_v": z2, "w": e}, sp.Eq(_RAW, _HM * e)),
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
        "axiom.hoelder_gain",
        "axiom.projection_contraction",
    ),
)
