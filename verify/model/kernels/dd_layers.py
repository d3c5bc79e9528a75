"""Double-double attention at one query position and the rest of a layer at one position,
with componentwise float64 radii (the rules of ``kernels.attention.attention_at`` and
``kernels.position.finish_position`` with DD rounding terms)."""

from __future__ import annotations

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import A2, A3, LAYER_WEIGHTS_T, NORM_AFFINE, SCALARS, b1, f8, i8
from verify.model.kernels.dd import DD_MUL, UU, dd_mul, fma, two_sum
from verify.model.kernels.dd_dense import add_into_dd, matvec_dd, relu_dd
from verify.model.kernels.dd_norm import layer_norm_dd, softmax_dd
from verify.model.rounding import ETA, U


@kernel(types.void(A3, A3, A3, i8, i8, f8, f8, f8, A2, A2, A2, A2, A2, A2, b1))
def attention_dd(
    qh, ql, qr, i, n_heads, cmh, cml, cr, ath, atl, atr, ph, pl, pr, bounds
):  # pragma: no cover - jitted
    """Concatenated head outputs (before out_proj) at query position i from the queries, keys
    and values q* (s, 3d, nb) of every position: per head p = softmax_j(q_i . k_j c) with
    c = 1/sqrt(d_h) (DD cmh + cml, radius cr) and A_h = sum_j p_j v_j. Dot products of m DD
    terms: TwoProd of the high parts and TwoSum accumulate exactly, the cross terms go to a
    float64 accumulator: error <= (m + 3)^2 UU sum |a| |b| (|.| = |high| + |low|)."""
    s = qh.shape[0]
    d = qh.shape[1] // 3
    nb = qh.shape[2]
    dh = d // n_heads
    acm = abs(cmh) + abs(cml)
    g_dot = (dh + 3) * (dh + 3) * UU
    g_av = (s + 3) * (s + 3) * UU
    # per string accumulators: the loops over strings are innermost (they vectorise); each
    # string's operations run in the same order as one string at a time
    acc_h = np.empty(nb)
    acc_l = np.empty(nb)
    mag = np.empty(nb)
    rad = np.empty(nb)
    for hd in range(n_heads):
        c0 = hd * dh
        for j in range(s):
            for b in range(nb):
                acc_h[b] = 0.0
                acc_l[b] = 0.0
                mag[b] = 0.0
                rad[b] = 0.0
            for e in range(dh):
                qhe = qh[i, c0 + e]
                qle = ql[i, c0 + e]
                khe = qh[j, d + c0 + e]
                kle = ql[j, d + c0 + e]
                for b in range(nb):
                    ah = qhe[b]
                    al = qle[b]
                    bh = khe[b]
                    bl = kle[b]
                    p = ah * bh
                    err = fma(ah, bh, -p)
                    sh = acc_h[b]
                    t = sh + p
                    bb = t - sh
                    acc_l[b] += (((sh - (t - bb)) + (p - bb)) + err) + fma(ah, bl, al * bh)
                    acc_h[b] = t
                if bounds:
                    qre = qr[i, c0 + e]
                    kre = qr[j, d + c0 + e]
                    for b in range(nb):
                        aa = abs(qhe[b]) + abs(qle[b])
                        ab = abs(khe[b]) + abs(kle[b])
                        mag[b] += aa * ab
                        rad[b] += aa * kre[b] + qre[b] * (ab + kre[b])
            for b in range(nb):
                sh, sl = two_sum(acc_h[b], acc_l[b])
                sch, scl = dd_mul(sh, sl, cmh, cml)
                ph[j, b] = sch
                pl[j, b] = scl
                if bounds:
                    racc = (rad[b] + g_dot * mag[b]) * (1 + (2 * dh + 6) * U) + ETA
                    asc = abs(sch) + abs(scl)
                    pr[j, b] = ((abs(sh) + abs(sl)) * cr + racc * (acm + cr) + DD_MUL * asc) * (
                        1 + 4 * U
                    ) + ETA
        softmax_dd(ph, pl, pr, bounds)
        for e in range(dh):
            for b in range(nb):
                acc_h[b] = 0.0
                acc_l[b] = 0.0
                mag[b] = 0.0
                rad[b] = 0.0
            for j in range(s):
                vhe = qh[j, 2 * d + c0 + e]
                vle = ql[j, 2 * d + c0 + e]
                for b in range(nb):
                    ah = ph[j, b]
                    al = pl[j, b]
                    bh = vhe[b]
                    bl = vle[b]
                    p = ah * bh
                    err = fma(ah, bh, -p)
                    sh = acc_h[b]
                    t = sh + p
                    bb = t - sh
                    acc_l[b] += (((sh - (t - bb)) + (p - bb)) + err) + fma(ah, bl, al * bh)
                    acc_h[b] = t
                if bounds:
                    vre = qr[j, 2 * d + c0 + e]
                    for b in range(nb):
                        aa = abs(ph[j, b]) + abs(pl[j, b])
                        ab = abs(vhe[b]) + abs(vle[b])
                        mag[b] += aa * ab
                        rad[b] += aa * vre[b] + pr[j, b] * (ab + vre[b])
            for b in range(nb):
                sh, sl = two_sum(acc_h[b], acc_l[b])
                ath[c0 + e, b] = sh
                atl[c0 + e, b] = sl
                if bounds:
                    atr[c0 + e, b] = (rad[b] + g_av * mag[b]) * (1 + (2 * s + 6) * U) + ETA


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS_T, NORM_AFFINE,
        A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, b1,
    )
)  # fmt: skip
def finish_position_dd(
    layer, sc, lw, ln, yh, yl, yr, ah, al, ar, hh, hl, hr, th, tl, tr, scratch, bounds
):  # pragma: no cover - jitted
    """Given the residual input y and the attention output a (after out_proj) at one position,
    the layer's output there into y (post-LN or pre-LN); a is overwritten."""
    d = yh.shape[0]
    f = hh.shape[0]
    k1 = 2 * layer
    eps = sc.eps
    w1t, aw1t, b1v = lw.lin1_t[layer], lw.lin1_t_abs[layer], lw.lin1_bias[layer]
    w2t, aw2t, b2v = lw.lin2_t[layer], lw.lin2_t_abs[layer], lw.lin2_bias[layer]
    if sc.norm_first:
        add_into_dd(yh, yl, yr, ah, al, ar, bounds)  # h = y + MHA(LN1(y))
        layer_norm_dd(yh, yl, yr, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, th, tl, tr, bounds)
        matvec_dd(th, tl, tr, w1t, aw1t, b1v, 0, f, hh, hl, hr, scratch, bounds)
        relu_dd(hh, hl, hr, bounds)
        matvec_dd(hh, hl, hr, w2t, aw2t, b2v, 0, d, th, tl, tr, scratch, bounds)
        add_into_dd(yh, yl, yr, th, tl, tr, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into_dd(ah, al, ar, yh, yl, yr, bounds)  # y + MHA(y)
        layer_norm_dd(ah, al, ar, ln.gains[k1], ln.biases[k1], eps, yh, yl, yr, bounds)  # h
        matvec_dd(yh, yl, yr, w1t, aw1t, b1v, 0, f, hh, hl, hr, scratch, bounds)
        relu_dd(hh, hl, hr, bounds)
        matvec_dd(hh, hl, hr, w2t, aw2t, b2v, 0, d, th, tl, tr, scratch, bounds)
        add_into_dd(th, tl, tr, yh, yl, yr, bounds)  # h + FFN(h)
        layer_norm_dd(
            th, tl, tr, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, yh, yl, yr, bounds
        )  # fmt: skip
