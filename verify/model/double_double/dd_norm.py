"""Double-double layer norm with componentwise float64 radii (the softmax: ``double_double.dd_l2``).

Per string (one column), in the order of ``stages.layer_norm.layer_norm``; each rounding term
of that rule is replaced by the DD bound of the same operation (``double_double.dd_arith``), and the
float64 1/sqrt by the a posteriori bound of ``double_double.dd_dense.rsqrt_dd``. Sums of m DD terms
are compensated (TwoSum of the high parts, a float64 accumulator for the errors and low
parts): error <= (m + 2)^2 UU sum |terms| (the argument of ``double_double.dd_dense.matvec_dd``
with exact products).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.double_double.dd_arith import (
    DD_ADD,
    DD_MUL,
    UU,
    dd_add,
    dd_add_d,
    dd_mul,
    dd_mul_d,
    inverse_int,
    two_sum,
)
from verify.model.double_double.dd_dense import inverse_dd, rsqrt_dd
from verify.model.stages.bundles import A1, A2, b1, f8, i8
from verify.model.stages.l2_bounds import inverse_std_radius


@kernel(types.UniTuple(f8, 3)(f8, f8, f8, f8, i8, f8, f8))
def inverse_std_dd(qh, ql, acc, ssq, d, g_sum, eps):  # pragma: no cover - jitted
    """The annotated form's coefficient z = 1 / (sqrt(u) + eps), u = q / (d - 1) the unbiased
    variance, from the DD sum of squares q = qh + ql, as (zh, zl, rz): rz >= |z_exact - z|
    when acc bounds the exact squares' distance from those of the centred values and q's own
    error is <= g_sum ssq (the radius of ``layer_norm_dd``'s variance with d - 1 for d);
    sqrt(u) = u rsqrt_dd(u) (error u err_rsqrt + DD_MUL |s|), s + eps (DD_ADD), 1 / t
    (``inverse_dd``), then ``l2_bounds.inverse_std_radius``; rz = inf where not bounded."""
    jh, jl = inverse_int(d - 1)
    uh, ul = dd_mul(qh, ql, jh, jl)
    sh = 0.0
    sl = 0.0
    s_err = 0.0
    if uh > 0:
        rh, rl, rerr = rsqrt_dd(uh, ul)
        sh, sl = dd_mul(uh, ul, rh, rl)
        s_err = ((abs(uh) + abs(ul)) * rerr * (1 + 2 * U) + DD_MUL * (abs(sh) + abs(sl))) * (
            1 + 2 * U
        )
    elif not uh == 0:  # NaN
        s_err = np.inf
    th, tl = dd_add_d(sh, sl, eps)
    zh, zl, zerr = inverse_dd(th, tl)
    au = abs(uh) + abs(ul)
    ru = ((acc + (DD_MUL + g_sum) * ssq * (1 + U)) / (d - 1) + DD_MUL * au) * (
        1 + (d + 6) * U
    ) + ETA
    q_low = (uh - abs(ul)) * (1 - U)
    t_low = (th - abs(tl)) * (1 - U)
    t_err = DD_ADD * (abs(th) + abs(tl)) * (1 + U)
    rz = inverse_std_radius(q_low, ru, sh, s_err, t_low, t_err, zerr)
    if not zerr < math.inf:
        rz = np.inf
    return zh, zl, rz


@kernel(types.void(A2, A2, A2, A1, A1, f8, f8, f8, i8, b1))
def _scale_dd(oh, ol, ro, gain, bias, zh, zl, rz, b, bounds):  # pragma: no cover - jitted
    """Column b: o_i = c_i z gain_i + bias_i from the centred values c (in oh, ol, with radii
    in ro) and z = zh + zl within rz, each product and sum with its DD rounding bound."""
    d = oh.shape[0]
    az = abs(zh) + abs(zl)
    for i in range(d):
        ch = oh[i, b]
        cl = ol[i, b]
        czh, czl = dd_mul(ch, cl, zh, zl)
        gh, gl = dd_mul_d(czh, czl, gain[i])
        o2h, o2l = dd_add_d(gh, gl, bias[i])
        oh[i, b] = o2h
        ol[i, b] = o2l
        if bounds:
            rc = ro[i, b]
            ac = abs(ch) + abs(cl)
            r = ac * rz + rc * (az + rz) + DD_MUL * (abs(czh) + abs(czl))
            r = r * abs(gain[i]) + DD_MUL * (abs(gh) + abs(gl))
            ro[i, b] = (r + DD_ADD * (abs(o2h) + abs(o2l))) * (1 + 8 * U) + ETA


@kernel(types.void(A2, A2, A2, A1, A1, f8, b1, A2, A2, A2, b1))
def layer_norm_dd(vh, vl, rv, gain, bias, eps, annotated, oh, ol, ro, bounds):  # pragma: no cover
    """o = gain (v - mean) z + bias over axis 0 per string, z = 1 / sqrt(var + eps) (biased
    variance) or annotated 1 / (std_unbiased + eps) (``inverse_std_dd``); a variance
    enclosure that reaches 0 (at eps = 0) gives an infinite radius."""
    d = vh.shape[0]
    nb = vh.shape[1]
    ih, il = inverse_int(d)
    g_sum = (d + 2) * (d + 2) * UU
    for b in range(nb):
        # mean = (sum v) / d
        sh = 0.0
        sl = 0.0
        mag = 0.0
        rsum = 0.0
        for i in range(d):
            x = vh[i, b]
            s = sh + x
            bb = s - sh
            sl += ((sh - (s - bb)) + (x - bb)) + vl[i, b]
            sh = s
            mag += abs(x) + abs(vl[i, b])
            rsum += rv[i, b]
        sh, sl = two_sum(sh, sl)
        mh, ml = dd_mul(sh, sl, ih, il)
        rmean = ((rsum + g_sum * mag) / d + DD_MUL * (abs(mh) + abs(ml))) * (1 + (d + 4) * U)
        # centred values into o; var = (sum c^2) / d
        qh = 0.0
        ql = 0.0
        acc = 0.0
        ssq = 0.0
        for i in range(d):
            ch, cl = dd_add(vh[i, b], vl[i, b], -mh, -ml)
            oh[i, b] = ch
            ol[i, b] = cl
            c2h, c2l = dd_mul(ch, cl, ch, cl)
            s = qh + c2h
            bb = s - qh
            ql += ((qh - (s - bb)) + (c2h - bb)) + c2l
            qh = s
            ssq += c2h + abs(c2l)
            if bounds:
                rc = (rv[i, b] + rmean + DD_ADD * (abs(ch) + abs(cl))) * (1 + 3 * U)
                ro[i, b] = rc
                ac = abs(ch) + abs(cl)
                acc += 2 * ac * rc + rc * rc
        qh, ql = two_sum(qh, ql)
        if annotated:
            zh, zl, rz = inverse_std_dd(qh, ql, acc, ssq, d, g_sum, eps)
            if not bounds:
                rz = 0.0
            _scale_dd(oh, ol, ro, gain, bias, zh, zl, rz, b, bounds)
            continue
        varh, varl = dd_mul(qh, ql, ih, il)
        svh, svl = dd_add_d(varh, varl, eps)
        zh, zl, zerr = rsqrt_dd(svh, svl)
        rz = 0.0
        if bounds:
            avar = abs(varh) + abs(varl)
            rvar = ((acc + (DD_MUL + g_sum) * ssq * (1 + U)) / d + DD_MUL * avar) * (
                1 + (d + 6) * U
            ) + ETA
            rsv = (rvar + DD_ADD * (abs(svh) + abs(svl))) * (1 + 2 * U)
            low = ((svh - rsv) * (1 - U) - abs(svl)) * (1 - U)
            if low > 0 and zerr < math.inf:
                rz = rsv / (2.0 * low * math.sqrt(low) * (1 - 4 * U)) + zerr
            else:
                rz = np.inf
        _scale_dd(oh, ol, ro, gain, bias, zh, zl, rz, b, bounds)
