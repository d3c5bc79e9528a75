"""Numba float64 kernels of the transformer with an optional rigorous error radius.

One kernel, :func:`certified_T`, evaluates T(x) for a batch of strings. With ``bounds`` it also
carries, for every intermediate value, a radius bounding |exact - computed| (midpoint-radius
arithmetic with the rounding bounds of ``verify.model.arith``: U = 2^-52, gamma_n <= n U for
dot products and sums in any order, exp within 16 ulps, sqrt and division correctly rounded;
each radius is inflated by a relative (1 + c U) and an absolute ETA for underflow), so
|T_exact - T| <= radius. Without ``bounds`` it is the plain float64 pass.

Speed: the first layer's inputs depend only on (bit, position), so its queries, keys, values,
the exponentiated scores exp(q_i k_j / sqrt(d_h) - M_i) and the values pushed through the output
projection are tabulated beforehand (``verify.model.fast`` builds the tables, with radii). The
last layer computes only the readout position. Strings go in blocks of ``BS``, the block index
innermost in every array, so the loops over strings vectorise; blocks run in parallel (prange).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from verify._numba import kernel

U = 2.0**-52
ETA = 1e-300
EXP_ULPS = 8.0
TINY = 1e-322  # >= 16 subnormal ulps: bounds exp(a) when fl(exp(a)) underflows to 0
BS = 32  # strings per block

f8 = types.float64
A1 = types.Array(f8, 1, "C")
A2 = types.Array(f8, 2, "C")
A3 = types.Array(f8, 3, "C")
A4 = types.Array(f8, 4, "C")
A5 = types.Array(f8, 5, "C")
U2 = types.Array(types.uint8, 2, "C")
i8 = types.int64
b1 = types.boolean


@kernel(types.void(A2, A2, A2, A2, A1, i8, i8, A2, A2, A2, b1))
def matvec(x, rx, wt, awt, bias, c0, c1, out, rout, scratch, bounds):  # pragma: no cover
    """out[j, :] = bias[c0+j] + sum_k wt[k, c0+j] x[k, :] (wt = W^T), with radius rout."""
    n = x.shape[0]
    nb = x.shape[1]
    m = c1 - c0
    g = (n + 2) * U
    for j in range(m):
        o = out[j]
        bj = bias[c0 + j]
        for b in range(nb):
            o[b] = bj
        for k in range(n):
            w = wt[k, c0 + j]
            xk = x[k]
            for b in range(nb):
                o[b] += w * xk[b]
    if bounds:
        for k in range(n):
            for b in range(nb):
                scratch[k, b] = rx[k, b] + g * abs(x[k, b])
        inflate = 1.0 + (2 * n + 5) * U
        for j in range(m):
            ro = rout[j]
            rb = g * abs(bias[c0 + j])
            for b in range(nb):
                ro[b] = rb
            for k in range(n):
                aw = awt[k, c0 + j]
                sk = scratch[k]
                for b in range(nb):
                    ro[b] += aw * sk[b]
            for b in range(nb):
                ro[b] = ro[b] * inflate + ETA


@kernel(types.void(A2, f8, i8, A2, A1, A1, A1))
def layer_norm_moments(v, eps, nb, out, mean, var, z):  # pragma: no cover - jitted
    """Per string b < nb (axis 1): mean and biased variance of v over axis 0, the centred
    values into out, and z = 1 / sqrt(var + eps) (inf or NaN when var + eps is 0)."""
    d = v.shape[0]
    for b in range(nb):
        mean[b] = 0.0
        var[b] = 0.0
    for i in range(d):
        for b in range(nb):
            mean[b] += v[i, b]
    for b in range(nb):
        mean[b] = mean[b] / d
    for i in range(d):
        for b in range(nb):
            c = v[i, b] - mean[b]
            out[i, b] = c
            var[b] += c * c
    for b in range(nb):
        var[b] = var[b] / d
        z[b] = 1.0 / math.sqrt(var[b] + eps)


@kernel(f8(f8, f8, f8, i8, f8))
def rsqrt_radius(var, eps, acc, d, z):  # pragma: no cover - jitted
    """A bound of |z_exact - z| for z = 1 / sqrt(var + eps) computed from var, the biased
    variance of d centred values whose errors contribute acc = sum_i (2 |c_i| r_i + r_i^2):
    r_var covers acc / d and the rounding of var, and with v = var + eps - r_sv > 0,
    |z_exact - z| <= r_sv / (2 v^{3/2}) + 4 U z; inf when the variance ball reaches 0."""
    sv = var + eps
    rvar = ((acc + (d + 2) * U * var * d) / d + 2 * U * var) * (1 + (d + 4) * U) + ETA
    rsv = (rvar + U * sv) * (1 + 2 * U)
    low = (sv - rsv) * (1 - U)
    if low > 0:
        return rsv / (2.0 * low * math.sqrt(low) * (1 - 4 * U)) + 4 * U * z
    return np.inf


@kernel(types.void(A2, A2, A1, A1, f8, A2, A2, A2, b1))
def layer_norm(v, rv, gain, bias, eps, out, rout, ls, bounds):  # pragma: no cover
    """out = gain * (v - mean) / sqrt(var + eps) + bias over axis 0, per string (axis 1).

    ls: scratch (6, nb). At eps = 0 and var = 0 the plain pass gives NaN; with bounds, a
    variance enclosure that reaches 0 gives an infinite radius, never a number."""
    d = v.shape[0]
    nb = v.shape[1]
    mean = ls[0]
    var = ls[1]
    z = ls[2]
    rz = ls[3]
    rmean = ls[4]
    acc = ls[5]
    layer_norm_moments(v, eps, nb, out, mean, var, z)
    if bounds:
        for b in range(nb):
            rmean[b] = 0.0
            acc[b] = 0.0
        for i in range(d):
            for b in range(nb):
                rmean[b] += rv[i, b]
                acc[b] += abs(v[i, b])
        for b in range(nb):
            rmean[b] = ((rmean[b] + (d + 1) * U * acc[b]) / d + 2 * U * abs(mean[b])) * (
                1 + (d + 4) * U
            )
            acc[b] = 0.0
        for i in range(d):
            for b in range(nb):
                c = out[i, b]
                rc = (rv[i, b] + rmean[b] + U * abs(c)) * (1 + 3 * U)
                rout[i, b] = rc
                acc[b] += 2 * abs(c) * rc + rc * rc
        for b in range(nb):
            rz[b] = rsqrt_radius(var[b], eps, acc[b], d, z[b])
    for i in range(d):
        gi = gain[i]
        bi = bias[i]
        for b in range(nb):
            c = out[i, b]
            cz = c * z[b]
            o = cz * gi
            o2 = o + bi
            out[i, b] = o2
            if bounds:
                rc = rout[i, b]
                r = abs(c) * rz[b] + rc * (z[b] + rz[b]) + U * abs(cz)
                r = r * abs(gi) + U * abs(o)
                rout[i, b] = (r + U * abs(o2)) * (1 + 8 * U) + ETA


@kernel(types.void(A2, A2, b1))
def relu(x, rx, bounds):  # pragma: no cover
    """x <- max(x, 0) in place; relu is 1-Lipschitz, so the radius carries over."""
    for i in range(x.shape[0]):
        for b in range(x.shape[1]):
            if bounds and x[i, b] + rx[i, b] <= 0.0:
                rx[i, b] = 0.0
            if x[i, b] < 0.0:
                x[i, b] = 0.0


@kernel(types.void(A2, A2, A2, A2, b1))
def add_into(y, ry, a, ra, bounds):  # pragma: no cover
    """y <- y + a with radius."""
    for i in range(y.shape[0]):
        for b in range(y.shape[1]):
            s = y[i, b] + a[i, b]
            y[i, b] = s
            if bounds:
                ry[i, b] = (ry[i, b] + ra[i, b] + U * abs(s)) * (1 + 2 * U)


@kernel(
    types.void(
        i8, b1, A2, A2, A2, A2, A3, A3, A2, A3, A3, A2, A2, A2, f8, A2, A2, A2, A2, A2, A2, b1
    )
)
def finish_position(
    layer, norm_first, y, ry, a, ra, w1t, aw1t, b1v, w2t, aw2t, b2v, gains, biases, eps,
    hid, rhid, tmp, rtmp, scratch, ls, bounds,
):  # fmt: skip  # pragma: no cover
    """Given the residual input y and the attention output a at one position (per string),
    compute the layer's output there (post-LN or pre-LN) into y, ry (a is overwritten)."""
    d = y.shape[0]
    f = hid.shape[0]
    k1 = 2 * layer
    if norm_first:
        add_into(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y))
        layer_norm(y, ry, gains[k1 + 1], biases[k1 + 1], eps, tmp, rtmp, ls, bounds)
        matvec(tmp, rtmp, w1t[layer], aw1t[layer], b1v[layer], 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t[layer], aw2t[layer], b2v[layer], 0, d, tmp, rtmp, scratch, bounds)
        add_into(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into(a, ra, y, ry, bounds)  # d1 = y + MHA(y)
        layer_norm(a, ra, gains[k1], biases[k1], eps, y, ry, ls, bounds)  # y <- h
        matvec(y, ry, w1t[layer], aw1t[layer], b1v[layer], 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t[layer], aw2t[layer], b2v[layer], 0, d, tmp, rtmp, scratch, bounds)
        add_into(tmp, rtmp, y, ry, bounds)  # d2 = h + FFN(h)
        layer_norm(tmp, rtmp, gains[k1 + 1], biases[k1 + 1], eps, y, ry, ls, bounds)


@kernel(types.void(A2, A2, A1, A1, A1, i8, i8, b1))
def softmax_exponentials(pm, pr, mx, tot, rtot, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: e_j = exp(pm[j] - mx) (mx, the float64 maximum of the score
    midpoints, or 0 where it is not finite) and tot = sum_j e_j; with bounds, pr[j] becomes a
    radius of e_j (|exp(a + da) - exp(a)| <= exp(a) expm1(|da|), expm1(x) <= x / (1 - x) for
    x < 1/2, exp within EXP_ULPS ulps,
    TINY for underflow) and rtot = sum_j pr[j]."""
    for b in range(nb):
        if not np.isfinite(mx[b]):
            mx[b] = 0.0
        tot[b] = 0.0
        rtot[b] = 0.0
    for j in range(s):
        for b in range(nb):
            dv = pm[j, b] - mx[b]
            ev = math.exp(dv)
            if bounds:
                rd = (pr[j, b] + U * abs(dv)) * (1 + 2 * U)
                bigv = ev * (1 + EXP_ULPS * U) + TINY  # >= exp(dv)
                if rd < 0.5:  # expm1(x) <= x / (1 - x) on [0, 1): no libm call
                    em = rd / (1 - rd) * (1 + 4 * U)
                else:
                    em = math.expm1(rd) * (1 + EXP_ULPS * U)
                re = bigv * (em + EXP_ULPS * U)
                pr[j, b] = re * (1 + 4 * U) + ETA
                rtot[b] += pr[j, b]
            pm[j, b] = ev
            tot[b] += ev


@kernel(types.void(A2, A2, A1, A1, A1, i8, i8, b1))
def softmax_normalise(pm, pr, tot, rtot, gap, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: p_j = e_j / tot. With bounds, rtot (the radii of the e_j summed)
    also covers the rounding of the sum (gamma_{s+1}), gap = a lower bound of the exact
    denominator, and pr[j] = ((r_j + p_j (1 + U) rtot) / gap + U p_j) (1 + 4U), or inf when
    gap <= 0 (the denominator's enclosure reaches 0)."""
    if bounds:
        for b in range(nb):
            rtot[b] = (rtot[b] + (s + 1) * U * tot[b]) * (1 + (s + 4) * U)
            gap[b] = (tot[b] - rtot[b]) * (1 - U)
    for j in range(s):
        for b in range(nb):
            p = pm[j, b] / tot[b]
            pm[j, b] = p
            if bounds:
                if gap[b] > 0:
                    pr[j, b] = ((pr[j, b] + p * (1 + U) * rtot[b]) / gap[b] + U * p) * (1 + 4 * U)
                else:
                    pr[j, b] = np.inf


@kernel(types.void(A2, A2, f8, A1, A1, A1, A1, i8, i8, b1))
def scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: p = softmax over j of cm pm[j] (cm = 1/sqrt(d_h)), shifted by
    the float64 maximum of the scaled scores (an exact constant: softmax is invariant under
    it). On entry pr[j] bounds the error of the scaled score; on return that of p_j."""
    for b in range(nb):
        mx[b] = -np.inf
    for j in range(s):
        for b in range(nb):
            sc = pm[j, b] * cm
            pm[j, b] = sc
            if sc > mx[b]:
                mx[b] = sc
    softmax_exponentials(pm, pr, mx, tot, rtot, s, nb, bounds)
    softmax_normalise(pm, pr, tot, rtot, gap, s, nb, bounds)


@kernel(
    types.void(
        types.Array(f8, 3, "C"), types.Array(f8, 3, "C"), A2, A2, A1, i8, f8, f8,
        A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, b1,
    )
)  # fmt: skip
def readout_attention(
    x, rx, wint, awint, binv, n_heads, cm, cr, attm, attr, qm, qr, um, ur, xbm, xbr, pm, pr,
    sv, scratch, bounds,
):  # fmt: skip  # pragma: no cover
    """Concatenated head outputs (before out_proj) at the readout position s-1 of a layer
    whose attention inputs are x (s, d, nb): q = W_q x_r + b_q; per head the scores are
    (W_k,h^T q_h) . x_j + q_h . b_k,h (= q_h . k_j), and, as the exact softmax weights sum to
    1, A_h = W_v,h (sum_j p_j x_j) + b_v,h. Costs O(s d) per head instead of O(s d^2)."""
    s = x.shape[0]
    d = x.shape[1]
    nb = x.shape[2]
    dh = d // n_heads
    r = s - 1
    tot = sv[0]
    rtot = sv[1]
    gap = sv[2]
    mx = sv[3]
    beta = sv[4]
    rbeta = sv[5]
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
        U2, b1, b1, i8,
        A3, A3, A5, A5, A4, A4,
        A3, A3, A2, A3, A3, A2, A3, A3, A2, A3, A3, A2,
        A2, A2, A1, A1, A1, A1, b1, A1, A1,
    ),
    parallel=True,
)  # fmt: skip
def certified_T(
    bits, eos, norm_first, n_heads,
    y0m, y0r, sce_m, sce_r, vo_m, vo_r,
    wint, awint, binv, wot, awot, bov, w1t, aw1t, b1v, w2t, aw2t, b2v,
    gains, biases, w, aw, scal, inv_sqrt_dh, bounds, t_out, r_out,
):  # fmt: skip  # pragma: no cover
    """T(x) (and, with bounds, a rigorous radius) for each row of ``bits``.

    scal = [eps, omega]; inv_sqrt_dh = [mid, radius] of 1/sqrt(d_h)."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    s = n + 1 if eos else n
    n_layers = wint.shape[0]
    d = y0m.shape[2]
    f = w1t.shape[2]
    dh = d // n_heads
    eps = scal[0]
    omega = scal[1]
    cm = inv_sqrt_dh[0]
    cr = inv_sqrt_dh[1]
    n_norms = gains.shape[0]
    n_blocks = (n_str + BS - 1) // BS
    big = max(3 * d, f)
    for blk in prange(n_blocks):
        start = blk * BS
        nb = min(BS, n_str - start)
        tok = np.empty((s, nb), dtype=np.int64)
        ym = np.empty((s, d, nb))
        yr = np.zeros((s, d, nb))
        qkvm = np.empty((s, 3 * d, nb))
        qkvr = np.zeros((s, 3 * d, nb))
        am = np.empty((d, nb))
        ar = np.zeros((d, nb))
        amag = np.zeros((d, nb))
        attm = np.empty((d, nb))
        attr = np.zeros((d, nb))
        hid = np.empty((f, nb))
        rhid = np.zeros((f, nb))
        tmp = np.empty((d, nb))
        rtmp = np.zeros((d, nb))
        pm = np.empty((s, nb))
        pr = np.zeros((s, nb))
        scratch = np.empty((big, nb))
        ls = np.empty((6, nb))
        tot = np.empty(nb)
        rtot = np.zeros(nb)
        gap = np.zeros(nb)
        mx = np.empty(nb)
        xs = np.empty((s, d, nb))
        xsr = np.zeros((s, d, nb))
        qm = np.empty((d, nb))
        qr = np.zeros((d, nb))
        um = np.empty((d, nb))
        ur = np.zeros((d, nb))
        xbm = np.empty((d, nb))
        xbr = np.zeros((d, nb))
        svec = np.zeros((6, nb))
        for b in range(nb):
            for i in range(n):
                tok[i, b] = bits[start + b, i]
            if eos:
                tok[s - 1, b] = 2
        # ---------------- layer 0, from the (bit, position) tables
        first_q = 0 if n_layers > 1 else s - 1
        for i in range(first_q, s):
            for e in range(d):
                for b in range(nb):
                    am[e, b] = bov[0, e]
                    ar[e, b] = 0.0
                    amag[e, b] = abs(bov[0, e])
            for hd in range(n_heads):
                for b in range(nb):
                    tot[b] = 0.0
                    rtot[b] = 0.0
                for j in range(s):
                    for b in range(nb):
                        v = sce_m[tok[i, b], i, tok[j, b], j, hd]
                        pm[j, b] = v
                        tot[b] += v
                if bounds:
                    for j in range(s):
                        for b in range(nb):
                            rv = sce_r[tok[i, b], i, tok[j, b], j, hd]
                            pr[j, b] = rv
                            rtot[b] += rv
                softmax_normalise(pm, pr, tot, rtot, gap, s, nb, bounds)
                for j in range(s):
                    for e in range(d):
                        v0 = vo_m[0, j, hd, e]
                        v1 = vo_m[1, j, hd, e]
                        v2 = vo_m[2, j, hd, e]
                        for b in range(nb):
                            t = tok[j, b]
                            v = v0 if t == 0 else (v1 if t == 1 else v2)
                            am[e, b] += pm[j, b] * v
                        if bounds:
                            r0 = vo_r[0, j, hd, e]
                            r1 = vo_r[1, j, hd, e]
                            r2 = vo_r[2, j, hd, e]
                            for b in range(nb):
                                t = tok[j, b]
                                v = v0 if t == 0 else (v1 if t == 1 else v2)
                                rv = r0 if t == 0 else (r1 if t == 1 else r2)
                                ar[e, b] += pm[j, b] * rv + pr[j, b] * (abs(v) + rv)
                                amag[e, b] += pm[j, b] * abs(v)
            if bounds:  # rounding of the accumulation: s*H + 1 terms per entry
                g = (s * n_heads + 2) * U
                for e in range(d):
                    for b in range(nb):
                        ar[e, b] = (ar[e, b] + g * amag[e, b]) * (
                            1 + (2 * s * n_heads + 5) * U
                        ) + ETA
            for e in range(d):
                for b in range(nb):
                    t = tok[i, b]
                    ym[i, e, b] = y0m[t, i, e]
                    yr[i, e, b] = y0r[t, i, e]
            finish_position(
                0, norm_first, ym[i], yr[i], am, ar, w1t, aw1t, b1v, w2t, aw2t, b2v,
                gains, biases, eps, hid, rhid, tmp, rtmp, scratch, ls, bounds,
            )  # fmt: skip
        # ---------------- layers 1..L-1
        for layer in range(1, n_layers):
            last = layer == n_layers - 1
            k1 = 2 * layer
            if last:  # readout position only: attention in O(s d) per head
                src = ym
                srcr = yr
                if norm_first:
                    for j in range(s):
                        layer_norm(
                            ym[j], yr[j], gains[k1], biases[k1], eps, xs[j], xsr[j], ls, bounds
                        )
                    src = xs
                    srcr = xsr
                readout_attention(
                    src, srcr, wint[layer], awint[layer], binv[layer], n_heads, cm, cr, attm,
                    attr, qm, qr, um, ur, xbm, xbr, pm, pr, svec, scratch, bounds,
                )  # fmt: skip
                matvec(
                    attm, attr, wot[layer], awot[layer], bov[layer], 0, d, am, ar, scratch,
                    bounds,
                )  # fmt: skip
                finish_position(
                    layer, norm_first, ym[s - 1], yr[s - 1], am, ar, w1t, aw1t, b1v, w2t,
                    aw2t, b2v, gains, biases, eps, hid, rhid, tmp, rtmp, scratch, ls, bounds,
                )  # fmt: skip
                continue
            for j in range(s):  # queries, keys, values of every position (pre-LN: of LN1(y))
                if norm_first:
                    layer_norm(ym[j], yr[j], gains[k1], biases[k1], eps, tmp, rtmp, ls, bounds)
                    matvec(
                        tmp, rtmp, wint[layer], awint[layer], binv[layer], 0, 3 * d,
                        qkvm[j], qkvr[j], scratch, bounds,
                    )  # fmt: skip
                else:
                    matvec(
                        ym[j], yr[j], wint[layer], awint[layer], binv[layer], 0, 3 * d,
                        qkvm[j], qkvr[j], scratch, bounds,
                    )  # fmt: skip
            for i in range(s):
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
                                scratch[0, b] = 0.0
                            for e in range(dh):
                                qe = qkvm[i, c0 + e]
                                ke = qkvm[j, d + c0 + e]
                                rqe = qkvr[i, c0 + e]
                                rke = qkvr[j, d + c0 + e]
                                for b in range(nb):
                                    pr[j, b] += abs(qe[b]) * rke[b] + rqe[b] * (abs(ke[b]) + rke[b])
                                    scratch[0, b] += abs(qe[b] * ke[b])
                            for b in range(nb):
                                racc = (pr[j, b] + (dh + 2) * U * scratch[0, b]) * (
                                    1 + (dh + 4) * U
                                ) + ETA
                                acc = pm[j, b]
                                sv = acc * cm
                                pr[j, b] = (abs(acc) * cr + racc * (cm + cr) + U * abs(sv)) * (
                                    1 + 4 * U
                                ) + ETA
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
                matvec(
                    attm, attr, wot[layer], awot[layer], bov[layer], 0, d, am, ar, scratch,
                    bounds,
                )  # fmt: skip
                # keys and values were all taken already: position i may be overwritten
                finish_position(
                    layer, norm_first, ym[i], yr[i], am, ar, w1t, aw1t, b1v, w2t, aw2t, b2v,
                    gains, biases, eps, hid, rhid, tmp, rtmp, scratch, ls, bounds,
                )  # fmt: skip
        # ---------------- final norm and readout
        r = s - 1
        if norm_first:
            layer_norm(
                ym[r], yr[r], gains[n_norms - 1], biases[n_norms - 1], eps, tmp, rtmp, ls, bounds
            )
            for e in range(d):
                for b in range(nb):
                    ym[r, e, b] = tmp[e, b]
                    yr[r, e, b] = rtmp[e, b]
        for b in range(nb):
            t = omega
            rt = 0.0
            mag = abs(omega)
            for e in range(d):
                t += w[e] * ym[r, e, b]
                if bounds:
                    rt += aw[e] * yr[r, e, b]
                    mag += abs(w[e] * ym[r, e, b])
            t_out[start + b] = t
            if bounds:
                r_out[start + b] = (rt + (d + 2) * U * mag) * (1 + (d + 5) * U) + ETA
            else:
                r_out[start + b] = 0.0
