"""Radius mutants of the tiers issue 41 covers (the double-double tier, the exhaustive kernel's
layers 1..L-1 and its layer-0 to 2-norm transition, the sub-cube bounds), and the Python bodies
of the register intrinsics the exhaustive kernel calls at L >= 2 (``dots_rows``, ``mix_rows``,
``dist2_rows``, ``norms_rows``, ``simd.rows*``), so that it runs without the JIT in the mutation
suite.

``MUTANTS`` holds (name, what, edits) triples; ``tests/_radius_mutants.py`` appends them to its
own list (``Mutant(*m)``). Each is killed by a containment or reference test of
``tests/test_radius_l2_tiers.py`` (named in ``KILLED_BY`` for the report), never by a count of
which tier settled what (the harness reruns a mutant killed by a ``tier_count`` test without
those tests: ``tests/test_radius_mutations.py``).
"""

from __future__ import annotations

import numpy as np


def _dots_rows(a, x, init, out) -> None:
    """out[j, b] = init[b] + sum_k a[k, b] x[j, k, b], sequential over k."""
    for j in range(x.shape[0]):
        acc = init.copy()
        for k in range(x.shape[1]):
            acc = acc + a[k] * x[j, k]
        out[j] = acc


def _mix_rows(p, x, out) -> None:
    """out[k, b] = 0 + sum_j p[j, b] x[j, k, b], sequential over j."""
    for k in range(x.shape[1]):
        acc = np.zeros(x.shape[2])
        for j in range(x.shape[0]):
            acc = acc + p[j] * x[j, k]
        out[k] = acc


def _dist2_rows(x, m, out) -> None:
    """out[j, b] = 0 + sum_k (x[j, k, b] - m[k, b])^2, sequential over k."""
    for j in range(x.shape[0]):
        acc = np.zeros(x.shape[2])
        for k in range(x.shape[1]):
            dx = x[j, k] - m[k]
            acc = acc + dx * dx
        out[j] = acc


def _norms_rows(x, sq, amax) -> None:
    """sq[j, b] = 0 + sum_k (|x[j, k, b]| + 0)^2, amax[j, b] = max_k |x[j, k, b]| (NaN
    skipped), sequential over k."""
    for j in range(x.shape[0]):
        acc = np.zeros(x.shape[2])
        mx = np.zeros(x.shape[2])
        for k in range(x.shape[1]):
            ax = np.abs(x[j, k])
            mx = np.where(ax > mx, ax, mx)
            t = ax + 0.0
            acc = acc + t * t
        sq[j] = acc
        amax[j] = mx


def _rows(n_rows: int):
    """``simd.rows<n_rows>`` in numpy: out[jo + r] = bias[jw + r] + sum_k W[jw + r, k] x[k]
    (without FMA: within the same rounding bound, which holds for any order)."""

    def rows(x, w, bias, jw, out, jo) -> None:
        for r in range(n_rows):
            acc = np.full(x.shape[1], bias[jw + r])
            for k in range(x.shape[0]):
                acc = w[k, jw + r] * x[k] + acc
            out[jo + r] = acc

    return rows


def _dots_rows2(a, a2, x, init, init2, out, out2) -> None:
    """``dots_rows`` twice (issue 40's two-head intrinsic)."""
    _dots_rows(a, x, init, out)
    _dots_rows(a2, x, init2, out2)


def _mix_rows2(p, p2, x, out, out2) -> None:
    """``mix_rows`` twice (issue 40's two-head intrinsic)."""
    _mix_rows(p, x, out)
    _mix_rows(p2, x, out2)


INTRINSICS = {
    **{f"rows{n}": _rows(n) for n in (16, 8, 4, 1)},
    "dots_rows": _dots_rows,
    "dots_rows2": _dots_rows2,
    "mix_rows": _mix_rows,
    "mix_rows2": _mix_rows2,
    "dist2_rows": _dist2_rows,
    "norms_rows": _norms_rows,
}

