"""Attention at one query position with rigorous radii, from the attention inputs.

- ``attention_at``: from the queries, keys and values of every position (per-string kernel,
  all positions of the layers before the last).
- ``readout_attention`` (componentwise radii) and ``attention_row_l2`` (one 2-norm radius
  per vector and string, exhaustive kernel): at one query position straight from the inputs
  x_j, in O(s d) per head instead of O(s d^2): the scores are (W_k,h^T q_h) . x_j + q_h .
  b_k,h (= q_h . k_j), and, as the exact softmax weights sum to 1, the head output is
  W_v,h (sum_j p_j x_j) + b_v,h.

``sv`` is a scratch array of ``SV_ROWS`` rows, one string per column, rows named below.
"""

from __future__ import annotations

import math

from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.bundles import (
    A1,
    A2,
    A3,
    BS,
    HB_BK,
    HB_BQ,
    HB_BV,
    HB_WKT,
    HB_WQ,
    HB_WV,
    WN_BIAS,
    WN_SPEC,
    b1,
    f8,
    i8,
)
from verify.model.stages.dense import col_absmax, matvec, matvec_mid, matvec_scalar
from verify.model.stages.register_sums import (
    dist2_rows,
    dots_rows,
    dots_rows2,
    mix_rows,
    mix_rows2,
)
from verify.model.stages.softmax import scaled_softmax, softmax_rounding

# rows of the attention scratch ``sv``
SV_TOT = 0  # softmax denominator
SV_RTOT = 1  # its radius
SV_GAP = 2  # a lower bound of the exact denominator
SV_MAX = 3  # the row maximum of the scaled scores
SV_BETA = 4  # q_h . b_k,h
SV_RBETA = 5  # its radius
SV_USUM = 6  # a sum of magnitudes (for rounding bounds)
SV_XMAX = 7  # scalar rule: max|x| of a matrix-vector product's input
SV_UNORM = 8  # 2-norm rule: a bound of |W_k,h^T q|_2
SV_DQ = 9  # a bound of the query's data error |q' - q|_2
SV_ESUM = 10  # the bound of the weighted sum's error being accumulated
SV_ASUM = 11  # a bound of |xbar~ - xbar(g)|_2
SV_SQSUM = 12  # the sum over heads of the squared head errors
SV_ROWS = 13


@kernel(types.void(A3, A3, i8, i8, f8, f8, A2, A2, A2, A2, A2, b1))
def attention_at(
    qkvm, qkvr, i, n_heads, cm, cr, attm, attr, pm, pr, sv, bounds
):  # pragma: no cover - jitted
    """Concatenated head outputs (before out_proj) at query position i, from the queries,
    keys and values qkvm (s, 3d, nb) of every position with componentwise radii qkvr: per head
    p = softmax_j(q_i . k_j / sqrt(d_h)) and A_h = sum_j p_j v_j. sv: scratch (SV_ROWS, nb)."""
    s = qkvm.shape[0]
    d = qkvm.shape[1] // 3
    nb = qkvm.shape[2]
    dh = d // n_heads
    tot = sv[SV_TOT]
    rtot = sv[SV_RTOT]
    gap = sv[SV_GAP]
    mx = sv[SV_MAX]
    mag = sv[SV_USUM]
    for hd in range(n_heads):
        c0 = hd * dh
        for j in range(s):
            for b in range(nb):
                pm[j, b] = 0.0
            for e in range(dh):
                qe = qkvm[i, c0 + e]
                ke = qkvm[j, d + c0 + e]
                for b in range(nb):
                    pm[j, b] += qe[b] * ke[b]
            if bounds:
                for b in range(nb):
                    pr[j, b] = 0.0
                    mag[b] = 0.0
                for e in range(dh):
                    qe = qkvm[i, c0 + e]
                    ke = qkvm[j, d + c0 + e]
                    rqe = qkvr[i, c0 + e]
                    rke = qkvr[j, d + c0 + e]
                    for b in range(nb):
                        pr[j, b] += abs(qe[b]) * rke[b] + rqe[b] * (abs(ke[b]) + rke[b])
                        mag[b] += abs(qe[b] * ke[b])
                for b in range(nb):
                    racc = (pr[j, b] + (dh + 2) * U * mag[b]) * (1 + (dh + 4) * U) + ETA
                    acc = pm[j, b]
                    sv_ = acc * cm
                    pr[j, b] = (abs(acc) * cr + racc * (cm + cr) + U * abs(sv_)) * (1 + 4 * U) + ETA
        scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, nb, bounds)
        for e in range(dh):
            for b in range(nb):
                attm[c0 + e, b] = 0.0
                attr[c0 + e, b] = 0.0
        for j in range(s):
            for e in range(dh):
                ve = qkvm[j, 2 * d + c0 + e]
                for b in range(nb):
                    attm[c0 + e, b] += pm[j, b] * ve[b]
                if bounds:
                    rve = qkvr[j, 2 * d + c0 + e]
                    for b in range(nb):
                        attr[c0 + e, b] += (
                            pm[j, b] * rve[b]
                            + pr[j, b] * (abs(ve[b]) + rve[b])
                            + (s + 2) * U * pm[j, b] * abs(ve[b])
                        )
        if bounds:
            for e in range(dh):
                for b in range(nb):
                    attr[c0 + e, b] = attr[c0 + e, b] * (1 + (2 * s + 6) * U) + ETA


