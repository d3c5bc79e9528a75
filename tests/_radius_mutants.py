"""Radius mutants: each removes or halves one term of one radius rule (issue 25).

A mutant is a list of source edits ``(module, old, new)``, each ``old`` occurring exactly once
in the module's source, or a change of a module constant. It is applied in a process that
runs with ``NUMBA_DISABLE_JIT=1``: the kernels are then plain Python functions that look their
callees and constants up at call time, so re-executing one module's edited source and
re-binding the names that other modules imported from it swaps the rule everywhere, without
compiling anything (a tiny model runs in well under a second).

Used as a pytest plugin (``-p _radius_mutants``, with ``tests/`` on the path): when
``VERIFY_RADIUS_MUTANT`` names a mutant, it is applied before the tests are collected.
``tests/test_radius_mutations.py`` runs the soundness tests that way once per mutant and
asserts that a soundness test fails with an AssertionError. Without the JIT the plugin also
gives the register intrinsics that the one-layer exhaustive kernel calls (``ln_block``,
``mlp_rows*``) and dd's ``fma`` Python bodies (``install_python_intrinsics``).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import _radius_mutants_tiers as tier_mutants
import numpy as np


@dataclass(frozen=True)
class Mutant:
    name: str
    what: str  # the term, in words
    edits: tuple[tuple[str, str, str], ...] = ()  # (module, old source, new source)
    constants: tuple[tuple[str, str, float], ...] = field(default=())  # (module, name, factor)


MUTANTS = (
    Mutant(
        "ln_z_error",
        "layer norm: the z-error term |c| r_z of the per-string radius dropped",
        (
            (
                "verify.model.stages.layer_norm",
                "r = abs(c) * rz[b] + rc * (z[b] + rz[b])",
                "r = rc * (z[b] + rz[b])",
            ),
        ),
    ),
    Mutant(
        "unit_roundoff_halved",
        "the unit roundoff U halved in every kernel module of the per-string pass",
        constants=tuple(
            (m, "U", 0.5)
            for m in (
                "verify.model.stages.dense",
                "verify.model.stages.layer_norm",
                "verify.model.stages.softmax",
                "verify.model.stages.attention",
                "verify.model.stages.tables",
                "verify.model.per_string.per_string_kernel",
            )
        ),
    ),
    Mutant(
        "softmax_denominator",
        "softmax quotient: the denominator's radius p (1 + U) r_tot dropped",
        (
            (
                "verify.model.stages.softmax",
                "return ((r + p * (1 + U) * rtot) / gap + U * p)",
                "return (r / gap + U * p)",
            ),
        ),
    ),
    Mutant(
        "readout_propagated",
        "readout: the propagated radius sum |w_e| r_e dropped",
        (("verify.model.per_string.per_string_kernel", "rt += aw[e] * yr[r, e, b]", "rt += 0.0"),),
    ),
    Mutant(
        "matvec_rounding",
        "matrix-vector product: the rounding term g |x| of the inputs dropped",
        (
            (
                "verify.model.stages.dense",
                "scratch[k, b] = rx[k, b] + g * abs(x[k, b])",
                "scratch[k, b] = rx[k, b]",
            ),
        ),
    ),
    Mutant(
        "matvec_bias_rounding",
        "matrix-vector product: the bias's rounding term g |b| dropped",
        (("verify.model.stages.dense", "rb = g * abs(bias[c])", "rb = 0.0"),),
    ),
    Mutant(
        "attention_score_rounding",
        "attention (all positions): the score dot product's rounding (d_h + 2) U sum |q k| halved",
        (
            (
                "verify.model.stages.attention",
                "racc = (pr[j, b] + (dh + 2) * U * mag[b])",
                "racc = (pr[j, b] + (dh + 2) * U * mag[b] / 2)",
            ),
        ),
    ),
    Mutant(
        "readout_score_rounding",
        "attention (readout position): the score's rounding (d + 3) U sum |u x| dropped",
        (
            (
                "verify.model.stages.attention",
                "rt = (pr[j, b] + (d + 3) * U * tot[b])",
                "rt = (pr[j, b])",
            ),
        ),
    ),
    Mutant(
        "exp_ulps",
        "softmax: exp's own error EXP_ULPS U dropped from the exponential's radius",
        (
            (
                "verify.model.stages.softmax",
                "return bigv * (expm1_upper(rd) + EXP_ULPS * U)",
                "return bigv * (expm1_upper(rd))",
            ),
        ),
    ),
    Mutant(
        "softmax_sum_rounding",
        "softmax: the denominator sum's rounding (s + 1) U tot dropped",
        (("verify.model.stages.softmax", "return (rsum + (s + 1) * U * tot)", "return (rsum)"),),
    ),
    Mutant(
        "rsqrt_rounding",
        "layer norm: the rounding of sqrt and the division, 4 U z, dropped from r_z",
        (("verify.model.stages.layer_norm", "* (1 - 4 * U)) + 4 * U * z", "* (1 - 4 * U))"),),
    ),
    Mutant(
        "ln_mean_rounding",
        "layer norm: the mean's rounding (d + 1) U sum |v| dropped",
        (
            (
                "verify.model.stages.layer_norm",
                "rmean[b] = ((rmean[b] + (d + 1) * U * acc[b]) / d",
                "rmean[b] = ((rmean[b]) / d",
            ),
        ),
    ),
    Mutant(
        "residual_rounding",
        "residual addition: its rounding U |y + a| dropped",
        (
            (
                "verify.model.stages.dense",
                "ry[i, b] = (ry[i, b] + ra[i, b] + U * abs(s)) * (1 + 2 * U)",
                "ry[i, b] = (ry[i, b] + ra[i, b]) * (1 + 2 * U)",
            ),
        ),
    ),
    Mutant(
        "layer0_accumulation",
        "layer 0 attention from the tables: the accumulation's rounding g sum p |v| halved",
        (
            (
                "verify.model.stages.tables",
                "ar[e, b] = (ar[e, b] + g * amag[e, b])",
                "ar[e, b] = (ar[e, b] + g * amag[e, b] / 2)",
            ),
        ),
    ),
    Mutant(
        "weighted_values_rounding",
        "attention (all positions): the weighted sum's rounding (s + 2) U p |v| dropped",
        (("verify.model.stages.attention", "+ (s + 2) * U * pm[j, b] * abs(ve[b])", "+ 0.0"),),
    ),
    Mutant(
        "relu_cut",
        "relu: the radius cut to 0 where the midpoint is < 0 instead of where the ball is <= 0",
        (
            (
                "verify.model.stages.dense",
                "if bounds and x[i, b] + rx[i, b] <= 0.0:",
                "if bounds and x[i, b] < 0.0:",
            ),
        ),
    ),
    Mutant(
        "dd_exp_ln2_low_word",
        "double-double exp: the low word LN2_LO of ln 2 dropped from the reduced argument",
        (
            (
                "verify.model.double_double.dd_arith",
                "rh, rl = dd_add_d(rh, rl, -(k * (LN2_LO / EXP_TABLE)))",
                "rh, rl = dd_add_d(rh, rl, 0.0)",
            ),
        ),
    ),
    Mutant(
        "dd_mul_cross_low_word",
        "double-double product: the cross term xh yl of the low word dropped",
        (("verify.model.double_double.dd_arith", "tl = xh * yl", "tl = 0.0 * yl"),),
    ),
    Mutant(
        "dd_softmax_denominator",
        "double-double softmax: the denominator's radius p (1 + U) r_tot dropped",
        (
            (
                "verify.model.double_double.dd_l2",
                "pr[j, b] = ((pr[j, b] + ap * (1 + U) * rtot) / gap + ae)",
                "pr[j, b] = ((pr[j, b]) / gap + ae)",
            ),
        ),
    ),
    Mutant(
        "dd_layer_norm_z_error",
        "double-double layer norm: the z-error term |c| r_z dropped",
        (
            (
                "verify.model.double_double.dd_norm",
                "r = ac * rz + rc * (az + rz)",
                "r = rc * (az + rz)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_layer0_denominator",
        "exhaustive kernel, layer 0's num / den: the denominator's term a1 e_den dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "return ((e_num + a1 * e_den) / low + 3 * U * a1)",
                "return ((e_num) / low + 3 * U * a1)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_sum_rounding",
        "exhaustive layer-0 tables: the sums' rounding (s + 2) U M of E_num and E_G dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_pass",
                "err = sum_upper(r_sum + (s + 2) * U * m_sum, 3)",
                "err = sum_upper(r_sum, 3)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_value_radius",
        "exhaustive layer-0 tables: the values' radii (e + r(e)) r(V) dropped from E_num, E_G",
        (
            (
                "verify.model.exhaustive.exhaustive_pass",
                "(sce_r * vm + (sce_m + sce_r) * vr)",
                "(sce_r * vm)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_den_radius",
        "exhaustive layer-0 tables: the exp tables' radii R_den dropped from E_den",
        (
            (
                "verify.model.exhaustive.exhaustive_pass",
                "e_den = sum_upper(r_den + (s + 1) * U * m_den, 3)",
                "e_den = sum_upper((s + 1) * U * m_den, 3)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_g0_radius",
        "exhaustive layer-0 tables: the radius of g0 = M (y0 + b_o) halved",
        (
            (
                "verify.model.exhaustive.exhaustive_pass",
                "g0_bound[..., BD_RAD] = g0.rad.max(axis=2)",
                "g0_bound[..., BD_RAD] = g0.rad.max(axis=2) / 2",
            ),
        ),
    ),
    Mutant(
        "exhaustive_quotient_low",
        "exhaustive kernel, layer 0: the argument low without E_den (den instead of den - E_den)",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "low = (den[b] - e_den) * (1 - U)",
                "low = den[b] * (1 - U)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_quotient_a1",
        "exhaustive kernel, layer 0: the argument A_1 (a bound of |A| over the ball) without E_num",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "a1 = (a_max * (den[b] + e_den) + e_num) / den[b]",
                "a1 = (a_max * (den[b] + e_den)) / den[b]",
            ),
        ),
    ),
    Mutant(
        "exhaustive_quotient_numerator",
        "exhaustive kernel, layer 0: E_num not passed to the quotient rule (0 instead)",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "ra_sum[b] += table_quotient_radius(e_num, e_den, a1, low)",
                "ra_sum[b] += table_quotient_radius(0.0, e_den, a1, low)",
            ),
        ),
    ),
    Mutant(
        "exhaustive_attention_bias_rounding",
        "exhaustive kernel, layer 0: max|b_o| dropped from (H + 2) U (max|b_o| + sum A_1)",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "(n_heads + 2) * U * (wb.out_bias0_max + a1_sum[b])",
                "(n_heads + 2) * U * (a1_sum[b])",
            ),
        ),
    ),
    Mutant(
        "exhaustive_hidden_tables_radius",
        "exhaustive kernel, MLP from the tables: the radii of G_h / den_h dropped from r_b",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "l0.g0_bound[tg, i, BD_RAD] + rg_sum[b]",
                "l0.g0_bound[tg, i, BD_RAD]",
            ),
        ),
    ),
    Mutant(
        "exhaustive_hidden_z_error",
        "exhaustive kernel, MLP from the tables: the z-error term r_z (b_max + r_b) dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "rz[b] * (bmax + r_b) + z[b] * r_b + c0rad",
                "z[b] * r_b + c0rad",
            ),
        ),
    ),
    Mutant(
        "exhaustive_hidden_propagated",
        "exhaustive kernel, MLP from the tables: the propagated term z r_b dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "rz[b] * (bmax + r_b) + z[b] * r_b + c0rad",
                "rz[b] * (bmax + r_b) + c0rad",
            ),
        ),
    ),
    Mutant(
        "exhaustive_hidden_c0_radius",
        "exhaustive kernel, MLP from the tables: the radius of c0 = W_1 bias + b_1 dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "rz[b] * (bmax + r_b) + z[b] * r_b + c0rad",
                "rz[b] * (bmax + r_b) + z[b] * r_b",
            ),
        ),
    ),
    Mutant(
        "exhaustive_hidden_rounding",
        "exhaustive kernel, MLP from the tables: the rounding 2 U (z b_max + c0max) dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "+ 2 * U * (z[b] * bmax + c0max)",
                "+ 0.0",
            ),
        ),
    ),
    Mutant(
        "exhaustive_readout_propagated",
        "exhaustive kernel, readout: the propagated radius |w| r_y dropped",
        (
            (
                "verify.model.exhaustive.exhaustive_kernel",
                "w_rad * yr[r, b] + (d + 2) * U",
                "(d + 2) * U",
            ),
        ),
    ),
    Mutant(
        "dd_attention_value_term",
        "double-double attention: the values' term sum_j (|p_j| + r_p,j) rho_v,j halved",
        (
            (
                "verify.model.double_double.dd_l2",
                "nk[b] += pw * rq[j, 2 * n_heads + hd, b]",
                "nk[b] += pw * rq[j, 2 * n_heads + hd, b] / 2",
            ),
        ),
    ),
    Mutant(
        "dd_attention_key_radius",
        "double-double attention: the score radius's term |q| r_k dropped",
        (
            (
                "verify.model.double_double.dd_l2",
                "racc = (g_dot * mag[b] + nq[b] * rkj + rqi * nkb + rqi * rkj)",
                "racc = (g_dot * mag[b] + rqi * nkb + rqi * rkj)",
            ),
        ),
    ),
    Mutant(
        "dd_attention_query_radius",
        "double-double attention: the score radius's term r_q |k| dropped",
        (
            (
                "verify.model.double_double.dd_l2",
                "racc = (g_dot * mag[b] + nq[b] * rkj + rqi * nkb + rqi * rkj)",
                "racc = (g_dot * mag[b] + nq[b] * rkj + rqi * rkj)",
            ),
        ),
    ),
    Mutant(
        "dd_attention_jacobian",
        "double-double attention: the softmax Jacobian term sum_j w_j |v_j - a| halved",
        (
            (
                "verify.model.double_double.dd_l2",
                "acc_l[b] += sig[j, b] * dv + p0[j, b]",
                "acc_l[b] += sig[j, b] * dv / 2 + p0[j, b]",
            ),
        ),
    ),
    Mutant(
        "dd_readout_spectral_norm",
        "double-double tier: the readout's |w|_2 (its spectral-norm bound) halved",
        (
            (
                "verify.model.double_double.dd_pass",
                "readout_norms=f64([spectral_norm_upper(w[None, :]),",
                "readout_norms=f64([spectral_norm_upper(w[None, :]) / 2,",
            ),
        ),
    ),
    Mutant(
        "dd_block_frobenius_norm",
        "double-double tier: the blocks' Frobenius-norm bounds (matvec_dd's rounding) halved",
        (
            (
                "verify.model.double_double.dd_pass",
                "out[layer, :, c] = norm, l2_upper(w), l2_upper(bias)",
                "out[layer, :, c] = norm, l2_upper(w) / 2, l2_upper(bias)",
            ),
        ),
    ),
    Mutant(
        "dd_readout_norm_argument",
        "double-double driver: the readout's |w|_2 passed to matvec_radius halved",
        (
            (
                "verify.model.double_double.dd_kernel",
                "matvec_radius(ry[r], tmp, d, 1, wr[0], wr[1], wr[2], r1)",
                "matvec_radius(ry[r], tmp, d, 1, wr[0] / 2, wr[1], wr[2], r1)",
            ),
        ),
    ),
    Mutant(
        "dd_initial_radius",
        "double-double driver: the embeddings' initial 2-norm radius halved",
        (
            (
                "verify.model.double_double.dd_kernel",
                "ry[i, b] = math.sqrt(sq * (1 + (d + 3) * U) + SQ_SLACK) * (1 + 2 * U)",
                "ry[i, b] = math.sqrt(sq * (1 + (d + 3) * U) + SQ_SLACK) * (1 + 2 * U) / 2",
            ),
        ),
    ),
    Mutant(
        "dd_residual_sum",
        "double-double driver: a residual sum's first radius dropped (_sum3)",
        (
            (
                "verify.model.double_double.dd_kernel",
                "out[b] = (ra[b] + rb[b] + tmp[b]) * (1 + 2 * U)",
                "out[b] = (rb[b] + tmp[b]) * (1 + 2 * U)",
            ),
        ),
    ),
    Mutant(
        "dd_matvec_spectral_term",
        "double-double matvec_radius: the propagated term |W|_2 rho halved",
        (
            (
                "verify.model.double_double.dd_l2",
                "out[b] = (spec * rho[b] + rr) * (1 + 2 * U)",
                "out[b] = (spec * rho[b] / 2 + rr) * (1 + 2 * U)",
            ),
        ),
    ),
    Mutant(
        "spectral_root_rounding",
        "spectral-norm bound: the root's rounding up (1 + 2U) after each square root dropped",
        (
            (
                "verify.model.arithmetic.matrix_norms",
                "x = np.sqrt(x) * (1 + 2 * U)",
                "x = np.sqrt(x)",
            ),
        ),
    ),
)

# ---- issue 44: the annotated-transformer layer norm (ln_form="annotated") -----------------
# Its formula (verify.model.generic.reference.layer_norm_ctx) and the MidRad rules it adds
# (verify.model.arithmetic.contexts: sqrt_nonneg), and the fail-closed guard of the torch-only
# passes; killed by tests/test_radius_ln_forms.py.
LN_FORM_MUTANTS = (
    Mutant(
        "ln_annotated_biased_std",
        "annotated layer norm: the std divided by D instead of D - 1 (torch's biased variance)",
        (
            (
                "verify.model.generic.reference",
                "ctx.sqrt_nonneg(squares / (d - 1))",
                "ctx.sqrt_nonneg(squares / d)",
            ),
        ),
    ),
    Mutant(
        "ln_annotated_eps_inside_root",
        "annotated layer norm: eps inside the square root (torch's place) instead of on the std",
        (
            (
                "verify.model.generic.reference",
                "z = ctx.reciprocal(ctx.sqrt_nonneg(squares / (d - 1)) + eps)",
                "z = ctx.rsqrt(squares / (d - 1) + eps)",
            ),
        ),
    ),
    Mutant(
        "sqrt_nonneg_rounding",
        "MidRad sqrt: the rounding term U mid of the computed square root dropped",
        (
            (
                "verify.model.arithmetic.contexts",
                "rad = np.minimum(linear, np.sqrt(x.rad) * (1 + 2 * U)) + U * mid",
                "rad = np.minimum(linear, np.sqrt(x.rad) * (1 + 2 * U))",
            ),
        ),
    ),
    Mutant(
        "sqrt_nonneg_linear_halved",
        "MidRad sqrt: the linear term r / (sqrt(low) + sqrt(m)) halved",
        (
            (
                "verify.model.arithmetic.contexts",
                "x.rad / den * (1 + U)",
                "x.rad / den * (1 + U) / 2",
            ),
        ),
    ),
    Mutant(
        "sqrt_nonneg_hoelder_halved",
        "MidRad sqrt: the Hoelder term sqrt(r) halved",
        (
            (
                "verify.model.arithmetic.contexts",
                "np.sqrt(x.rad) * (1 + 2 * U)) + U * mid",
                "np.sqrt(x.rad) * (1 + 2 * U) / 2) + U * mid",
            ),
        ),
    ),
    Mutant(
        "sqrt_nonneg_low_at_midpoint",
        "MidRad sqrt: the ball's low end replaced by its midpoint (linearised at m)",
        (
            (
                "verify.model.arithmetic.contexts",
                "low = np.maximum(x.mid - x.rad, 0.0) * (1 - 2 * U)",
                "low = np.maximum(x.mid, 0.0) * (1 - 2 * U)",
            ),
        ),
    ),
    Mutant(
        "ln_form_guard_dropped",
        "the torch-only passes' guard: require_torch_form lets every form through",
        (
            (
                "verify.model.spec.ln_forms",
                'if form != "torch":\n        raise',
                "if False:\n        raise",
            ),
        ),
    ),
)
MUTANTS = MUTANTS + LN_FORM_MUTANTS
# ---- end of issue 44's block --------------------------------------------------------------

# ---------------- issue 41's block: the double-double tier, the exhaustive kernel at L >= 2 and
# the sub-cube bounds (tests/_radius_mutants_tiers.py)
MUTANTS = MUTANTS + tuple(Mutant(name, what, edits) for name, what, edits in tier_mutants.MUTANTS)

# ---- issue 40: the threshold shift (verify.model.spec.label_rule.relative_to_threshold) ----------
THRESHOLD_MUTANTS = (
    Mutant(
        "threshold_rounding_dropped",
        "T - threshold: the rounding error of the subtraction not added to the radius",
        (
            (
                "verify.model.spec.label_rule",
                "r = np.where(err == 0.0, r, np.nextafter(r + err, np.inf))",
                "r = np.where(err == 0.0, r, r)",
            ),
        ),
    ),
    Mutant(
        "threshold_twosum_half",
        "T - threshold: TwoSum's error keeps only the first operand's part",
        (
            (
                "verify.model.spec.label_rule",
                "err = np.abs((a - a_virtual) + (b - b_virtual))",
                "err = np.abs(a - a_virtual)",
            ),
        ),
    ),
)
MUTANTS = MUTANTS + THRESHOLD_MUTANTS
# ---- end of issue 40's block --------------------------------------------------------------

BY_NAME = {m.name: m for m in MUTANTS}


def _exact_fma(a: float, b: float, c: float) -> float:
    """a b + c rounded once (float(Fraction) rounds to nearest), for dd.fma without the JIT."""
    if not all(map(_finite, (a, b, c))):
        return a * b + c
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")


def _ln_block(v, out, ls, gain, bias, eps, bounds, affine, annotated) -> None:
    """``register_sums.ln_block`` in numpy (its documented sums, each sequential over the rows),
    for the exhaustive kernel without the JIT."""
    from verify.model.stages import register_sums as rs

    d = v.shape[0]
    mean = np.zeros(v.shape[1])
    for i in range(d):
        mean = mean + v[i]
    mean = mean / d
    ss, sabs, csum, sc, cmax = (np.zeros(v.shape[1]) for _ in range(5))
    for i in range(d):
        c = v[i] - mean
        out[i] = c
        ss = ss + c * c
        sabs, csum, sc = sabs + np.abs(v[i]), csum + np.abs(c), sc + (c + 0.0)
        cmax = np.where(np.abs(c) > cmax, np.abs(c), cmax)  # NaN skipped
    ls[rs.LS_MEAN], ls[rs.LS_SS], ls[rs.LS_VAR] = mean, ss, ss / d
    with np.errstate(all="ignore"):
        if annotated:  # the annotated form: 1 / (std_unbiased + eps)
            ls[rs.LS_Z] = 1.0 / (np.sqrt(ss / (d - 1)) + eps)
        else:
            ls[rs.LS_Z] = 1.0 / np.sqrt(ls[rs.LS_VAR] + eps)
    if bounds:
        ls[rs.LS_SABS], ls[rs.LS_CSUM], ls[rs.LS_SC], ls[rs.LS_CMAX] = sabs, csum, sc, cmax
    if affine:
        for i in range(d):
            out[i] = out[i] * ls[rs.LS_Z] * gain[i] + bias[i]


def _mlp_rows(n_rows: int):
    """``simd.mlp_rows<n_rows>`` in numpy (``tables.mlp_from_tables``'s documented operations,
    without FMA: within the same rounding bound), for the exhaustive kernel without the JIT."""

    def rows(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j0) -> None:
        nb = lo.shape[2]
        one = ((np.arange(nb) >> i) & sel) != 0
        acc = [np.full(nb, b2[j0 + r]) for r in range(n_rows)]
        xm = np.zeros(nb)
        for e in range(g0a.shape[0]):
            u = np.where(one, g0b[e], g0a[e])
            for hd in range(lo.shape[0]):
                u = (
                    u
                    + (lo[hd, off + e] + np.where(one, hi[1, hd, off + e], hi[0, hd, off + e]))
                    * iv[hd]
                )
            u = u * z + c0[e]
            u = np.where(u < 0.0, 0.0, u)
            xm = np.where(u > xm, u, xm)
            for r in range(n_rows):
                acc[r] = w2t[e, j0 + r] * u + acc[r]
        for r in range(n_rows):
            out[j0 + r] = acc[r]
        xmax[:] = xm

    return rows


def install_python_intrinsics() -> None:
    """Without the JIT: Python bodies for the register intrinsics the one-layer exhaustive
    kernel calls (``ln_block``, ``mlp_rows*``) and an exact one for dd's ``fma``."""
    importlib.import_module("verify.model.double_double.dd_arith")
    importlib.import_module("verify.model.exhaustive.exhaustive_kernel")
    bodies = {"fma": _exact_fma, "ln_block": _ln_block}
    bodies.update({f"mlp_rows{n}": _mlp_rows(n) for n in (16, 8, 4, 1)})
    bodies.update(tier_mutants.INTRINSICS)  # the exhaustive kernel at L >= 2 (issue 41)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("verify"):
            for name, body in bodies.items():
                if hasattr(mod, name):
                    setattr(mod, name, body)


