"""Numba float64 kernels of the transformer with an optional rigorous error radius.

One kernel, :func:`certified_T`, evaluates T(x) for a batch of strings. With ``bounds`` it also
carries, for every intermediate value, a radius bounding |exact - computed| (midpoint-radius
arithmetic with the rounding bounds of ``verify.model.arith``: U = 2^-52, gamma_n <= n U for
dot products and sums in any order, exp within 16 ulps, sqrt and division correctly rounded;
each radius is inflated by a relative (1 + c U) and an absolute ETA for underflow), so
|T_exact - T| <= radius. Without ``bounds`` it is the plain float64 pass.

The first layer's inputs depend only on (bit, position), so its queries, keys, values, the
exponentiated attention scores exp(q_i k_j / sqrt(d_h) - M_i) and the values pushed through the
output projection are tabulated beforehand (``verify.model.fast`` builds the tables, with radii,
in :class:`~verify.model.arith.MidRad` arithmetic). The last layer computes only the readout
position. Strings are split into blocks handled in parallel (``prange``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from verify._numba import kernel

U = 2.0**-52
ETA = 1e-300
EXP_ULPS = 8.0

f8 = types.float64
A1 = types.Array(f8, 1, "C")
A2 = types.Array(f8, 2, "C")
A3 = types.Array(f8, 3, "C")
A4 = types.Array(f8, 4, "C")
A5 = types.Array(f8, 5, "C")
U2 = types.Array(types.uint8, 2, "C")
i8 = types.int64
b1 = types.boolean


@kernel(types.void(A1, A1, A2, A2, A1, i8, i8, A1, A1, b1))
def matvec(x, rx, wt, awt, bias, c0, c1, out, rout, bounds):  # pragma: no cover - jitted
    """out[j] = bias[c0+j] + sum_k x[k] wt[k, c0+j] for j < c1-c0 (wt = W^T), with radius."""
    n = x.shape[0]
    m = c1 - c0
    g = (n + 2) * U
    for j in range(m):
        out[j] = bias[c0 + j]
    for k in range(n):
        xk = x[k]
        row = wt[k, c0:c1]
        for j in range(m):
            out[j] += xk * row[j]
    if bounds:
        for j in range(m):
            rout[j] = g * abs(bias[c0 + j])
        for k in range(n):
            t = rx[k] + g * abs(x[k])
            arow = awt[k, c0:c1]
            for j in range(m):
                rout[j] += t * arow[j]
        inflate = 1.0 + (2 * n + 5) * U
        for j in range(m):
            rout[j] = rout[j] * inflate + ETA


@kernel(types.UniTuple(f8, 2)(A1, A1, A1, A1, f8, A1, A1, b1))
def layer_norm(v, rv, gain, bias, eps, out, rout, bounds):  # pragma: no cover - jitted
    """out = gain * (v - mean) / sqrt(var + eps) + bias; returns (var, radius of var).

    At eps = 0 and var = 0 the plain pass gives NaN; with bounds, a variance enclosure that
    reaches 0 gives an infinite radius (unbounded z), never a number."""
    d = v.shape[0]
    s = 0.0
    for i in range(d):
        s += v[i]
    mean = s / d
    q = 0.0
    for i in range(d):
        c = v[i] - mean
        out[i] = c
        q += c * c
    var = q / d
    sv = var + eps
    z = 1.0 / math.sqrt(sv)
    rvar = 0.0
    if bounds:
        sa = 0.0
        sr = 0.0
        for i in range(d):
            sa += abs(v[i])
            sr += rv[i]
        rmean = ((sr + (d + 1) * U * sa) / d + 2 * U * abs(mean)) * (1 + (d + 4) * U)
        qr = 0.0
        for i in range(d):
            c = out[i]
            rc = (rv[i] + rmean + U * abs(c)) * (1 + 3 * U)
            rout[i] = rc
            qr += 2 * abs(c) * rc + rc * rc
        rvar = ((qr + (d + 2) * U * q) / d + 2 * U * var) * (1 + (d + 4) * U) + ETA
        rsv = (rvar + U * sv) * (1 + 2 * U)
        low = (sv - rsv) * (1 - U)
        if low > 0:
            rz = rsv / (2.0 * low * math.sqrt(low) * (1 - 4 * U)) + 4 * U * z
        else:
            rz = np.inf
    for i in range(d):
        c = out[i]
        cz = c * z
        o = cz * gain[i]
        o2 = o + bias[i]
        out[i] = o2
        if bounds:
            if rz == np.inf:
                rout[i] = np.inf
            else:
                rc = rout[i]
                r = abs(c) * rz + rc * (z + rz) + U * abs(cz)
                r = r * abs(gain[i]) + U * abs(o)
                rout[i] = (r + U * abs(o2)) * (1 + 8 * U) + ETA
    return var, rvar


@kernel(types.void(A1, A1, b1))
def relu(x, rx, bounds):  # pragma: no cover - jitted
    """x <- max(x, 0) in place; relu is 1-Lipschitz, so the radius carries over."""
    for i in range(x.shape[0]):
        if bounds and x[i] + rx[i] <= 0.0:
            rx[i] = 0.0
        if x[i] < 0.0:
            x[i] = 0.0


@kernel(types.void(i8, b1, A1, A1, A1, A1, A3, A3, A2, A3, A3, A2, A2, A2, A1, A1, A1, A1, A1, b1))
def finish_position(
    layer,
    norm_first,
    y,
    ry,
    a,
    ra,
    w1t,
    aw1t,
    b1v,
    w2t,
    aw2t,
    b2v,
    gains,
    biases,
    eps_arr,
    hid,
    rhid,
    tmp,
    rtmp,
    bounds,
):  # pragma: no cover - jitted
    """Given the residual input y and the attention output a at one position, compute the
    layer's output there (post-LN or pre-LN) into y, ry. tmp/hid are scratch."""
    d = y.shape[0]
    f = hid.shape[0]
    eps = eps_arr[0]
    k1 = 2 * layer
    if norm_first:
        for i in range(d):  # h = y + a
            y[i] = y[i] + a[i]
            if bounds:
                ry[i] = (ry[i] + ra[i] + U * abs(y[i])) * (1 + 2 * U)
        layer_norm(y, ry, gains[k1 + 1], biases[k1 + 1], eps, tmp, rtmp, bounds)
        matvec(tmp, rtmp, w1t[layer], aw1t[layer], b1v[layer], 0, f, hid, rhid, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t[layer], aw2t[layer], b2v[layer], 0, d, tmp, rtmp, bounds)
        for i in range(d):  # y' = h + FFN(LN2(h))
            y[i] = y[i] + tmp[i]
            if bounds:
                ry[i] = (ry[i] + rtmp[i] + U * abs(y[i])) * (1 + 2 * U)
    else:
        for i in range(d):  # d1 = y + a
            tmp[i] = y[i] + a[i]
            if bounds:
                rtmp[i] = (ry[i] + ra[i] + U * abs(tmp[i])) * (1 + 2 * U)
        layer_norm(tmp, rtmp, gains[k1], biases[k1], eps, y, ry, bounds)  # y <- h
        matvec(y, ry, w1t[layer], aw1t[layer], b1v[layer], 0, f, hid, rhid, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t[layer], aw2t[layer], b2v[layer], 0, d, tmp, rtmp, bounds)
        for i in range(d):  # d2 = h + FFN(h)
            tmp[i] = y[i] + tmp[i]
            if bounds:
                rtmp[i] = (ry[i] + rtmp[i] + U * abs(tmp[i])) * (1 + 2 * U)
        layer_norm(tmp, rtmp, gains[k1 + 1], biases[k1 + 1], eps, y, ry, bounds)


