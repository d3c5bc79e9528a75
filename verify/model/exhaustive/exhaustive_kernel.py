"""The exhaustive driver: T(x) with a scalar radius for all 2^N strings of one length.

Strings are taken in blocks of ``BS`` = 2^LO_BITS that share their high bits: string index =
lo + BS hi, block = one hi. Arrays hold one feature per row and the BS strings of a block along
the (compile-time constant) last axis, so every loop over strings vectorises.

Layer 0 is assembled from tables. Its attention output at query position i and head h is
A_h = sum_j e_ij(t_j) V_j(t_j) / sum_j e_ij(t_j), with e and V = W_o,h v tabulated over
(token, position) (``verify.model.per_string.per_string_pass.prepare``). The sums over the low
positions j < lo_bits are tabulated once for all 2^lo_bits values of lo
(``verify.model.exhaustive.exhaustive_pass``), the sums over the high positions once per block, so a
string costs O(H (D + d_ff)) per query position instead of O(s H D); the first MLP layer comes from
the same tables as z (g0 + sum_h G_h / den_h) + c0. Layer 0 runs position by position over a group
of ``KB`` blocks, so that a position's low tables are read from memory once per group, not once per
block.

Error radii are one number per vector and string. In layer 0 it is scalar: r with
|exact_k - computed_k| <= r for every component k (an infinity-norm ball). Each rule is the
componentwise rule of the per-string kernel with the magnitudes replaced by their maxima (all
rules are monotone in them), so a matrix-vector product costs one extra pass over x (its max)
instead of a second product with |W| (``stages.dense``). When L >= 2 it is a 2-norm
(|exact - computed|_2 <= r) from layer 0's MLP output on (|W_2|_2 sqrt(f) times the hidden
layer's scalar radius, sqrt(d) times the residual stream's): the attention
(``stages.attention.attention_row_l2``: Cauchy-Schwarz for the scores, the softmax's
Jacobian for the weighted sum), out_proj and the rest of the layer
(``stages.position.finish_position_l2``; the pre-LN norms in front of the attention and the
final norm too) cost their spectral norms and the layer norms' Lipschitz constants on the
ball, plus each stage's own rounding at the computed midpoint (``stages.stage_l2``). The
readout takes |w|_2 times the 2-norm radius (|w|_1 times the scalar one when L = 1).
Rounding model: ``verify.model.arithmetic.rounding``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.attention import SV_ROWS, attention_row_l2, attention_row_mid
from verify.model.stages.bundles import (
    A1,
    BD_MAX,
    BD_RAD,
    BS,
    DIAGNOSTICS,
    EXHAUSTIVE_LAYER0,
    LAYER_WEIGHTS,
    LB_A_MAX,
    LB_E_DEN,
    LB_E_G,
    LB_E_NUM,
    LB_G_MAX,
    NB_B2,
    NB_LN1_BIAS,
    NB_LN1_GAIN,
    NB_LN2_BIAS,
    NB_LN2_GAIN,
    NB_W2,
    NORM_AFFINE,
    READOUT,
    SCALARS,
    WEIGHT_BOUNDS,
    WN_SPEC,
    b1,
    f8,
    i8,
)
from verify.model.stages.dense import (
    add_into_scalar,
    col_absmax,
    matvec_radius,
)
from verify.model.stages.l2_bounds import l2_from_squares
from verify.model.stages.layer_norm import layer_norm_scalar
from verify.model.stages.position import finish_position_l2
from verify.model.stages.register_sums import LS_ROWS, LS_RZ, LS_VAR, LS_Z, norms_rows
from verify.model.stages.stage_l2 import layer_norm_l2, to_l2
from verify.model.stages.tables import add_weighted, fill_rows, mlp_from_tables

EOS = 2  # the eos token
# rows of the layer-0 per-string sums ``l0s``
L0_DEN = 0  # a head's denominator
L0_RA = 1  # sum over heads of the radii of A_h
L0_A1 = 2  # sum over heads of the bounds of |A_h|
L0_RG = 3  # sum over heads of the radii of G_h / den_h
L0_G1 = 4  # sum over heads of the bounds of |G_h / den_h|
L0_ROWS = 5
# blocks whose layer 0 is computed position by position together: a position's low tables
# (``lo_sums[i]``, ~80 KB at d = 16, d_ff = 64, H = 2) are read once per KB blocks instead of
# once per block (all positions' tables, ~3.5 MB at N = 20, do not stay in a 2 MB L2 cache)
KB = 4


@kernel(f8(f8, f8, f8, f8))
def table_quotient_radius(e_num, e_den, a1, low):  # pragma: no cover - jitted
    """A radius of fl(num / den) when |num_exact - num| <= e_num, |den_exact - den| <= e_den,
    low <= den - e_den (rounded down) and a1 >= |num / den| also over the balls:
    |num'/den' - num/den| <= (e_num + a1 e_den) / low, plus 3 U a1 for the division's and the
    sums' own rounding, rounded up; inf when low <= 0 (the denominator's ball reaches 0)."""
    if low > 0:
        return ((e_num + a1 * e_den) / low + 3 * U * a1) * (1 + 4 * U)
    return np.inf


@kernel(
    types.void(
        i8, i8, i8, i8, i8, i8, SCALARS, EXHAUSTIVE_LAYER0, LAYER_WEIGHTS, NORM_AFFINE, READOUT,
        WEIGHT_BOUNDS, b1, A1, A1, DIAGNOSTICS,
    ),
)  # fmt: skip
def exhaustive_chunk(
    chunk, n_chunks, n, lo_bits, blk0, blk1, sc, l0, lw, ln, ro, wb, bounds, t_out, r_out, dg
):  # pragma: no cover - jitted
    """Chunk ``chunk`` of ``n_chunks`` (the blocks blk0 + [chunk, chunk + 1) (blk1 - blk0) /
    n_chunks) of :func:`exhaustive_T`, serial: the parallel driver only spreads the chunks over
    the threads (a prange over this body compiled 3x slower: Numba's parfor passes ran over all
    of it). With ``dg.on``, the last layer (and pre-LN's final norm) runs at every position,
    midpoints only except at the readout position, for the variances of ``dg``."""
    s = n + 1 if sc.eos else n
    norm_first = sc.norm_first
    n_heads = sc.n_heads
    eps = sc.eps
    ann = sc.ln_annotated  # the layer-norm form
    cm = sc.inv_sqrt_dh
    cr = sc.inv_sqrt_dh_rad
    d = l0.y0_mid.shape[2]
    f = lw.lin1_wt.shape[2]
    n_layers = lw.in_wt.shape[0]
    n_norms = ln.gains.shape[0]
    gains = ln.gains
    biases = ln.biases
    y0m, y0r = l0.y0_mid, l0.y0_rad
    sce_m, vo_m, mv_m = l0.exp_scores, l0.values_out, l0.mlp_values
    n_lo = 1 << lo_bits
    n_blk = blk1 - blk0
    l2 = n_layers > 1  # layer 0's output and layers 1..L-1 carry 2-norm radii
    sq_d = math.sqrt(d) * (1 + 2 * U)
    sq_f = math.sqrt(f) * (1 + 2 * U)
    w2_spec0 = wb.l2[0, WN_SPEC, 3 * n_heads + 2]  # |W_2|_2 of layer 0 (inf when L = 1)
    c_lo = chunk * n_blk // n_chunks
    c_hi = (chunk + 1) * n_blk // n_chunks
    diag = dg.on
    # the variances of every norm's input at every position of KB blocks (diagnostics)
    vblk = np.zeros((KB, n_norms, s, BS) if diag else (1, 1, 1, 1))
    lnvar = np.zeros((2, BS))
    qm2 = np.empty((2, d, BS))  # attention_row_mid's scratch: two heads at a time
    um2 = np.empty((2, d, BS))
    pm2 = np.empty((2, s, BS))
    pr2 = np.zeros((2, s, BS))
    bt2 = np.empty((2, BS))
    toks = np.empty((KB, s), dtype=np.int64)  # tokens of the positions >= lo_bits
    yms = np.empty((KB, s, d, BS))  # the residual stream of KB blocks
    yrs = np.zeros((KB, s, BS))
    ynew = np.empty((s, d, BS))
    ynr = np.zeros((s, BS))
    xs = np.empty((s, d, BS))
    xsr = np.zeros((s, BS))
    xsm = np.zeros((s, BS))
    xsn = np.zeros((s, BS))
    am = np.empty((d, BS))
    ar = np.zeros(BS)
    att = np.empty((d, BS))
    ratt = np.zeros(BS)
    hid = np.empty((f, BS))
    rhid = np.zeros(BS)
    tmp = np.empty((d, BS))
    rtmp = np.zeros(BS)
    xmax = np.zeros(BS)
    ls = np.empty((LS_ROWS, BS))
    zero = np.zeros((d, BS))  # stays zero: zero radii and the low part of 2-norm rules
    zero1 = zero[0]
    one = np.ones(BS)
    rho = np.zeros(BS)
    lip = np.zeros(BS)
    pm = np.empty((s, BS))
    pr = np.zeros((s, BS))
    sig = np.zeros((s, BS))
    p0 = np.zeros((s, BS))
    sv = np.zeros((SV_ROWS, BS))
    l0s = np.zeros((L0_ROWS, BS))
    qm = np.empty((d, BS))
    rq = np.zeros(BS)
    um = np.empty((d, BS))
    ru = np.zeros(BS)
    width = d + 1 + f
    hi = np.zeros((2, n_heads, width))  # sums over j >= lo_bits, per query token slot
    inv = np.empty((n_heads, BS))
    den = l0s[L0_DEN]
    ra_sum = l0s[L0_RA]
    a1_sum = l0s[L0_A1]
    rg_sum = l0s[L0_RG]
    g1_sum = l0s[L0_G1]
    for g_off in range(c_lo, c_hi, KB):
        nk = min(KB, c_hi - g_off)
        for kb in range(nk):
            blk = blk0 + g_off + kb
            for j in range(lo_bits, s):
                toks[kb, j] = EOS if j == n else (blk >> (j - lo_bits)) & 1
        # ---------------- layer 0, from the tables
        first_q = 0 if n_layers > 1 or diag else s - 1
        for i in range(first_q, s):
            # radii where the readout needs them: not at the last layer's other positions
            bnd = bounds and (n_layers > 1 or i == s - 1)
            lo_q = i < lo_bits  # the query token varies with lo
            for kb in range(nk):  # the blocks of the group: the tables of i stay in cache
                ym = yms[kb]
                yr = yrs[kb]
                tok_hi = toks[kb]
                tq = 0 if lo_q else tok_hi[i]
                slot = 1 if tq == 1 and not lo_q else 0  # table slot of the query token
                # sums over the high positions: num (0..d-1), den (d), G = M num (d+1..)
                for c in range(2 if lo_q else 1):
                    t_i = c if lo_q else tq
                    for hd in range(n_heads):
                        for e in range(width):
                            hi[c, hd, e] = 0.0
                        for j in range(lo_bits, s):
                            tj = tok_hi[j]
                            ev = sce_m[t_i, i, tj, j, hd]
                            for e in range(d):
                                hi[c, hd, e] += ev * vo_m[tj, j, hd, e]
                            hi[c, hd, d] += ev
                            for e in range(f):
                                hi[c, hd, d + 1 + e] += ev * mv_m[tj, j, hd, e]
                # attention output (after out_proj) into am; per head 1/den into inv
                for e in range(d):
                    for b in range(BS):
                        am[e, b] = lw.out_b[0, e]
                for b in range(BS):
                    ra_sum[b] = 0.0
                    a1_sum[b] = 0.0
                    rg_sum[b] = 0.0
                    g1_sum[b] = 0.0
                for hd in range(n_heads):
                    lt = l0.lo_sums[i, slot, hd]
                    iv = inv[hd]
                    if lo_q:
                        for b in range(BS):
                            den[b] = lt[d, b] + hi[(b >> i) & 1, hd, d]
                            iv[b] = 1.0 / den[b]
                    else:
                        for b in range(BS):
                            den[b] = lt[d, b] + hi[0, hd, d]
                            iv[b] = 1.0 / den[b]
                    add_weighted(am, lt, 0, hi[0, hd], hi[1, hd], 0, d, iv, i, lo_q)
                    if bnd:
                        bd = l0.lo_bound[i, slot, hd]
                        e_num, e_den, a_max = bd[LB_E_NUM], bd[LB_E_DEN], bd[LB_A_MAX]
                        e_g, g_max = bd[LB_E_G], bd[LB_G_MAX]
                        for b in range(BS):
                            low = (den[b] - e_den) * (1 - U)
                            # A_h (bound e_num, magnitude a_max) and G_h / den (e_g, g_max)
                            a1 = (a_max * (den[b] + e_den) + e_num) / den[b] * (1 + 3 * U)
                            g1 = (g_max * (den[b] + e_den) + e_g) / den[b] * (1 + 3 * U)
                            ra_sum[b] += table_quotient_radius(e_num, e_den, a1, low)
                            rg_sum[b] += table_quotient_radius(e_g, e_den, g1, low)
                            a1_sum[b] += a1
                            g1_sum[b] += g1
                if bnd:
                    for b in range(BS):
                        ar[b] = (ra_sum[b] + (n_heads + 2) * U * (wb.out_bias0_max + a1_sum[b])) * (
                            1 + (2 * n_heads + 5) * U
                        ) + ETA
                # the residual stream at i: the embedding of the token at i
                fill_rows(ym[i], y0m[0 if lo_q else tq, i], y0m[1, i], i, lo_q)
                for b in range(BS):
                    yr[i, b] = y0r[(b >> i) & 1 if lo_q else tq, i]
                # the layer norm in front of the MLP (post-LN: LN1, pre-LN: LN2) of d = y + A
                nm = wb.layer[0]
                if norm_first:
                    add_into_scalar(ym[i], yr[i], am, ar, bnd)  # d = h, the residual stream
                    layer_norm_scalar(
                        ym[i], yr[i], gains[1], biases[1], nm[NB_LN2_GAIN], nm[NB_LN2_BIAS],
                        eps, ann, tmp, rtmp, ls, bnd,
                    )  # fmt: skip
                    if diag:  # norm1's input is the embedding; norm2's
                        for b in range(BS):
                            vblk[kb, 0, i, b] = dg.embed_var[(b >> i) & 1 if lo_q else tq, i]
                        vblk[kb, 1, i] = ls[LS_VAR]
                else:
                    add_into_scalar(am, ar, ym[i], yr[i], bnd)
                    layer_norm_scalar(
                        am, ar, gains[0], biases[0], nm[NB_LN1_GAIN], nm[NB_LN1_BIAS], eps, ann,
                        ym[i], yr[i], ls, bnd,
                    )  # ym[i] <- h = LN1(d)  # fmt: skip
                    if diag:
                        vblk[kb, 0, i] = ls[LS_VAR]
                z = ls[LS_Z]
                # MLP hidden pre-activation u = z (g0 + sum_h G_h / den_h) + c0 = W1 LN(d) + b1
                if bnd:
                    rz = ls[LS_RZ]
                    c0max = l0.c0_bound[BD_MAX]
                    c0rad = l0.c0_bound[BD_RAD]
                    for b in range(BS):
                        tg = (b >> i) & 1 if lo_q else tq
                        g0max = l0.g0_bound[tg, i, BD_MAX]
                        r_b = (
                            l0.g0_bound[tg, i, BD_RAD] + rg_sum[b]
                            + (n_heads + 2) * U * (g0max + g1_sum[b])
                        ) * (1 + (2 * n_heads + 5) * U) + ETA  # fmt: skip
                        bmax = (g0max + g1_sum[b]) * (1 + (n_heads + 3) * U)
                        rhid[b] = (
                            rz[b] * (bmax + r_b) + z[b] * r_b + c0rad
                            + 2 * U * (z[b] * bmax + c0max)
                        ) * (1 + 4 * U) + ETA  # fmt: skip
                # u, relu and the second MLP layer with u in registers (stages.simd)
                mlp_from_tables(
                    l0.lo_sums[i, slot], d + 1, hi, inv, z, l0.g0[0 if lo_q else tq, i],
                    l0.g0[1, i], l0.c0, lw.lin2_wt[0], lw.lin2_b[0], tmp, xmax, i, lo_q,
                )  # fmt: skip
                if bnd and l2:  # from here on 2-norm radii (stages.stage_l2)
                    # FFN: |W_2|_2 |relu(u') - relu(u)|_2 <= |W_2|_2 sqrt(f) rhid, plus rounding
                    matvec_radius(f, zero1, xmax, nm[NB_W2], nm[NB_B2], rtmp)
                    to_l2(rhid, one, w2_spec0 * sq_f, rtmp, sq_d, rtmp)
                    for b in range(BS):  # rho: the data error of the residual sum
                        rho[b] = (rtmp[b] + sq_d * yr[i, b]) * (1 + U)
                        rtmp[b] = 0.0
                        yr[i, b] = 0.0
                elif bnd:
                    matvec_radius(f, rhid, xmax, nm[NB_W2], nm[NB_B2], rtmp)
                if norm_first:
                    add_into_scalar(ym[i], yr[i], tmp, rtmp, bnd)  # y' = h + FFN(LN2(h))
                    if bnd and l2:
                        to_l2(rho, one, 1.0, yr[i], sq_d, yr[i])
                else:
                    add_into_scalar(tmp, rtmp, ym[i], yr[i], bnd)  # h + FFN(h)
                    if l2:
                        if bnd:
                            to_l2(rho, one, 1.0, rtmp, sq_d, rho)
                        layer_norm_l2(
                            tmp, rho, gains[1], biases[1], nm[NB_LN2_GAIN], nm[NB_LN2_BIAS],
                            eps, ann, ym[i], yr[i], ls, zero, lip, bnd,
                        )  # fmt: skip
                    else:
                        layer_norm_scalar(
                            tmp, rtmp, gains[1], biases[1], nm[NB_LN2_GAIN], nm[NB_LN2_BIAS],
                            eps, ann, ym[i], yr[i], ls, bnd,
                        )  # fmt: skip
                    if diag:
                        vblk[kb, 1, i] = ls[LS_VAR]
        for kb in range(nk):  # layers 1.. and the readout, block by block
            ym = yms[kb]
            yr = yrs[kb]
            blk_off = g_off + kb
            # ---------------- layers 1..L-1 (the last one at the readout position only, or,
            # with diagnostics, at every position), with 2-norm radii: |y_exact - y|_2 <= yr
            for layer in range(1, n_layers):
                last = layer == n_layers - 1
                k1 = 2 * layer
                nm = wb.layer[layer]
                wn = wb.l2[layer]
                # attention inputs: the stream itself (post-LN) or LN1 of it (pre-LN)
                src = ym
                srcr = yr
                if norm_first:
                    for j in range(s):
                        layer_norm_l2(
                            ym[j], yr[j], gains[k1], biases[k1], nm[NB_LN1_GAIN],
                            nm[NB_LN1_BIAS], eps, ann, xs[j], xsr[j], ls, zero, lip, bounds,
                        )  # fmt: skip
                        if diag:
                            vblk[kb, k1, j] = ls[LS_VAR]
                    src = xs
                    srcr = xsr
                if bounds:
                    norms_rows(src, xsn, xsm)  # max |x_j| and the sum of squares
                    for j in range(s):  # |x_j|_2 as dd_l2.abs_l2
                        for b in range(BS):
                            xsn[j, b] = l2_from_squares(xsn[j, b], d)
                first_i = s - 1 if last and not diag else 0
                for i in range(first_i, s):
                    # radii where the readout needs them: not at the last layer's other positions
                    bnd = bounds and (not last or i == s - 1)
                    if bnd:
                        attention_row_l2(
                            src, srcr, xsm, xsn, i, lw.in_wt[layer], lw.in_b[layer],
                            lw.keys_w[layer], lw.zero_d, wb.head[layer], wn, n_heads, cm, cr,
                            zero1, att, ratt, qm, rq, um, ru, pm, pr, sig, p0, sv, bnd,
                        )  # fmt: skip
                    else:  # the same midpoints, two heads per pass over the inputs
                        attention_row_mid(
                            src, i, lw.in_wt[layer], lw.in_b[layer], lw.keys_w[layer], lw.zero_d,
                            n_heads, cm, att, qm2, um2, pm2, pr2, bt2, sv,
                        )  # fmt: skip
                    for e in range(d):
                        for b in range(BS):
                            ynew[i, e, b] = ym[i, e, b]
                    for b in range(BS):
                        ynr[i, b] = yr[i, b]
                    finish_position_l2(
                        layer, sc, lw, ln, wb, ynew[i], ynr[i], att, ratt, am, ar, hid, rhid,
                        tmp, rtmp, xmax, ls, zero, one, rho, lip, bnd, lnvar,
                    )  # fmt: skip
                    if diag:
                        if not norm_first:
                            vblk[kb, k1, i] = lnvar[0]
                        vblk[kb, k1 + 1, i] = lnvar[1]
                for i in range(first_i, s):
                    for e in range(d):
                        for b in range(BS):
                            ym[i, e, b] = ynew[i, e, b]
                    for b in range(BS):
                        yr[i, b] = ynr[i, b]
            # ---------------- final norm (pre-LN) and readout
            r = s - 1
            if sc.final_norm:
                fn = wb.layer[n_layers]
                gf, bf = gains[n_norms - 1], biases[n_norms - 1]
                if diag:  # the final norm's variance at the other positions
                    for j in range(r):
                        layer_norm_scalar(
                            ym[j], zero1, gf, bf, fn[NB_LN2_GAIN], fn[NB_LN2_BIAS], eps, ann,
                            tmp, rtmp, ls, False,
                        )  # fmt: skip
                        vblk[kb, n_norms - 1, j] = ls[LS_VAR]
                if l2:
                    layer_norm_l2(
                        ym[r], yr[r], gf, bf, fn[NB_LN2_GAIN], fn[NB_LN2_BIAS], eps, ann, tmp, rtmp,
                        ls, zero, lip, bounds,
                    )  # fmt: skip
                else:
                    layer_norm_scalar(
                        ym[r], yr[r], gf, bf, fn[NB_LN2_GAIN], fn[NB_LN2_BIAS], eps, ann, tmp, rtmp,
                        ls, bounds,
                    )  # fmt: skip
                if diag:
                    vblk[kb, n_norms - 1, r] = ls[LS_VAR]
                for e in range(d):
                    for b in range(BS):
                        ym[r, e, b] = tmp[e, b]
                for b in range(BS):
                    yr[r, b] = rtmp[b]
            omega = sc.omega
            w = ro.weight
            for b in range(BS):
                tmp[0, b] = omega
            for e in range(d):
                we = w[e]
                for b in range(BS):
                    tmp[0, b] += we * ym[r, e, b]
            if bounds:
                col_absmax(ym[r], xmax)
            base = blk_off * n_lo
            wsum = wb.readout_abs_sum
            w_rad = wb.readout_l2 if l2 else wsum  # |w . e| <= |w|_2 |e|_2, or |w|_1 max|e|
            for b in range(n_lo):
                t_out[base + b] = tmp[0, b]
                if bounds:
                    r_out[base + b] = (
                        w_rad * yr[r, b] + (d + 2) * U * (wsum * xmax[b] + abs(omega))
                    ) * (1 + (d + 5) * U) + ETA
                else:
                    r_out[base + b] = 0.0
            if diag:
                for b in range(n_lo):
                    for e in range(d):
                        dg.y_readout[base + b, e] = ym[r, e, b]
                    for k in range(n_norms):
                        for j in range(s):
                            dg.var[base + b, k, j] = vblk[kb, k, j, b]


@kernel(
    types.void(
        i8, i8, i8, i8, SCALARS, EXHAUSTIVE_LAYER0, LAYER_WEIGHTS, NORM_AFFINE, READOUT,
        WEIGHT_BOUNDS, b1, A1, A1, DIAGNOSTICS,
    ),
    parallel=True,
)  # fmt: skip
def exhaustive_T(
    n, lo_bits, blk0, blk1, sc, l0, lw, ln, ro, wb, bounds, t_out, r_out, dg
):  # pragma: no cover - jitted
    """T(x) (and, with bounds, a rigorous radius) of the strings lo + 2^lo_bits hi of n bits,
    for every lo and blk0 <= hi < blk1, written at index (hi - blk0) 2^lo_bits + lo of t_out,
    r_out. The tables ``l0`` and the bounds they carry are described in
    ``stages.bundles.ExhaustiveLayer0`` and derived in
    ``verify.model.exhaustive.exhaustive_pass``. Chunks of blocks run in parallel
    (:func:`exhaustive_chunk`). With ``dg.on`` also the diagnostics of ``dg``
    (``stages.bundles.Diagnostics``) at the same indices; T and its radius are the
    same numbers either way (the readout position's computation is unchanged)."""
    n_chunks = min(blk1 - blk0, 64)  # work arrays are allocated once per chunk of blocks
    for chunk in prange(n_chunks):
        exhaustive_chunk(
            chunk,
            n_chunks,
            n,
            lo_bits,
            blk0,
            blk1,
            sc,
            l0,
            lw,
            ln,
            ro,
            wb,
            bounds,
            t_out,
            r_out,
            dg,
        )