@kernel(
    types.void(
        A3, A3, A2, A2, A1, i8, f8, f8, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, b1,
    )
)  # fmt: skip
def readout_attention(
    x, rx, wint, awint, binv, n_heads, cm, cr, attm, attr, qm, qr, um, ur, xbm, xbr, pm, pr,
    sv, scratch, bounds,
):  # fmt: skip  # pragma: no cover
    """Concatenated head outputs (before out_proj) at the readout position s-1 of a layer
    whose attention inputs are x (s, d, nb): q = W_q x_r + b_q; per head the scores are
    (W_k,h^T q_h) . x_j + q_h . b_k,h (= q_h . k_j), and, as the exact softmax weights sum to
    1, A_h = W_v,h (sum_j p_j x_j) + b_v,h. Costs O(s d) per head instead of O(s d^2).
    Componentwise radii; sv: scratch (SV_ROWS, nb)."""
    s = x.shape[0]
    d = x.shape[1]
    nb = x.shape[2]
    dh = d // n_heads
    r = s - 1
    tot = sv[SV_TOT]
    rtot = sv[SV_RTOT]
    gap = sv[SV_GAP]
    mx = sv[SV_MAX]
    beta = sv[SV_BETA]
    rbeta = sv[SV_RBETA]
    matvec(x[r], rx[r], wint, awint, binv, 0, d, qm, qr, scratch, bounds)
    for hd in range(n_heads):
        c0 = hd * dh
        for b in range(nb):
            beta[b] = 0.0
        for k in range(d):
            for b in range(nb):
                um[k, b] = 0.0
        for e in range(dh):
            qe = qm[c0 + e]
            bk = binv[d + c0 + e]
            for b in range(nb):
                beta[b] += bk * qe[b]
            for k in range(d):
                w = wint[k, d + c0 + e]
                for b in range(nb):
                    um[k, b] += w * qe[b]
        if bounds:
            g = (dh + 2) * U
            inflate = 1 + (2 * dh + 5) * U
            for e in range(dh):
                for b in range(nb):
                    scratch[e, b] = qr[c0 + e, b] + g * abs(qm[c0 + e, b])
            for b in range(nb):
                rbeta[b] = 0.0
            for k in range(d):
                for b in range(nb):
                    ur[k, b] = 0.0
            for e in range(dh):
                abk = abs(binv[d + c0 + e])
                for b in range(nb):
                    rbeta[b] += abk * scratch[e, b]
                for k in range(d):
                    aw = awint[k, d + c0 + e]
                    for b in range(nb):
                        ur[k, b] += aw * scratch[e, b]
            for b in range(nb):
                rbeta[b] = rbeta[b] * inflate + ETA
            for k in range(d):
                for b in range(nb):
                    ur[k, b] = ur[k, b] * inflate + ETA
        # scores s_j = (u . x_j + beta) / sqrt(d_h)
        for j in range(s):
            for b in range(nb):
                pm[j, b] = beta[b]
            for k in range(d):
                xk = x[j, k]
                uk = um[k]
                for b in range(nb):
                    pm[j, b] += uk[b] * xk[b]
            if bounds:
                for b in range(nb):
                    pr[j, b] = rbeta[b]
                    tot[b] = abs(beta[b])
                for k in range(d):
                    xk = x[j, k]
                    rxk = rx[j, k]
                    uk = um[k]
                    ruk = ur[k]
                    for b in range(nb):
                        pr[j, b] += abs(uk[b]) * rxk[b] + ruk[b] * (abs(xk[b]) + rxk[b])
                        tot[b] += abs(uk[b] * xk[b])
                for b in range(nb):
                    rt = (pr[j, b] + (d + 3) * U * tot[b]) * (1 + (2 * d + 6) * U) + ETA
                    t = pm[j, b]
                    pr[j, b] = (abs(t) * cr + rt * (cm + cr) + U * abs(t * cm)) * (1 + 4 * U) + ETA
        scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, nb, bounds)
        # xbar = sum_j p_j x_j (um holds sum_j p_j |x_j| for the rounding bound)
        for k in range(d):
            for b in range(nb):
                xbm[k, b] = 0.0
                xbr[k, b] = 0.0
                um[k, b] = 0.0
        for j in range(s):
            for k in range(d):
                xk = x[j, k]
                for b in range(nb):
                    xbm[k, b] += pm[j, b] * xk[b]
                if bounds:
                    rxk = rx[j, k]
                    for b in range(nb):
                        ax = abs(xk[b])
                        xbr[k, b] += pm[j, b] * rxk[b] + pr[j, b] * (ax + rxk[b])
                        um[k, b] += pm[j, b] * ax
        if bounds:
            for k in range(d):
                for b in range(nb):
                    xbr[k, b] = (xbr[k, b] + (s + 2) * U * um[k, b]) * (1 + (2 * s + 6) * U) + ETA
        matvec(
            xbm, xbr, wint, awint, binv, 2 * d + c0, 2 * d + c0 + dh, attm[c0 : c0 + dh],
            attr[c0 : c0 + dh], scratch, bounds,
        )  # fmt: skip