@kernel(
    types.void(
        U2,
        b1,
        b1,
        i8,
        A3,
        A3,
        A5,
        A5,
        A4,
        A4,
        A3,
        A3,
        A2,
        A3,
        A3,
        A2,
        A3,
        A3,
        A2,
        A3,
        A3,
        A2,
        A2,
        A2,
        A1,
        A1,
        A1,
        A1,
        b1,
        A1,
        A1,
    ),
    parallel=True,
)
def certified_T(
    bits,
    eos,
    norm_first,
    n_heads,
    y0m,
    y0r,
    sce_m,
    sce_r,
    vo_m,
    vo_r,
    wint,
    awint,
    binv,
    wot,
    awot,
    bov,
    w1t,
    aw1t,
    b1v,
    w2t,
    aw2t,
    b2v,
    gains,
    biases,
    w,
    aw,
    scal,
    inv_sqrt_dh,
    bounds,
    t_out,
    r_out,
):  # pragma: no cover - jitted
    """T(x) (and, with bounds, a rigorous radius) for each row of ``bits``.

    scal = [eps, omega]; inv_sqrt_dh = [mid, radius] of 1/sqrt(d_h)."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    s = n + 1 if eos else n
    n_layers = wint.shape[0]
    d = y0m.shape[2]
    f = w1t.shape[2]
    dh = d // n_heads
    eps_arr = scal[0:1]
    omega = scal[1]
    cm = inv_sqrt_dh[0]
    cr = inv_sqrt_dh[1]
    n_norms = gains.shape[0]
    n_blocks = min(n_str, 256)
    for blk in prange(n_blocks):
        lo = blk * n_str // n_blocks
        hi = (blk + 1) * n_str // n_blocks
        tok = np.empty(s, dtype=np.int64)
        ym = np.empty((s, d))
        yr = np.zeros((s, d))
        qkvm = np.empty((s, 3 * d))
        qkvr = np.zeros((s, 3 * d))
        am = np.empty(d)
        ar = np.zeros(d)
        amag = np.zeros(d)
        attm = np.empty(d)
        attr = np.zeros(d)
        hid = np.empty(f)
        rhid = np.zeros(f)
        tmp = np.empty(d)
        rtmp = np.zeros(d)
        sc = np.empty(s)
        rsc = np.zeros(s)
        qm = np.empty(d)
        qr = np.zeros(d)
        for b in range(lo, hi):
            for i in range(n):
                tok[i] = bits[b, i]
            if eos:
                tok[s - 1] = 2
            # ---------------- layer 0, from the (bit, position) tables
            first_q = 0 if n_layers > 1 else s - 1
            for i in range(first_q, s):
                ti = tok[i]
                for e in range(d):
                    am[e] = bov[0, e]
                    ar[e] = 0.0
                    amag[e] = abs(bov[0, e])
                for hd in range(n_heads):
                    tot = 0.0
                    rtot = 0.0
                    gap = 0.0
                    for j in range(s):
                        tot += sce_m[ti, i, tok[j], j, hd]
                    if bounds:
                        for j in range(s):
                            rtot += sce_r[ti, i, tok[j], j, hd]
                        rtot = (rtot + (s + 1) * U * tot) * (1 + (s + 4) * U)
                        gap = (tot - rtot) * (1 - U)
                    for j in range(s):
                        tj = tok[j]
                        p = sce_m[ti, i, tj, j, hd] / tot
                        rp = 0.0
                        if bounds:
                            if gap > 0:
                                rp = (sce_r[ti, i, tj, j, hd] + p * (1 + U) * rtot) / gap
                                rp = (rp + U * p) * (1 + 4 * U)
                            else:
                                rp = np.inf
                        for e in range(d):
                            v = vo_m[tj, j, hd, e]
                            am[e] += p * v
                        if bounds:
                            for e in range(d):
                                v = vo_m[tj, j, hd, e]
                                rv = vo_r[tj, j, hd, e]
                                ar[e] += p * rv + rp * (abs(v) + rv)
                                amag[e] += p * abs(v)
                if bounds:  # rounding of the accumulation: s*H + 1 terms per entry
                    g = (s * n_heads + 2) * U
                    for e in range(d):
                        ar[e] = (ar[e] + g * amag[e]) * (1 + (2 * s * n_heads + 5) * U) + ETA
                for e in range(d):
                    ym[i, e] = y0m[ti, i, e]
                    yr[i, e] = y0r[ti, i, e]
                finish_position(
                    0,
                    norm_first,
                    ym[i],
                    yr[i],
                    am,
                    ar,
                    w1t,
                    aw1t,
                    b1v,
                    w2t,
                    aw2t,
                    b2v,
                    gains,
                    biases,
                    eps_arr,
                    hid,
                    rhid,
                    tmp,
                    rtmp,
                    bounds,
                )
            # ---------------- layers 1..L-1
            for layer in range(1, n_layers):
                last = layer == n_layers - 1
                k1 = 2 * layer
                # keys and values of every position (pre-LN: of LN1(y))
                for j in range(s):
                    if norm_first:
                        layer_norm(
                            ym[j], yr[j], gains[k1], biases[k1], eps_arr[0], tmp, rtmp, bounds
                        )
                        matvec(
                            tmp,
                            rtmp,
                            wint[layer],
                            awint[layer],
                            binv[layer],
                            0,
                            3 * d,
                            qkvm[j],
                            qkvr[j],
                            bounds,
                        )
                    else:
                        matvec(
                            ym[j],
                            yr[j],
                            wint[layer],
                            awint[layer],
                            binv[layer],
                            0,
                            3 * d,
                            qkvm[j],
                            qkvr[j],
                            bounds,
                        )
                first = s - 1 if last else 0
                for i in range(first, s):
                    for hd in range(n_heads):
                        c0 = hd * dh
                        mx = -np.inf
                        for j in range(s):
                            acc = 0.0
                            for e in range(dh):
                                acc += qkvm[i, c0 + e] * qkvm[j, d + c0 + e]
                            sc[j] = acc * cm
                            if bounds:
                                racc = 0.0
                                mag = 0.0
                                for e in range(dh):
                                    qv = qkvm[i, c0 + e]
                                    kv = qkvm[j, d + c0 + e]
                                    rq = qkvr[i, c0 + e]
                                    rk = qkvr[j, d + c0 + e]
                                    racc += abs(qv) * rk + rq * (abs(kv) + rk)
                                    mag += abs(qv * kv)
                                racc = (racc + (dh + 2) * U * mag) * (1 + (dh + 4) * U) + ETA
                                rsc[j] = (abs(acc) * cr + racc * (cm + cr) + U * abs(sc[j])) * (
                                    1 + 4 * U
                                ) + ETA
                            if sc[j] > mx:
                                mx = sc[j]
                        if not np.isfinite(mx):
                            mx = 0.0
                        tot = 0.0
                        rtot = 0.0
                        gap = 0.0
                        for j in range(s):
                            dv = sc[j] - mx
                            ev = math.exp(dv)
                            if bounds:
                                rd = (rsc[j] + U * abs(dv)) * (1 + 2 * U)
                                big = ev * (1 + EXP_ULPS * U)
                                re = big * (math.expm1(rd) * (1 + EXP_ULPS * U) + EXP_ULPS * U)
                                rsc[j] = re * (1 + 4 * U) + ETA
                                rtot += rsc[j]
                            sc[j] = ev
                            tot += ev
                        if bounds:
                            rtot = (rtot + (s + 1) * U * tot) * (1 + (s + 4) * U)
                            gap = (tot - rtot) * (1 - U)
                        for e in range(dh):
                            attm[c0 + e] = 0.0
                            attr[c0 + e] = 0.0
                        for j in range(s):
                            p = sc[j] / tot
                            rp = 0.0
                            if bounds:
                                if gap > 0:
                                    rp = ((rsc[j] + p * (1 + U) * rtot) / gap + U * p) * (1 + 4 * U)
                                else:
                                    rp = np.inf
                            for e in range(dh):
                                v = qkvm[j, 2 * d + c0 + e]
                                attm[c0 + e] += p * v
                                if bounds:
                                    rv = qkvr[j, 2 * d + c0 + e]
                                    attr[c0 + e] += (
                                        p * rv + rp * (abs(v) + rv) + (s + 2) * U * p * abs(v)
                                    )
                        if bounds:
                            for e in range(dh):
                                attr[c0 + e] = attr[c0 + e] * (1 + (2 * s + 6) * U) + ETA
                    matvec(attm, attr, wot[layer], awot[layer], bov[layer], 0, d, am, ar, bounds)
                    # q was computed for every position; the residual input is y (both cases)
                    for e in range(d):
                        qm[e] = ym[i, e]
                        qr[e] = yr[i, e]
                    finish_position(
                        layer,
                        norm_first,
                        qm,
                        qr,
                        am,
                        ar,
                        w1t,
                        aw1t,
                        b1v,
                        w2t,
                        aw2t,
                        b2v,
                        gains,
                        biases,
                        eps_arr,
                        hid,
                        rhid,
                        tmp,
                        rtmp,
                        bounds,
                    )
                    # positions i are written after all keys/values were taken from qkv
                    for e in range(d):
                        ym[i, e] = qm[e]
                        yr[i, e] = qr[e]
            # ---------------- final norm and readout
            r = s - 1
            if norm_first:
                layer_norm(
                    ym[r],
                    yr[r],
                    gains[n_norms - 1],
                    biases[n_norms - 1],
                    eps_arr[0],
                    tmp,
                    rtmp,
                    bounds,
                )
                for e in range(d):
                    ym[r, e] = tmp[e]
                    yr[r, e] = rtmp[e]
            t = omega
            rt = 0.0
            mag = abs(omega)
            for e in range(d):
                t += w[e] * ym[r, e]
                if bounds:
                    rt += aw[e] * yr[r, e]
                    mag += abs(w[e] * ym[r, e])
            t_out[b] = t
            if bounds:
                r_out[b] = (rt + (d + 2) * U * mag) * (1 + (d + 5) * U) + ETA
            else:
                r_out[b] = 0.0
