"""Attention at one query position with rigorous radii, from the attention inputs.

- ``attention_at``: from the queries, keys and values of every position (per-string kernel,
  all positions of the layers before the last).
- ``readout_attention`` (componentwise radii) and ``attention_row_scalar`` (scalar radii): at
  one query position straight from the inputs x_j, in O(s d) per head instead of O(s d^2): the
  scores are (W_k,h^T q_h) . x_j + q_h . b_k,h (= q_h . k_j), and, as the exact softmax weights
  sum to 1, the head output is W_v,h (sum_j p_j x_j) + b_v,h.

``sv`` is a scratch array of ``SV_ROWS`` rows, one string per column, rows named below.
"""

from __future__ import annotations

from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import (
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
    b1,
    f8,
    i8,
)
from verify.model.kernels.dense import col_absmax, matvec, matvec_scalar
from verify.model.kernels.softmax import scaled_softmax
from verify.model.rounding import ETA, U

# rows of the attention scratch ``sv``
SV_TOT = 0  # softmax denominator
SV_RTOT = 1  # its radius
SV_GAP = 2  # a lower bound of the exact denominator
SV_MAX = 3  # the row maximum of the scaled scores
SV_BETA = 4  # q_h . b_k,h
SV_RBETA = 5  # its radius
SV_USUM = 6  # a sum of magnitudes (for rounding bounds)
SV_XMAX = 7  # scalar rule: max|x| of a matrix-vector product's input
SV_ROWS = 8


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


@kernel(
    types.void(
        A3, A2, A2, i8, A2, A1, A2, i8, f8, f8, A2, A1, A2, A1, A2, A1, A2, A2, A2, b1
    )
)  # fmt: skip
def attention_row_scalar(
    x, rx, xm, i, w_in, b_in, head_norms, n_heads, cm, cr, att, ratt, qm, rq, um, ru,
    pm, pr, sv, bounds,
):  # fmt: skip  # pragma: no cover - jitted
    """Concatenated head outputs (before out_proj) at query position i of a layer whose
    attention inputs are x (s, d, BS) with radii rx (s, BS) and maxima xm[j] = max|x_j|.

    Per head: q = W_q,h x_i + b_q,h; u = W_k,h^T q and beta = b_k,h . q, so the score is
    (u . x_j + beta) / sqrt(d_h) (= q . k_j / sqrt(d_h)); and, as the exact softmax weights sum
    to 1, A_h = W_v,h (sum_j p_j x_j) + b_v,h. head_norms[h] = [||W_q,h||, max|b_q,h|,
    ||W_k,h^T||, ||b_k,h||_1, ||W_v,h||, max|b_v,h|] (infinity norms, rounded up), columns HB_*.
    Scalar radii; sv: scratch (SV_ROWS, BS)."""
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
    for b in range(BS):
        ratt[b] = 0.0
    for hd in range(n_heads):
        c0 = hd * dh
        hn = head_norms[hd]
        matvec_scalar(
            x[i], rx[i], w_in, b_in, c0, c0 + dh, hn[HB_WQ], hn[HB_BQ], qm, rq, xmax, bounds
        )
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
                ru[b] = hn[HB_WKT] * base * (1 + (2 * dh + 5) * U) + ETA
                rbeta[b] = hn[HB_BK] * base * (1 + (2 * dh + 5) * U) + ETA
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
        matvec_scalar(
            um, ru, w_in, b_in, 2 * d + c0, 2 * d + c0 + dh, hn[HB_WV], hn[HB_BV],
            att[c0 : c0 + dh], rq, xmax, bounds,
        )  # fmt: skip
        if bounds:
            for b in range(BS):
                ratt[b] = max(ratt[b], rq[b])
