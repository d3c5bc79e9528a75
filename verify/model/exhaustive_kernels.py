"""Numba kernels of the exhaustive certified truth table (all 2^N strings of one length).

Strings are taken in blocks of ``BS`` = 64 = 2^LO_BITS that share their high bits: string
index = lo + 64 hi, block = one hi. Arrays hold one feature per row and the 64 strings of a
block along the (compile-time constant) last axis, so every loop over strings vectorises.

Layer 0 is assembled from tables. Its attention output at query position i and head h is
A_h = sum_j e_ij(t_j) V_j(t_j) / sum_j e_ij(t_j), with e and V = W_o,h v tabulated over
(token, position) (``verify.model.fast.prepare``). The sums over the low positions j < 6 are
tabulated once for all 64 values of lo (``verify.model.exhaustive``), the sums over the high
positions once per block, so a string costs O(H D) per query position instead of O(s H D).

Error radii are scalar: one number r per vector and string with |exact_k - computed_k| <= r
for every component k (an infinity-norm ball). Each rule is the componentwise rule of
``verify.model.kernels`` with the magnitudes replaced by their maxima (all rules are monotone
in them), so a matrix-vector product costs one extra pass over x (its max) instead of a second
product with |W|:

    y = W x + b:  r_y <= ||W||_inf (r_x + g max|x|) + g max|b|,  g = (n + 2) U,

with the norms of the weights rounded upwards beforehand. Rounding model and constants
(U = 2^-52, ETA, the exp and softmax bounds) are those of ``verify.model.kernels``.
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.kernels import (
    ETA,
    U,
    layer_norm_moments,
    rsqrt_radius,
    scaled_softmax,
)

LO_BITS = 6
BS = 1 << LO_BITS  # strings per block

f8 = types.float64
A1 = types.Array(f8, 1, "C")
A2 = types.Array(f8, 2, "C")
A3 = types.Array(f8, 3, "C")
A4 = types.Array(f8, 4, "C")
A5 = types.Array(f8, 5, "C")
i8 = types.int64
b1 = types.boolean


@kernel(types.void(A2, A1))
def col_absmax(x, out):  # pragma: no cover - jitted
    """out[b] = max_k |x[k, b]| (NaN entries are skipped: a NaN value is never certified)."""
    for b in range(BS):
        out[b] = 0.0
    for k in range(x.shape[0]):
        for b in range(BS):
            a = abs(x[k, b])
            if a > out[b]:
                out[b] = a


@kernel(types.void(A2, A1, A2, A1, i8, i8, f8, f8, A2, A1, A1, b1))
def matvec(x, rx, w, bias, r0, r1, wnorm, bnorm, out, rout, xmax, bounds):  # pragma: no cover
    """out[j] = bias[r0+j] + sum_k w[r0+j, k] x[k] for the rows r0..r1-1 of w; with bounds,
    rout = (wnorm (rx + g max|x|) + g bnorm)(1 + (2n + 5)U) + ETA, g = (n + 2)U, where wnorm
    bounds the max absolute row sum of those rows and bnorm their max |bias|."""
    n = x.shape[0]
    m = r1 - r0
    for j in range(0, m - 1, 2):  # two rows per pass: each x[k] is loaded once for both
        bj0 = bias[r0 + j]
        bj1 = bias[r0 + j + 1]
        for b in range(BS):
            out[j, b] = bj0
            out[j + 1, b] = bj1
        for k in range(n):
            w0 = w[r0 + j, k]
            w1 = w[r0 + j + 1, k]
            for b in range(BS):
                xv = x[k, b]
                out[j, b] += w0 * xv
                out[j + 1, b] += w1 * xv
    if m % 2 == 1:
        j = m - 1
        bj = bias[r0 + j]
        for b in range(BS):
            out[j, b] = bj
        for k in range(n):
            wv = w[r0 + j, k]
            for b in range(BS):
                out[j, b] += wv * x[k, b]
    if bounds:
        g = (n + 2) * U
        col_absmax(x, xmax)
        for b in range(BS):
            rout[b] = (wnorm * (rx[b] + g * xmax[b]) + g * bnorm) * (1 + (2 * n + 5) * U) + ETA


@kernel(types.void(A2, A1, A2, A1, b1))
def add_into(y, ry, a, ra, bounds):  # pragma: no cover - jitted
    """y <- y + a; ry <- (ry + ra + U max|y|)(1 + 2U); ra is overwritten (scratch)."""
    for k in range(y.shape[0]):
        for b in range(BS):
            y[k, b] += a[k, b]
    if bounds:
        for b in range(BS):
            ry[b] += ra[b]
        col_absmax(y, ra)  # ra is scratch from here on
        for b in range(BS):
            ry[b] = (ry[b] + U * ra[b]) * (1 + 2 * U)


@kernel(types.void(A2))
def relu(x):  # pragma: no cover - jitted
    """x <- max(x, 0); relu is 1-Lipschitz, so the radius carries over."""
    for k in range(x.shape[0]):
        for b in range(BS):
            if x[k, b] < 0.0:
                x[k, b] = 0.0


@kernel(types.void(A2, A1, A1, A1, f8, f8, f8, A2, A1, A2, b1))
def layer_norm(v, rv, gain, bias, gmax, bmax, eps, out, rout, ls, bounds):  # pragma: no cover
    """out = gain (v - mean) / sqrt(var + eps) + bias over axis 0 (biased variance); ls is
    scratch (8, BS); on return ls[2] holds z = 1/sqrt(var + eps) and, with bounds, ls[6] a
    bound of its error. The radius follows the componentwise rule of ``kernels.layer_norm`` with
    |c_i| <= max|c|, sum |c_i|, |gain| <= gmax, |bias| <= bmax; a variance enclosure reaching 0
    gives an infinite radius."""
    d = v.shape[0]
    mean = ls[0]
    var = ls[1]
    z = ls[2]
    layer_norm_moments(v, eps, BS, out, mean, var, z)
    if bounds:
        sabs = ls[3]
        cmax = ls[4]
        csum = ls[5]
        for b in range(BS):
            sabs[b] = 0.0
            csum[b] = 0.0
        for i in range(d):
            for b in range(BS):
                sabs[b] += abs(v[i, b])
                csum[b] += abs(out[i, b])
        col_absmax(out, cmax)
        for b in range(BS):
            rmean = (rv[b] + (d + 1) * U * sabs[b] / d + 2 * U * abs(mean[b])) * (1 + (d + 4) * U)
            rc = (rv[b] + rmean + U * cmax[b]) * (1 + 3 * U)
            acc = 2 * rc * csum[b] + d * rc * rc
            rz = rsqrt_radius(var[b], eps, acc, d, z[b])
            ls[6, b] = rz
            cz = cmax[b] * z[b]
            r = cmax[b] * rz + rc * (z[b] + rz) + U * cz
            o = cz * gmax
            rout[b] = (r * gmax + U * o + U * (o + bmax)) * (1 + 8 * U) + ETA
    for i in range(d):
        gi = gain[i]
        bi = bias[i]
        for b in range(BS):
            out[i, b] = out[i, b] * z[b] * gi + bi


@kernel(
    types.void(
        i8, b1, A2, A1, A2, A1, A3, A2, A3, A2, A2, A2, A2, f8, A2, A1, A2, A1, A1, A2, b1,
    )
)  # fmt: skip
def finish_position(
    layer, norm_first, y, ry, a, ra, w1, b1v, w2, b2v, gains, biases, norms, eps,
    hid, rhid, tmp, rtmp, xmax, ls, bounds,
):  # fmt: skip  # pragma: no cover - jitted
    """Given the residual input y and the attention output a (after out_proj) at one position,
    the layer's output there (post-LN or pre-LN) into y, ry; a is overwritten. norms[layer] =
    [||W_1||, max|b_1|, ||W_2||, max|b_2|, gmax_1, bmax_1, gmax_2, bmax_2]."""
    nm = norms[layer]
    k1 = 2 * layer
    f = hid.shape[0]
    d = y.shape[0]
    if norm_first:
        add_into(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y))
        layer_norm(y, ry, gains[k1 + 1], biases[k1 + 1], nm[6], nm[7], eps, tmp, rtmp, ls, bounds)
        matvec(tmp, rtmp, w1[layer], b1v[layer], 0, f, nm[0], nm[1], hid, rhid, xmax,
               bounds)  # fmt: skip
        relu(hid)
        matvec(hid, rhid, w2[layer], b2v[layer], 0, d, nm[2], nm[3], tmp, rtmp,
               xmax, bounds)  # fmt: skip
        add_into(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into(a, ra, y, ry, bounds)  # y + MHA(y)
        layer_norm(a, ra, gains[k1], biases[k1], nm[4], nm[5], eps, y, ry, ls, bounds)  # y <- h
        matvec(y, ry, w1[layer], b1v[layer], 0, f, nm[0], nm[1], hid, rhid, xmax,
               bounds)  # fmt: skip
        relu(hid)
        matvec(hid, rhid, w2[layer], b2v[layer], 0, d, nm[2], nm[3], tmp, rtmp,
               xmax, bounds)  # fmt: skip
        add_into(tmp, rtmp, y, ry, bounds)  # h + FFN(h)
        layer_norm(tmp, rtmp, gains[k1 + 1], biases[k1 + 1], nm[6], nm[7], eps, y, ry, ls, bounds)


@kernel(
    types.void(
        A3, A2, A2, i8, A2, A1, A2, i8, f8, f8, A2, A1, A2, A1, A2, A1, A2, A2, A2, b1
    )
)  # fmt: skip
def attention_row(
    x, rx, xm, i, w_in, b_in, head_norms, n_heads, cm, cr, att, ratt, qm, rq, um, ru,
    pm, pr, sv, bounds,
):  # fmt: skip  # pragma: no cover - jitted
    """Concatenated head outputs (before out_proj) at query position i of a layer whose
    attention inputs are x (s, d, BS) with radii rx (s, BS) and maxima xm[j] = max|x_j|.

    Per head: q = W_q,h x_i + b_q,h; u = W_k,h^T q and beta = b_k,h . q, so the score is
    (u . x_j + beta) / sqrt(d_h) (= q . k_j / sqrt(d_h)); and, as the exact softmax weights sum
    to 1, A_h = W_v,h (sum_j p_j x_j) + b_v,h. head_norms[h] = [||W_q,h||, max|b_q,h|,
    ||W_k,h^T||, ||b_k,h||_1, ||W_v,h||, max|b_v,h|] (infinity norms, rounded up)."""
    s = x.shape[0]
    d = x.shape[1]
    dh = d // n_heads
    tot = sv[0]
    rtot = sv[1]
    gap = sv[2]
    mx = sv[3]
    beta = sv[4]
    rbeta = sv[5]
    usum = sv[6]
    xmax = sv[7]
    for b in range(BS):
        ratt[b] = 0.0
    for hd in range(n_heads):
        c0 = hd * dh
        hn = head_norms[hd]
        matvec(x[i], rx[i], w_in, b_in, c0, c0 + dh, hn[0], hn[1], qm, rq, xmax, bounds)
        for b in range(BS):
            beta[b] = 0.0
        for k in range(d):
            for b in range(BS):
                um[k, b] = 0.0
        for e in range(dh):
            bk = b_in[d + c0 + e]
            for b in range(BS):
                beta[b] += bk * qm[e, b]
            for k in range(d):
                wv = w_in[d + c0 + e, k]
                for b in range(BS):
                    um[k, b] += wv * qm[e, b]
        if bounds:
            g = (dh + 2) * U
            col_absmax(qm[:dh], xmax)
            for b in range(BS):
                base = rq[b] + g * xmax[b]
                ru[b] = hn[2] * base * (1 + (2 * dh + 5) * U) + ETA
                rbeta[b] = hn[3] * base * (1 + (2 * dh + 5) * U) + ETA
                usum[b] = 0.0
            for k in range(d):
                for b in range(BS):
                    usum[b] += abs(um[k, b])
        # scores s_j = (u . x_j + beta) / sqrt(d_h)
        for j in range(s):
            for b in range(BS):
                pm[j, b] = beta[b]
            for k in range(d):
                for b in range(BS):
                    pm[j, b] += um[k, b] * x[j, k, b]
            if bounds:
                for b in range(BS):
                    t = pm[j, b]
                    rt = (
                        usum[b] * rx[j, b]
                        + ru[b] * d * (xm[j, b] + rx[j, b])
                        + rbeta[b]
                        + (d + 3) * U * (usum[b] * xm[j, b] + abs(beta[b]))
                    ) * (1 + (2 * d + 6) * U) + ETA
                    pr[j, b] = (abs(t) * cr + rt * (cm + cr) + U * abs(t * cm)) * (1 + 4 * U) + ETA
        scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, BS, bounds)
        # xbar = sum_j p_j x_j, into um
        for k in range(d):
            for b in range(BS):
                um[k, b] = 0.0
        for j in range(s):
            for k in range(d):
                for b in range(BS):
                    um[k, b] += pm[j, b] * x[j, k, b]
        if bounds:
            for b in range(BS):
                ru[b] = 0.0
                usum[b] = 0.0
            for j in range(s):
                for b in range(BS):
                    ru[b] += pm[j, b] * rx[j, b] + pr[j, b] * (xm[j, b] + rx[j, b])
                    usum[b] += pm[j, b] * xm[j, b]
            for b in range(BS):
                ru[b] = (ru[b] + (s + 2) * U * usum[b]) * (1 + (2 * s + 6) * U) + ETA
        matvec(
            um, ru, w_in, b_in, 2 * d + c0, 2 * d + c0 + dh, hn[4], hn[5],
            att[c0 : c0 + dh], rq, xmax, bounds,
        )  # fmt: skip
        if bounds:
            for b in range(BS):
                ratt[b] = max(ratt[b], rq[b])


@kernel(types.void(A2, A1, A1, i8, b1))
def fill_rows(out, v0, v1, i, lo_q):  # pragma: no cover - jitted
    """out[e, b] = v0[e], or, when lo_q, v1[e] for the strings b whose bit i is 1."""
    for e in range(out.shape[0]):
        a0 = v0[e]
        if lo_q:
            a1 = v1[e]
            for b in range(BS):
                out[e, b] = a1 if (b >> i) & 1 == 1 else a0
        else:
            for b in range(BS):
                out[e, b] = a0


@kernel(types.void(A2, A2, i8, A1, A1, i8, i8, A1, i8, b1))
def add_weighted(out, lo, lo0, hi0, hi1, hi_off, m, iv, i, lo_q):  # pragma: no cover - jitted
    """out[e, b] += (lo[lo0 + e, b] + hi[hi_off + e]) * iv[b] for e < m, with hi = hi0, or,
    when lo_q, hi1 for the strings b whose bit i is 1."""
    for e in range(m):
        h0 = hi0[hi_off + e]
        le = lo[lo0 + e]
        oe = out[e]
        if lo_q:
            h1 = hi1[hi_off + e]
            for b in range(BS):
                oe[b] += (le[b] + (h1 if (b >> i) & 1 == 1 else h0)) * iv[b]
        else:
            for b in range(BS):
                oe[b] += (le[b] + h0) * iv[b]


@kernel(types.void(A5, A4, A4, types.Array(types.int64, 2, "C"), i8, A5))
def low_sums(sce, vo, mv, slot_tok, k, out):  # pragma: no cover - jitted
    """out[i, slot, h, :, b] = sum_{j < k} e_j [vo_j, 1, mv_j] for the low part b (bit j of b
    is the token at j), e_j = sce[t_i, i, t_j, j, h], t_i = slot_tok[slot, i] for i >= k and
    bit i of b for i < k (both slots then hold the same)."""
    s = out.shape[0]
    n_heads = out.shape[2]
    d = vo.shape[3]
    f = mv.shape[3]
    ev = np.empty(BS)
    for i in range(s):
        for sl in range(2):
            for hd in range(n_heads):
                o = out[i, sl, hd]
                for e in range(o.shape[0]):
                    for b in range(BS):
                        o[e, b] = 0.0
                for j in range(k):
                    for b in range(BS):
                        t_i = (b >> i) & 1 if i < k else slot_tok[sl, i]
                        ev[b] = sce[t_i, i, (b >> j) & 1, j, hd]
                    for e in range(d + 1 + f):
                        if e < d:
                            v0 = vo[0, j, hd, e]
                            v1 = vo[1, j, hd, e]
                        elif e == d:
                            v0 = 1.0
                            v1 = 1.0
                        else:
                            v0 = mv[0, j, hd, e - d - 1]
                            v1 = mv[1, j, hd, e - d - 1]
                        for b in range(BS):
                            o[e, b] += ev[b] * (v1 if (b >> j) & 1 == 1 else v0)


@kernel(
    types.void(
        i8, b1, b1, i8, i8, i8, i8,
        A3, A2, A5, A4, A4, A3, A3, A1, A1, A5, A4,
        A3, A2, A3, A2, A3, A2, A3, A2, A3, A2, A2, A2, A2, A1, A1, b1, A1, A1,
    ),
    parallel=True,
)  # fmt: skip
def exhaustive_T(
    n, eos, norm_first, n_heads, lo_bits, blk0, blk1,
    y0m, y0r, sce_m, vo_m, mv_m, g0, g0_bound, c0, c0_bound, lo_tab, lo_bound,
    w_in, b_in, w_out, b_out, w1, b1v, w2, b2v, head_norms, out_norms, norms, gains, biases,
    w, scal, bounds, t_out, r_out,
):  # fmt: skip  # pragma: no cover - jitted
    """T(x) (and, with bounds, a rigorous radius) of the strings lo + 2^lo_bits hi, for every lo
    and blk0 <= hi < blk1, written at index (hi - blk0) 2^lo_bits + lo of t_out, r_out.

    Layer-0 tables (``verify.model.exhaustive``): y0m (3, s, d) embeddings (pre-LN: as they
    enter the residual stream) with radii y0r (3, s) (max over components); sce_m (3, s, 3, s,
    H) exp(q k / sqrt(d_h) - shift); vo_m (3, s, H, d) values through out_proj; mv_m (3, s, H,
    f) = M vo with M = W_1 diag(gain) P (P centres, gain of the norm in front of the MLP), so
    that the MLP's pre-activation is u = z (g0 + sum_h G_h / den_h) + c0 with G_h the sum of
    e M V, g0 (3, s, f) = M (y0 + b_o), c0 = W_1 bias + b_1 (maxima and radius maxima in
    g0_bound (3, s, 2), c0_bound (2,)); lo_tab (s, 2, H, d + 1 + f, BS) the sums over
    j < lo_bits of e V (rows 0..d-1), e (row d) and e M V (rows d+1..), for the query token
    (slot 1: token 1; slot 0: token 0, or eos at the eos position, or, for query positions
    i < lo_bits, whose token varies with lo, the token of each lo); lo_bound (s, 2, H, 5) =
    [E_num, E_den, A_max, E_G, G_max], bounds valid for every string (see the module doc of
    ``verify.model.exhaustive``). scal = [eps, omega, 1/sqrt(d_h) mid, its radius, sum|w|
    (rounded up), max|b_o| of layer 0]."""
    s = n + 1 if eos else n
    d = y0m.shape[2]
    f = w1.shape[1]
    n_layers = w_in.shape[0]
    n_norms = gains.shape[0]
    eps = scal[0]
    omega = scal[1]
    cm = scal[2]
    cr = scal[3]
    wsum = scal[4]
    bo_max = scal[5]
    n_lo = 1 << lo_bits
    n_blk = blk1 - blk0
    n_chunks = min(n_blk, 64)  # work arrays are allocated once per chunk of blocks
    for chunk in prange(n_chunks):
        c_lo = chunk * n_blk // n_chunks
        c_hi = (chunk + 1) * n_blk // n_chunks
        tok_hi = np.empty(s, dtype=np.int64)  # tokens of the positions >= lo_bits
        ym = np.empty((s, d, BS))
        yr = np.zeros((s, BS))
        ynew = np.empty((s, d, BS))
        ynr = np.zeros((s, BS))
        xs = np.empty((s, d, BS))
        xsr = np.zeros((s, BS))
        xsm = np.zeros((s, BS))
        am = np.empty((d, BS))
        ar = np.zeros(BS)
        att = np.empty((d, BS))
        ratt = np.zeros(BS)
        hid = np.empty((f, BS))
        rhid = np.zeros(BS)
        tmp = np.empty((d, BS))
        rtmp = np.zeros(BS)
        xmax = np.zeros(BS)
        ls = np.empty((8, BS))
        pm = np.empty((s, BS))
        pr = np.zeros((s, BS))
        sv = np.zeros((8, BS))
        qm = np.empty((d, BS))
        rq = np.zeros(BS)
        um = np.empty((d, BS))
        ru = np.zeros(BS)
        width = d + 1 + f
        hi = np.zeros((2, n_heads, width))  # sums over j >= lo_bits, per query token slot
        inv = np.empty((n_heads, BS))
        den = sv[0]
        ra_sum = sv[1]
        a1_sum = sv[2]
        rg_sum = sv[3]
        g1_sum = sv[4]
        for blk_off in range(c_lo, c_hi):
            blk = blk0 + blk_off
            for j in range(lo_bits, s):
                tok_hi[j] = 2 if j == n else (blk >> (j - lo_bits)) & 1
            # ---------------- layer 0, from the tables
            first_q = 0 if n_layers > 1 else s - 1
            for i in range(first_q, s):
                lo_q = i < lo_bits  # the query token varies with lo
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
                        am[e, b] = b_out[0, e]
                for b in range(BS):
                    ra_sum[b] = 0.0
                    a1_sum[b] = 0.0
                    rg_sum[b] = 0.0
                    g1_sum[b] = 0.0
                for hd in range(n_heads):
                    lt = lo_tab[i, slot, hd]
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
                    if bounds:
                        bd = lo_bound[i, slot, hd]
                        for b in range(BS):
                            low = (den[b] - bd[1]) * (1 - U)
                            # A_h (bound bd[0], magnitude bd[2]) and G_h / den (bd[3], bd[4])
                            a1 = (bd[2] * (den[b] + bd[1]) + bd[0]) / den[b] * (1 + 3 * U)
                            g1 = (bd[4] * (den[b] + bd[1]) + bd[3]) / den[b] * (1 + 3 * U)
                            if low > 0:
                                ra_sum[b] += ((bd[0] + a1 * bd[1]) / low + 3 * U * a1) * (1 + 4 * U)
                                rg_sum[b] += ((bd[3] + g1 * bd[1]) / low + 3 * U * g1) * (1 + 4 * U)
                            else:
                                ra_sum[b] = np.inf
                                rg_sum[b] = np.inf
                            a1_sum[b] += a1
                            g1_sum[b] += g1
                if bounds:
                    for b in range(BS):
                        ar[b] = (ra_sum[b] + (n_heads + 2) * U * (bo_max + a1_sum[b])) * (
                            1 + (2 * n_heads + 5) * U
                        ) + ETA
                # the residual stream at i: the embedding of the token at i
                fill_rows(ym[i], y0m[0 if lo_q else tq, i], y0m[1, i], i, lo_q)
                for b in range(BS):
                    yr[i, b] = y0r[(b >> i) & 1 if lo_q else tq, i]
                # the layer norm in front of the MLP (post-LN: LN1, pre-LN: LN2) of d = y + A
                nm = norms[0]
                if norm_first:
                    add_into(ym[i], yr[i], am, ar, bounds)  # d = h, the residual stream
                    layer_norm(
                        ym[i], yr[i], gains[1], biases[1], nm[6], nm[7], eps, tmp, rtmp, ls,
                        bounds,
                    )  # fmt: skip
                else:
                    add_into(am, ar, ym[i], yr[i], bounds)
                    layer_norm(
                        am, ar, gains[0], biases[0], nm[4], nm[5], eps, ym[i], yr[i], ls, bounds
                    )  # ym[i] <- h = LN1(d)
                z = ls[2]
                # MLP hidden pre-activation u = z (g0 + sum_h G_h / den_h) + c0 = W1 LN(d) + b1
                fill_rows(hid, g0[0 if lo_q else tq, i], g0[1, i], i, lo_q)
                for hd in range(n_heads):
                    add_weighted(
                        hid, lo_tab[i, slot, hd], d + 1, hi[0, hd], hi[1, hd], d + 1, f, inv[hd],
                        i, lo_q,
                    )  # fmt: skip
                for e in range(f):
                    ce = c0[e]
                    for b in range(BS):
                        hid[e, b] = hid[e, b] * z[b] + ce
                if bounds:
                    rz = ls[6]
                    for b in range(BS):
                        tg = (b >> i) & 1 if lo_q else tq
                        g0max = g0_bound[tg, i, 0]
                        r_b = (
                            g0_bound[tg, i, 1] + rg_sum[b]
                            + (n_heads + 2) * U * (g0max + g1_sum[b])
                        ) * (1 + (2 * n_heads + 5) * U) + ETA  # fmt: skip
                        bmax = (g0max + g1_sum[b]) * (1 + (n_heads + 3) * U)
                        rhid[b] = (
                            rz[b] * (bmax + r_b) + z[b] * r_b + c0_bound[1]
                            + 2 * U * (z[b] * bmax + c0_bound[0])
                        ) * (1 + 4 * U) + ETA  # fmt: skip
                relu(hid)
                matvec(hid, rhid, w2[0], b2v[0], 0, d, nm[2], nm[3], tmp, rtmp, xmax, bounds)
                if norm_first:
                    add_into(ym[i], yr[i], tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
                else:
                    add_into(tmp, rtmp, ym[i], yr[i], bounds)  # h + FFN(h)
                    layer_norm(
                        tmp, rtmp, gains[1], biases[1], nm[6], nm[7], eps, ym[i], yr[i], ls,
                        bounds,
                    )  # fmt: skip
            # ---------------- layers 1..L-1 (the last one at the readout position only)
            for layer in range(1, n_layers):
                last = layer == n_layers - 1
                k1 = 2 * layer
                nm = norms[layer]
                # attention inputs: the stream itself (post-LN) or LN1 of it (pre-LN)
                src = ym
                srcr = yr
                if norm_first:
                    for j in range(s):
                        layer_norm(
                            ym[j], yr[j], gains[k1], biases[k1], nm[4], nm[5], eps, xs[j], xsr[j],
                            ls, bounds,
                        )  # fmt: skip
                    src = xs
                    srcr = xsr
                if bounds:
                    for j in range(s):
                        col_absmax(src[j], xsm[j])
                for i in range(s - 1 if last else 0, s):
                    attention_row(
                        src, srcr, xsm, i, w_in[layer], b_in[layer], head_norms[layer], n_heads, cm,
                        cr, att, ratt, qm, rq, um, ru, pm, pr, sv, bounds,
                    )  # fmt: skip
                    on = out_norms[layer]
                    matvec(att, ratt, w_out[layer], b_out[layer], 0, d, on[0], on[1],
                           am, ar, xmax, bounds)  # fmt: skip
                    for e in range(d):
                        for b in range(BS):
                            ynew[i, e, b] = ym[i, e, b]
                    for b in range(BS):
                        ynr[i, b] = yr[i, b]
                    finish_position(
                        layer, norm_first, ynew[i], ynr[i], am, ar, w1, b1v, w2, b2v, gains, biases,
                        norms, eps, hid, rhid, tmp, rtmp, xmax, ls, bounds,
                    )  # fmt: skip
                for i in range(s - 1 if last else 0, s):
                    for e in range(d):
                        for b in range(BS):
                            ym[i, e, b] = ynew[i, e, b]
                    for b in range(BS):
                        yr[i, b] = ynr[i, b]
            # ---------------- final norm (pre-LN) and readout
            r = s - 1
            if norm_first:
                fn = norms[n_layers]
                layer_norm(
                    ym[r], yr[r], gains[n_norms - 1], biases[n_norms - 1], fn[6], fn[7], eps, tmp,
                    rtmp, ls, bounds,
                )  # fmt: skip
                for e in range(d):
                    for b in range(BS):
                        ym[r, e, b] = tmp[e, b]
                for b in range(BS):
                    yr[r, b] = rtmp[b]
            for b in range(BS):
                tmp[0, b] = omega
            for e in range(d):
                we = w[e]
                for b in range(BS):
                    tmp[0, b] += we * ym[r, e, b]
            if bounds:
                col_absmax(ym[r], xmax)
            base = blk_off * n_lo
            for b in range(n_lo):
                t_out[base + b] = tmp[0, b]
                if bounds:
                    r_out[base + b] = (
                        wsum * yr[r, b] + (d + 2) * U * (wsum * xmax[b] + abs(omega))
                    ) * (1 + (d + 5) * U) + ETA
                else:
                    r_out[base + b] = 0.0