@kernel(types.void(A2, A1, A2, A1, i8, i8, A2, A1))
def key_query(qm, b_in, w_key, zero_d, c0, dh, um, beta):  # pragma: no cover - jitted
    """The keys' side of a head's query q = qm[:dh] (head columns c0 .. c0 + dh of in_proj):
    beta = b_k,h . q and u = W_k,h^T q, in registers (``dense.matvec_mid`` with the weights
    W_k,h, the transpose of W_k,h^T; zero_d: d zeros), so that the scores are u . x_j + beta."""
    d = um.shape[0]
    for b in range(BS):
        beta[b] = 0.0
    for e in range(dh):
        bk = b_in[d + c0 + e]
        for b in range(BS):
            beta[b] += bk * qm[e, b]
    matvec_mid(qm[:dh], w_key[c0 : c0 + dh], zero_d, 0, d, um)


@kernel(types.void(A3, i8, A2, A1, A2, A1, i8, f8, A2, A3, A3, A3, A3, A2, A2))
def attention_row_mid(
    x, i, w_int, b_in, w_key, zero_d, n_heads, cm, att, qm, um, pm, pr, bt, sv
):  # pragma: no cover - jitted
    """The midpoints of :func:`attention_row_l2` (its operations in its order, no radius) at
    query position i: two heads at a time share each pass over x (``register_sums``'s
    ``dots_rows2`` and ``mix_rows2``: the numbers of ``dots_rows`` and ``mix_rows``). For the
    positions whose radius nothing needs (check-model's diagnostics). Scratch: qm, um (2, d,
    BS), pm, pr (2, s, BS), bt (2, BS), sv (SV_ROWS, BS)."""
    s = x.shape[0]
    d = x.shape[1]
    dh = d // n_heads
    tot, rtot, gap, mx = sv[SV_TOT], sv[SV_RTOT], sv[SV_GAP], sv[SV_MAX]
    hd = 0
    while hd < n_heads:
        two = hd + 1 < n_heads
        for k in range(2 if two else 1):
            c0 = (hd + k) * dh
            matvec_mid(x[i], w_int, b_in, c0, c0 + dh, qm[k])
            key_query(qm[k], b_in, w_key, zero_d, c0, dh, um[k], bt[k])
        if two:
            dots_rows2(um[0], um[1], x, bt[0], bt[1], pm[0], pm[1])
        else:
            dots_rows(um[0], x, bt[0], pm[0])
        for k in range(2 if two else 1):
            scaled_softmax(pm[k], pr[k], cm, mx, tot, rtot, gap, s, BS, False)
        if two:
            mix_rows2(pm[0], pm[1], x, um[0], um[1])  # xbar = sum_j p_j x_j, into um
        else:
            mix_rows(pm[0], x, um[0])
        for k in range(2 if two else 1):
            c0 = (hd + k) * dh
            matvec_mid(um[k], w_int, b_in, 2 * d + c0, 2 * d + c0 + dh, att[c0 : c0 + dh])
        hd += 2