def python_intrinsics_installed() -> bool:
    from verify.model.stages import layer_norm

    return layer_norm.ln_block is _ln_block


def _rebind(old: dict, module: object) -> None:
    """Point every name that a verify module imported from ``module`` at its new object."""
    changed = {id(v): module.__dict__[k] for k, v in old.items() if module.__dict__.get(k) is not v}
    for mod in list(sys.modules.values()):
        if mod is module or not getattr(mod, "__name__", "").startswith("verify"):
            continue
        for k, v in list(vars(mod).items()):
            if id(v) in changed:
                setattr(mod, k, changed[id(v)])


def edit_source(module_name: str, old: str, new: str) -> str:
    """The module's source with ``old`` (which must occur exactly once) replaced by ``new``."""
    module = importlib.import_module(module_name)
    with open(module.__file__, encoding="utf-8") as fh:
        src = fh.read()
    count = src.count(old)
    if count != 1:
        raise LookupError(f"{module_name}: the mutated source occurs {count} times: {old!r}")
    return src.replace(old, new)


def apply(name: str) -> None:
    """Apply the mutant ``name`` in this process (which must run without the JIT)."""
    from numba.core import config

    if not config.DISABLE_JIT:
        raise RuntimeError("radius mutants are applied only with NUMBA_DISABLE_JIT=1")
    mutant = BY_NAME[name]
    for module_name, old, new in mutant.edits:
        module = importlib.import_module(module_name)
        src = edit_source(module_name, old, new)
        snapshot = dict(module.__dict__)
        exec(compile(src, module.__file__, "exec"), module.__dict__)
        _rebind(snapshot, module)
    for module_name, const, factor in mutant.constants:
        module = importlib.import_module(module_name)
        setattr(module, const, getattr(module, const) * factor)


def pytest_configure(config: object) -> None:
    """Without the JIT, give dd's fma a Python body; apply $VERIFY_RADIUS_MUTANT if set."""
    from numba.core import config as nconfig

    name = os.environ.get("VERIFY_RADIUS_MUTANT")
    if name:
        apply(name)
    if nconfig.DISABLE_JIT:
        install_python_intrinsics()


def pytest_runtest_logreport(report: object) -> None:
    """Append each failed test (id, crash message, and whether it is a ``tier_count`` test) to
    $VERIFY_RADIUS_MUTANT_REPORT."""
    path = os.environ.get("VERIFY_RADIUS_MUTANT_REPORT")
    if path and report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)
        record = {
            "test": report.nodeid, "when": report.when, "message": message,
            "tier_count": "tier_count" in report.keywords,
        }  # fmt: skip
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record))
            fh.write("\n")