DD = "verify.model.double_double.dd_kernel"
DL2 = "verify.model.double_double.dd_l2"
L2B = "verify.model.stages.l2_bounds"
ST = "verify.model.stages.stage_l2"
POS = "verify.model.stages.position"
ATT = "verify.model.stages.attention"
EXH = "verify.model.exhaustive.exhaustive_kernel"
AFF = "verify.model.subcube.affine"
LNK = "verify.model.stages.layer_norm"
DDN = "verify.model.double_double.dd_norm"
AFS = "verify.model.subcube.affine_split"

# (name, what, edits): the eight first, then the rest by tier
MUTANTS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = (
    # ---------------- the eight
    (
        "dd_post_ln_norm1_uses_norm2_gain",
        "double-double, post-LN: norm1's Lipschitz bound with norm2's largest gain",
        (
            (
                DD,
                "ln.biases[k1], g1, yh, yl, tr, tmp, ry\n",
                "ln.biases[k1], g2, yh, yl, tr, tmp, ry\n",
            ),
        ),
    ),
    (
        "dd_out_proj_norm_of_query_block",
        "double-double: out_proj's radius from the query block's norms (column 0)",
        (
            (
                DD,
                "_mv_radius(wn, layer, 3 * nhd, rat, tmp, d, d, ra)",
                "_mv_radius(wn, layer, 0, rat, tmp, d, d, ra)",
            ),
        ),
    ),
    (
        "dd_mlp_w1_spectral_dropped",
        "double-double _mlp_l2: the W_1 spectral norm dropped (1 instead)",
        (
            (
                DD,
                "_mv_radius(wn, layer, nh3 + 1, rx, tmp, d, f, rout)",
                "matvec_radius(rx, tmp, d, f, 1.0, "
                "wn[layer, 1, nh3 + 1], wn[layer, 2, nh3 + 1], rout)",
            ),
        ),
    ),
    (
        "dd_attention_softmax_midpoint_rounding",
        "double-double attention_l2: the softmax's rounding at the score midpoints dropped",
        (
            (
                DL2,
                "acc_l[b] += sig[j, b] * dv + p0[j, b] * (abs(vhe[b]) + abs(vle[b]))",
                "acc_l[b] += sig[j, b] * dv",
            ),
        ),
    ),
    (
        "matvec_l2_rounding_without_sqrt_rows",
        "float64 matvec_l2 (exhaustive L >= 2): the rounding term without sqrt(rows)",
        (
            (
                ST,
                "to_l2(rx, one, spec, rout, math.sqrt(r1 - r0) * (1 + 2 * U), rout)",
                "to_l2(rx, one, spec, rout, (1 + 2 * U), rout)",
            ),
        ),
    ),
    (
        "lipschitz_at_the_midpoint",
        "lipschitz_from_sums: the layer norm's Lipschitz constant at the midpoint, not on the ball",
        ((L2B, "t = (t - rho) * (1 - U)", "t = t * (1 - U)"),),
    ),
    (
        "exhaustive_layer0_ffn_without_sqrt_f",
        "exhaustive L >= 2, layer 0's FFN: the hidden radius enters the 2-norm without sqrt(f)",
        (
            (
                EXH,
                "to_l2(rhid, one, w2_spec0 * sq_f, rtmp, sq_d, rtmp)",
                "to_l2(rhid, one, w2_spec0, rtmp, sq_d, rtmp)",
            ),
        ),
    ),
    (
        "subcube_reciprocal_gap_at_midpoint",
        "sub-cube affine reciprocal: the gap |x| - t taken at the midpoint (|m|)",
        (
            (
                AFF,
                "gap = (np.abs(self.mid) - t) * (1 - U)  # <= |x| on the whole set",
                "gap = np.abs(self.mid) * (1 - U)",
            ),
        ),
    ),
    # ---------------- double-double tier
    (
        "dd_pre_ln_norm1_uses_norm2_gain",
        "double-double, pre-LN: norm1's (attention inputs) Lipschitz bound with norm2's gain",
        (
            (
                DD,
                "gm[k1], xh[j], xl[j], tr, tmp, rx[j])",
                "gm[k1 + 1], xh[j], xl[j], tr, tmp, rx[j])",
            ),
        ),
    ),
    (
        "dd_pre_ln_norm2_uses_norm1_gain",
        "double-double, pre-LN: norm2's (FFN inputs) Lipschitz bound with norm1's gain",
        (
            (
                DD,
                "ln.biases[k1 + 1], g2, th, tl, tr, tmp, r1\n",
                "ln.biases[k1 + 1], g1, th, tl, tr, tmp, r1\n",
            ),
        ),
    ),
    (
        "dd_post_ln_norm2_uses_norm1_gain",
        "double-double, post-LN: norm2's Lipschitz bound with norm1's gain",
        (
            (
                DD,
                "ln.biases[k1 + 1], g2, yh, yl, tr, tmp, ry\n",
                "ln.biases[k1 + 1], g1, yh, yl, tr, tmp, ry\n",
            ),
        ),
    ),
    (
        "dd_final_norm_uses_first_gain",
        "double-double: the final norm's Lipschitz bound with layer 0's norm1 gain",
        (
            (
                DD,
                "sc.ln_annotated, ln.biases[k],\n                         gm[k],",
                "sc.ln_annotated, ln.biases[k],\n                         gm[0],",
            ),
        ),
    ),
    (
        "dd_mlp_w2_spectral_dropped",
        "double-double _mlp_l2: the W_2 spectral norm dropped (1 instead)",
        (
            (
                DD,
                "_mv_radius(wn, layer, nh3 + 2, rout, tmp, f, d, rout)",
                "matvec_radius(rout, tmp, f, d, 1.0, "
                "wn[layer, 1, nh3 + 2], wn[layer, 2, nh3 + 2], rout)",
            ),
        ),
    ),
    (
        "dd_qkv_blocks_use_query_norms",
        "double-double: every q/k/v block's radius from its head's query block norm",
        (
            (
                DD,
                "_mv_radius(wn, layer, c, src, tmp, d, dh, rq[j, c])",
                "_mv_radius(wn, layer, c % nhd, src, tmp, d, dh, rq[j, c])",
            ),
        ),
    ),
    (
        "dd_residual_sum_second_radius",
        "double-double driver: a residual sum's second radius dropped (_sum3)",
        (
            (
                DD,
                "out[b] = (ra[b] + rb[b] + tmp[b]) * (1 + 2 * U)",
                "out[b] = (ra[b] + tmp[b]) * (1 + 2 * U)",
            ),
        ),
    ),
    (
        "dd_norm_l2_lipschitz_halved",
        "double-double _norm_l2: the propagated term Lip rho halved",
        (
            (
                DD,
                "rout[b] = (rout[b] * rv[b] + tmp[b]) * (1 + 2 * U)",
                "rout[b] = (rout[b] * rv[b] / 2 + tmp[b]) * (1 + 2 * U)",
            ),
        ),
    ),
    (
        "lipschitz_without_gain",
        "lipschitz_from_sums: max|gain| not applied (the constant of the unit-gain norm)",
        (
            (
                L2B,
                "return gmax / (math.sqrt(den) * (1 - 2 * U)) * (1 + 2 * U)",
                "return 1.0 / (math.sqrt(den) * (1 - 2 * U)) * (1 + 2 * U)",
            ),
        ),
    ),
    (
        "dd_attention_wsum_term",
        "double-double attention_l2: the term wsum A_e (|a_e - vbar(xi)|) dropped",
        (
            (
                DL2,
                "t1 = acc_l[b] * (1 + (3 * s + 6) * U) + wsum[b] * (1 + (s + 3) * U) * acc_h[b]",
                "t1 = acc_l[b] * (1 + (3 * s + 6) * U)",
            ),
        ),
    ),
    (
        "dd_attention_heads_sum",
        "double-double attention_l2: the 2-norm over heads divided by the number of heads",
        (
            (
                DL2,
                "rat[b] = math.sqrt(tot[b] * (1 + (n_heads + 3) * U) + SQ_SLACK) * (1 + 2 * U)",
                "rat[b] = math.sqrt(tot[b] * (1 + (n_heads + 3) * U) + SQ_SLACK) * (1 + 2 * U)"
                " / n_heads",
            ),
        ),
    ),
    (
        "dd_softmax_score_radius_halved",
        "double-double softmax_l2: the score radius sig halved in the exponentials' radius",
        (
            (
                DL2,
                "em = expm1_upper((sig[j, b] + r_add) * (1 + 2 * U))",
                "em = expm1_upper((sig[j, b] / 2 + r_add) * (1 + 2 * U))",
            ),
        ),
    ),
    # ---------------- exhaustive kernel, L >= 2
    (
        "layer_norm_l2_rounding_without_sqrt_d",
        "float64 layer_norm_l2: the rounding term without sqrt(d)",
        (
            (
                ST,
                "to_l2(rv, lip, 1.0, rout, math.sqrt(v.shape[0]) * (1 + 2 * U), rout)",
                "to_l2(rv, lip, 1.0, rout, (1 + 2 * U), rout)",
            ),
        ),
    ),
    (
        "layer_norm_l2_lipschitz_at_midpoint",
        "float64 layer_norm_l2: the Lipschitz constant asked for a zero ball (at the midpoint)",
        (
            (
                ST,
                "ls[LS_SS, b], 2.0 * ls[LS_CSUM, b], ls[LS_SC, b], rv[b], d, eps, annotated, gmax",
                "ls[LS_SS, b], 2.0 * ls[LS_CSUM, b], ls[LS_SC, b], 0.0, d, eps, annotated, gmax",
            ),
        ),
    ),
    (
        "exhaustive_post_ln_norm1_uses_norm2_gain",
        "exhaustive L >= 2, post-LN: LN1's Lipschitz bound with LN2's largest gain",
        (
            (
                POS,
                "a, rho, g1, bb1, nm[NB_LN1_GAIN], nm[NB_LN1_BIAS], eps, ann, y, ry,",
                "a, rho, g1, bb1, nm[NB_LN2_GAIN], nm[NB_LN1_BIAS], eps, ann, y, ry,",
            ),
        ),
    ),
    (
        "exhaustive_norm2_uses_norm1_gain",
        "exhaustive L >= 2: LN2's Lipschitz bound with LN1's largest gain (both orders)",
        (
            (
                POS,
                "y, rho, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, ann, tmp, rtmp, ls, zero,",
                "y, rho, g2, bb2, nm[NB_LN1_GAIN], nm[NB_LN2_BIAS], eps, ann, tmp, rtmp, ls, zero,",
            ),
            (
                POS,
                "tmp, rho, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, ann, y, ry, ls, zero,",
                "tmp, rho, g2, bb2, nm[NB_LN1_GAIN], nm[NB_LN2_BIAS], eps, ann, y, ry, ls, zero,",
            ),
        ),
    ),
    (
        "exhaustive_pre_ln_norm1_uses_norm2_gain",
        "exhaustive L >= 2, pre-LN: LN1 (attention inputs) with LN2's largest gain",
        (
            (
                EXH,
                "ym[j], yr[j], gains[k1], biases[k1], nm[NB_LN1_GAIN],",
                "ym[j], yr[j], gains[k1], biases[k1], nm[NB_LN2_GAIN],",
            ),
        ),
    ),
    (
        "exhaustive_final_norm_gain_one",
        "exhaustive L >= 2: the final norm's Lipschitz bound with gain 1",
        (
            (
                EXH,
                "ym[r], yr[r], gf, bf, fn[NB_LN2_GAIN], fn[NB_LN2_BIAS], eps, ann, tmp, rtmp,\n"
                "                        ls, zero, lip, bounds,",
                "ym[r], yr[r], gf, bf, 1.0, fn[NB_LN2_BIAS], eps, ann, tmp, rtmp,\n"
                "                        ls, zero, lip, bounds,",
            ),
        ),
    ),
    (
        "exhaustive_ffn_w1_spectral_dropped",
        "exhaustive L >= 2 _ffn_l2: W_1's spectral norm dropped (1 instead)",
        ((POS, "wn[WN_SPEC, 3 * nh + 1], hid, rhid,", "1.0, hid, rhid,"),),
    ),
    (
        "exhaustive_ffn_w2_spectral_dropped",
        "exhaustive L >= 2 _ffn_l2: W_2's spectral norm dropped (1 instead)",
        ((POS, "wn[WN_SPEC, 3 * nh + 2], out, rout,", "1.0, out, rout,"),),
    ),
    (
        "exhaustive_out_proj_norm_of_query_block",
        "exhaustive L >= 2: out_proj's spectral norm from the query block's (column 0)",
        ((POS, "wn[WN_SPEC, 3 * nh], a, ra,", "wn[WN_SPEC, 0], a, ra,"),),
    ),
    (
        "exhaustive_post_ln_skip_radius",
        "exhaustive L >= 2, post-LN: h's radius dropped from h + FFN(h)",
        ((POS, "to_l2(lip, one, 1.0, ry, 1.0, rho)", "to_l2(lip, one, 1.0, ry, 0.0, rho)"),),
    ),
    (
        "exhaustive_pre_ln_skip_radius",
        "exhaustive L >= 2, pre-LN: h's radius dropped from h + FFN(LN2(h))",
        ((POS, "to_l2(lip, one, 1.0, rho, 1.0, lip)", "to_l2(lip, one, 1.0, rho, 0.0, lip)"),),
    ),
    (
        "exhaustive_residual_input_radius",
        "exhaustive L >= 2: the residual input's radius dropped from y + MHA",
        ((POS, "rho[b] = (ry[b] + ra[b]) * (1 + U)", "rho[b] = (ra[b]) * (1 + U)"),),
    ),
    (
        "exhaustive_value_block_norm_of_query",
        "exhaustive attention_row_l2: the value block's spectral norm from the query block's",
        ((ATT, "wv2 = wn[WN_SPEC, 2 * n_heads + hd]", "wv2 = wn[WN_SPEC, hd]"),),
    ),
    (
        "exhaustive_attention_key_bias",
        "exhaustive attention_row_l2: |b_k|_2 dropped from the bound of |k'_j|_2",
        (
            (
                ATT,
                "kj = (wk2 * (xn[j, b] + rho[j, b]) + bk2) * (1 + 3 * U)",
                "kj = (wk2 * (xn[j, b] + rho[j, b])) * (1 + 3 * U)",
            ),
        ),
    ),
    (
        "exhaustive_attention_value_input_halved",
        "exhaustive attention_row_l2: the inputs' term sum_j (p_j + r_j) rho_j halved",
        (
            (
                ATT,
                "e_sum[b] += (pj + rj) * rho[j, b] + p0[j, b] * xnj + gx",
                "e_sum[b] += (pj + rj) * rho[j, b] / 2 + p0[j, b] * xnj + gx",
            ),
        ),
    ),
    (
        "exhaustive_attention_jacobian_halved",
        "exhaustive attention_row_l2: the softmax Jacobian term halved",
        (
            (
                ATT,
                "e_sum[b] += (pm[j, b] + pr[j, b]) * sig[j, b] * (dist + a_sum[b])",
                "e_sum[b] += (pm[j, b] + pr[j, b]) * sig[j, b] * (dist / 2 + a_sum[b])",
            ),
        ),
    ),
    (
        "exhaustive_attention_value_rounding_without_sqrt_dh",
        "exhaustive attention_row_l2: the value product's rounding without sqrt(d_h)",
        (
            (
                ATT,
                "eh = (wv2 * e_sum[b] * (1 + (4 * s + 8) * U) + sq_dh * rq[b]) * (1 + 3 * U)",
                "eh = (wv2 * e_sum[b] * (1 + (4 * s + 8) * U) + rq[b]) * (1 + 3 * U)",
            ),
        ),
    ),
    (
        "exhaustive_attention_query_error_halved",
        "exhaustive attention_row_l2: the query's data error |W_q|_2 rho_i halved",
        ((ATT, "dq[b] = wq2 * rho[i, b] * (1 + U)", "dq[b] = wq2 * rho[i, b] * (1 + U) / 2"),),
    ),
    (
        "exhaustive_layer0_residual_without_sqrt_d",
        "exhaustive L >= 2, layer 0: the residual stream's scalar radius without sqrt(d)",
        (
            (
                EXH,
                "rho[b] = (rtmp[b] + sq_d * yr[i, b]) * (1 + U)",
                "rho[b] = (rtmp[b] + yr[i, b]) * (1 + U)",
            ),
        ),
    ),
    (
        "exhaustive_readout_l2_halved",
        "exhaustive L >= 2: the readout's |w|_2 halved",
        (
            (
                EXH,
                "w_rad = wb.readout_l2 if l2 else wsum",
                "w_rad = wb.readout_l2 / 2 if l2 else wsum",
            ),
        ),
    ),
    # ---------------- sub-cube bounds
    (
        "subcube_rsqrt_gap_at_midpoint",
        "sub-cube affine rsqrt: the gap m - t taken at the midpoint (m)",
        (
            (
                AFF,
                "gap = (x.mid - t) * (1 - U)  # <= every value of the set",
                "gap = x.mid * (1 - U)",
            ),
        ),
    ),
    (
        "subcube_reciprocal_remainder_dropped",
        "sub-cube affine reciprocal: the remainder T^2 / (m^2 gap) dropped",
        (
            (
                AFF,
                "rest = d2 * self.rad + t * t * d2 / (gap * (1 - U)) + U * np.abs(mid)",
                "rest = d2 * self.rad + U * np.abs(mid)",
            ),
        ),
    ),
    # ---------------- more of the exhaustive kernel's rounding and the sub-cube's remainders
    (
        "exhaustive_residual_rounding_without_sqrt_d",
        "exhaustive L >= 2, post-LN: y + MHA(y)'s rounding enters the 2-norm without sqrt(d)",
        ((POS, "to_l2(rho, one, 1.0, ra, sq_d, rho)", "to_l2(rho, one, 1.0, ra, 1.0, rho)"),),
    ),
    (
        "exhaustive_readout_rounding",
        "exhaustive kernel: the readout's rounding (d + 2) U (|w|_1 max|y| + |omega|) dropped",
        (
            (
                EXH,
                "w_rad * yr[r, b] + (d + 2) * U * (wsum * xmax[b] + abs(omega))",
                "w_rad * yr[r, b]",
            ),
        ),
    ),
    (
        "exhaustive_attention_softmax_midpoint_rounding",
        "exhaustive attention_row_l2: the softmax's rounding at the score midpoints dropped",
        (
            (
                ATT,
                "e_sum[b] += (pj + rj) * rho[j, b] + p0[j, b] * xnj + gx",
                "e_sum[b] += (pj + rj) * rho[j, b] + gx",
            ),
        ),
    ),
    (
        "exhaustive_attention_score_rounding",
        "exhaustive attention_row_l2: the score's rounding rt0 dropped from its radius",
        ((ATT, "(rt0 + rtd) * (cm + cr)", "(rtd) * (cm + cr)"),),
    ),
    (
        "stage_l2_rounding_dropped",
        "stage_l2.to_l2: every 2-norm stage's own rounding sq r0 dropped",
        (
            (
                ST,
                "rho[b] = (lip[b] * k * r_data[b] + sq * r_round[b]) * (1 + 4 * U)",
                "rho[b] = (lip[b] * k * r_data[b]) * (1 + 4 * U)",
            ),
        ),
    ),
    (
        "dd_matvec_rounding_dropped",
        "double-double matvec_radius: matvec_dd's rounding (n + 2)^2 UU (|b| + |W|_F |a|) dropped",
        (
            (
                DL2,
                "out[b] = (spec * rho[b] + rr) * (1 + 2 * U)",
                "out[b] = (spec * rho[b]) * (1 + 2 * U)",
            ),
        ),
    ),
    (
        "subcube_rsqrt_curvature_halved",
        "sub-cube affine rsqrt: the remainder 3 T^2 gap^(-5/2) / 8 halved",
        ((AFF, "curv = 0.375 * t * t", "curv = 0.1875 * t * t"),),
    ),
    (
        "subcube_exp_remainder_halved",
        "sub-cube affine exp: the remainder big (r + rho) halved",
        ((AFF, "rest = rest + big * (x.rad + rho)", "rest = rest + big * (x.rad + rho) / 2"),),
    ),
    # ---------------- issue 44: the annotated layer norm (1 / (std_unbiased + eps)) in the
    # kernels; each killed by a reference or containment test of tests/test_radius_ln_kernels.py
    (
        "annotated_variance_radius_over_d",
        "annotated z radius: the unbiased variance's data radius divided by D (D/(D-1) dropped)",
        (
            (
                LNK,
                "rq = ((acc + (d + 2) * U * ss) / dm1 + 2 * U * q)",
                "rq = ((acc + (d + 2) * U * ss) / d + 2 * U * q)",
            ),
        ),
    ),
    (
        "annotated_radius_eps_inside_sqrt",
        "annotated z radius: t = sqrt(q + eps) (torch's place of eps) instead of sqrt(q) + eps",
        (
            (
                LNK,
                "    t = s + eps\n    return inverse",
                "    t = math.sqrt(q + eps)\n    return inverse",
            ),
        ),
    ),
    (
        "annotated_reciprocal_rounding_dropped",
        "annotated z radius: the rounding 2 U z of 1 / (s + eps) dropped",
        ((LNK, "U * s, t, U * t, 2 * U * z)", "U * s, t, U * t, 0.0)"),),
    ),
    (
        "annotated_sqrt_rounding_dropped",
        "annotated z radius: the rounding U s of the square root dropped",
        ((LNK, "inverse_std_radius(q, rq, s, U * s,", "inverse_std_radius(q, rq, s, 0.0,"),),
    ),
    (
        "annotated_add_eps_rounding_dropped",
        "annotated z radius: the rounding U t of s + eps dropped",
        ((LNK, "s, U * s, t, U * t, 2", "s, U * s, t, 0.0, 2"),),
    ),
    (
        "annotated_sqrt_ball_low_at_midpoint",
        "sqrt of the variance ball: its low end taken at the midpoint (linear term too small)",
        ((L2B, "low = max(q_low - rq, 0.0) * (1 - 2 * U)", "low = q_low * (1 - 2 * U)"),),
    ),
    (
        "annotated_sqrt_ball_hoelder_halved",
        "sqrt of the variance ball: the term sqrt(r) near 0 halved",
        (
            (
                L2B,
                "return min(lin, math.sqrt(rq) * (1 + 2 * U))",
                "return min(lin, 0.5 * math.sqrt(rq) * (1 + 2 * U))",
            ),
        ),
    ),
    (
        "annotated_reciprocal_low_at_midpoint",
        "1 / t over the ball of t: its low end t - r_t taken at t",
        ((L2B, "low = (t_low - rt) * (1 - U)", "low = t_low * (1 - U)"),),
    ),
    (
        "annotated_lipschitz_eps_inside_sqrt",
        "annotated Lipschitz constant: max|a| / sqrt(t^2 / (D - 1) + eps) (torch's shape)",
        (
            (
                L2B,
                "den = (t / math.sqrt(d - 1) * (1 - 3 * U) + eps) * (1 - U)",
                "den = math.sqrt(t * t / (d - 1) + eps) * (1 - U)",
            ),
        ),
    ),
    (
        "annotated_dd_variance_radius_over_d",
        "double-double annotated z radius: the unbiased variance's data radius divided by D",
        ((DDN, "/ (d - 1) + DD_MUL * au", "/ d + DD_MUL * au"),),
    ),
    (
        "annotated_subcube_sqrt_tangent_halved",
        "sub-cube sqrt (annotated std): the chord's upper offset 1 / (4 lam) halved",
        ((AFS, "h_max = 0.25 / lam", "h_max = 0.125 / lam"),),
    ),
    (
        "annotated_subcube_sqrt_range_from_centre",
        "sub-cube sqrt (annotated std): the range's low end at the centre c, not c - W",
        ((AFS, "a = np.maximum(np.nextafter(c - w, -np.inf), 0.0)", "a = np.maximum(c, 0.0)"),),
    ),
)