@kernel(
    types.void(
        A3, A2, A2, A2, i8, A2, A1, A2, A1, A2, A2, i8, f8, f8, A1, A2, A1, A2, A1, A2, A1, A2,
        A2, A2, A2, A2, b1,
    )
)  # fmt: skip
def attention_row_l2(
    x, rho, xm, xn, i, w_int, b_in, w_key, zero_d, head_norms, wn, n_heads, cm, cr, zero, att,
    ratt, qm, rq, um, ru, pm, pr, sig, p0, sv, bounds,
):  # fmt: skip  # pragma: no cover - jitted
    """Concatenated head outputs (before out_proj) at query position i of a layer whose
    attention inputs x (s, d, BS) are known within the 2-norm radii rho (s, BS): |x'_j - x_j|_2
    <= rho[j] for the exact inputs x'. Returns ratt[b] >= the 2-norm error of the whole
    concatenation. xm[j] = max|x_j| and xn[j] >= |x_j|_2 (per string, computed once per layer).
    w_int: in_proj_weight transposed (d, 3d); w_key: its keys' rows W_k (d, d), not
    transposed, for u = W_k,h^T q as a register-blocked product; zero_d: d zeros.

    Midpoints as in the per-string kernel's readout rule: per head q = W_q,h x_i + b_q,h,
    u = W_k,h^T q, beta = b_k,h . q, scores a_j = (u . x_j + beta) / sqrt(d_h), p = softmax(a),
    xbar = sum_j p_j x_j, A_h = W_v,h xbar + b_v,h.

    Radius (per head; q, a, p, xbar exact at the midpoints x unless primed):
    - score a'_j - a~_j = (a'_j - a_j) + (a_j - a~_j). The rounding part by the scalar rules at
      zero input radius (head_norms: infinity norms, columns HB_*). The data part, by
      Cauchy-Schwarz: c [ |q' - q| |k'_j| + |W_k,h^T q| |x'_j - x_j| ] with |q' - q| <=
      |W_q,h|_2 rho_i, |k'_j| <= |W_k,h|_2 (|x_j| + rho_j) + |b_k,h|, |W_k,h^T q| <= |u~|_2 +
      sqrt(d) r_u, c <= cm + cr. sig_j: the sum, a radius of the scaled score.
    - sum_j p'_j x'_j - xbar~ = sum p'_j (x'_j - x_j) + sum (p'_j - p_j(a~)) x_j
      + sum (p_j(a~) - p~_j) x_j + (sum p~_j x_j - xbar~). The first <= sum (p~_j + r_j) rho_j
      (r_j: ``scaled_softmax``'s radius over the score box sig, so p'_j <= p~_j + r_j). The
      second is int_0^1 J(g_t)(a' - a~) . x dt with J = diag(p) - p p^T, and as the exact
      weights sum to 1, (J da) . x = sum_j p_j(g) da_j (x_j - xbar(g)); g_t stays in the score
      box, so it is <= sum_j (p~_j + r_j) sig_j (|x_j - xbar~|_2 + A) with A >= |xbar~ -
      xbar(g)|_2 <= sum_k r_k |x_k|_2 + the fourth term. The third <= sum_j r0_j |x_j|_2
      (``softmax_rounding``: the softmax's rounding at a~). The fourth <= gamma_{s+2} sum_j
      p~_j |x_j|_2 (componentwise gamma sum_j p~_j |x_jk|).
    - A'_h - A~_h: |W_v,h|_2 times that bound, plus sqrt(d_h) times the scalar rounding bound
      of W_v,h xbar~ + b_v,h.
    ratt is the 2-norm over the heads. wn: the layer's ``double_double.layer_norms`` row
    (spectral norms in row WN_SPEC, bias 2-norms in row WN_BIAS; columns: query blocks, key
    blocks, value blocks). zero: a (BS,) array of zeros. sig, p0: scratch (s, BS); sv: scratch
    (SV_ROWS, BS)."""
    s = x.shape[0]
    d = x.shape[1]
    dh = d // n_heads
    tot = sv[SV_TOT]
    rtot = sv[SV_RTOT]
    gap = sv[SV_GAP]
    mx = sv[SV_MAX]
    beta = sv[SV_BETA]
    rbeta = sv[SV_RBETA]
    usum = sv[SV_USUM]
    xmax = sv[SV_XMAX]
    unorm = sv[SV_UNORM]
    dq = sv[SV_DQ]
    e_sum = sv[SV_ESUM]
    a_sum = sv[SV_ASUM]
    sq_sum = sv[SV_SQSUM]
    sq_d = math.sqrt(d) * (1 + 2 * U)
    sq_dh = math.sqrt(dh) * (1 + 2 * U)
    g_x = (s + 2) * U  # the weighted sum's rounding, relative to sum p~_j |x_j|
    for b in range(BS):
        ratt[b] = 0.0
        sq_sum[b] = 0.0
    for hd in range(n_heads):
        c0 = hd * dh
        hn = head_norms[hd]
        matvec_scalar(
            x[i], zero, w_int, b_in, c0, c0 + dh, hn[HB_WQ], hn[HB_BQ], qm, rq, xmax, bounds
        )  # rq: the rounding of q
        key_query(qm, b_in, w_key, zero_d, c0, dh, um, beta)
        if bounds:
            g = (dh + 2) * U
            wq2 = wn[WN_SPEC, hd]
            wk2 = wn[WN_SPEC, n_heads + hd]
            bk2 = wn[WN_BIAS, n_heads + hd]
            col_absmax(qm[:dh], xmax)
            for b in range(BS):
                base = rq[b] + g * xmax[b]
                ru[b] = hn[HB_WKT] * base * (1 + (2 * dh + 5) * U) + ETA
                rbeta[b] = hn[HB_BK] * base * (1 + (2 * dh + 5) * U) + ETA
                usum[b] = 0.0
                unorm[b] = 0.0
            for k in range(d):
                for b in range(BS):
                    usum[b] += abs(um[k, b])
                    unorm[b] += um[k, b] * um[k, b]
            for b in range(BS):
                un = math.sqrt(unorm[b] * (1 + (d + 3) * U)) * (1 + 2 * U)
                unorm[b] = (un + sq_d * ru[b]) * (1 + 2 * U)  # >= |W_k,h^T q|_2
                dq[b] = wq2 * rho[i, b] * (1 + U)  # >= |q' - q|_2
        # scores s_j = (u . x_j + beta) / sqrt(d_h), the sums in registers (stages.register_sums)
        dots_rows(um, x, beta, pm)
        if bounds:
            for j in range(s):
                for b in range(BS):
                    t = pm[j, b]
                    p0[j, b] = t  # kept for softmax_rounding
                    xj = xm[j, b]
                    rt0 = (
                        ru[b] * d * xj + rbeta[b] + (d + 3) * U * (usum[b] * xj + abs(beta[b]))
                    ) * (1 + (2 * d + 6) * U) + ETA  # the rounding: the scalar rule at rx = 0
                    kj = (wk2 * (xn[j, b] + rho[j, b]) + bk2) * (1 + 3 * U)  # >= |k'_j|_2
                    rtd = (dq[b] * kj + unorm[b] * rho[j, b]) * (1 + 3 * U)
                    sg = (abs(t) * cr + (rt0 + rtd) * (cm + cr) + U * abs(t * cm)) * (
                        1 + 5 * U
                    ) + ETA
                    pr[j, b] = sg
                    sig[j, b] = sg
        scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, BS, bounds)
        mix_rows(pm, x, um)  # xbar = sum_j p_j x_j, into um
        if bounds:
            softmax_rounding(pm, p0, cm, mx, tot, s, p0, rtot, gap)  # p0: r0_j
            for b in range(BS):
                e_sum[b] = 0.0  # sum (p~ + r) rho + sum r0 |x| + gamma sum p~ |x|
                a_sum[b] = 0.0  # A = sum r |x| + gamma sum p~ |x|
            for j in range(s):
                for b in range(BS):
                    pj = pm[j, b]
                    rj = pr[j, b]
                    xnj = xn[j, b]
                    gx = g_x * pj * xnj
                    e_sum[b] += (pj + rj) * rho[j, b] + p0[j, b] * xnj + gx
                    a_sum[b] += rj * xnj + gx
            for b in range(BS):
                a_sum[b] = a_sum[b] * (1 + (2 * s + 6) * U)
            dist2_rows(x, um, p0)  # p0 (free from here on): |x_j - xbar~|_2^2
            for j in range(s):
                for b in range(BS):
                    dist = math.sqrt(p0[j, b] * (1 + (d + 5) * U)) * (1 + 2 * U)
                    e_sum[b] += (pm[j, b] + pr[j, b]) * sig[j, b] * (dist + a_sum[b])
        matvec_scalar(
            um, zero, w_int, b_in, 2 * d + c0, 2 * d + c0 + dh, hn[HB_WV], hn[HB_BV],
            att[c0 : c0 + dh], rq, xmax, bounds,
        )  # fmt: skip  # rq: the rounding of A_h at xbar~
        if bounds:
            wv2 = wn[WN_SPEC, 2 * n_heads + hd]
            for b in range(BS):
                eh = (wv2 * e_sum[b] * (1 + (4 * s + 8) * U) + sq_dh * rq[b]) * (1 + 3 * U)
                sq_sum[b] += eh * eh
    if bounds:
        for b in range(BS):
            ratt[b] = math.sqrt(sq_sum[b] * (1 + (n_heads + 3) * U)) * (1 + 2 * U) + ETA
