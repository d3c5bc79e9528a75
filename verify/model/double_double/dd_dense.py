"""Double-double stages with componentwise float64 radii: matrix-vector product, residual
addition, relu, and the rigorous 1/t and 1/sqrt(v) of a DD scalar.

Values are DD midpoints (hi, lo arrays of the same shape, one feature per row, one string per
column) with a float64 radius array r: |exact - (hi + lo)| <= r. The radius rules are those of
``stages.dense`` with the float64 rounding terms (U |result|, (n + 2) U sum |terms|) replaced
by the DD ones (``double_double.dd_arith``); the radius arithmetic itself stays float64, inflated by
(1 + c U) and ETA as there.
"""

from __future__ import annotations

import math

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
    fma,
    two_sum,
)
from verify.model.stages.bundles import A1, A2, b1, f8, i8


@kernel(types.void(A2, A2, A2, A2, A2, A1, i8, i8, A2, A2, A2, A2, b1))
def matvec_dd(xh, xl, rx, wt, awt, bias, c0, c1, oh, ol, ro, scratch, bounds):  # pragma: no cover
    """o[j] = bias[c0+j] + sum_k wt[k, c0+j] x[k] (wt = W^T float64, x DD), rows c0..c1-1.

    The high parts accumulate exactly (TwoProd w xh = p + e, TwoSum of p into the sum, error
    q); a float64 accumulator collects e + q + w xl (3 roundings per term); the result is
    renormalised by TwoSum. With M = |b| + sum_k |w| (|xh| + |xl|): |e| <= u |w xh|, sum |q|
    <= n u M (1 + nu), so the low accumulator's 3n roundings cost <= 3n (n + 2) u^2 M and the
    products w xl' <= u^2 M: error <= (3n (n + 2) + 1) u^2 M <= (n + 2)^2 UU M."""
    n = xh.shape[0]
    nb = xh.shape[1]
    n4 = n - n % 4
    for j in range(c1 - c0):
        c = c0 + j
        bj = bias[c]
        ohj = oh[j]
        olj = ol[j]
        for b in range(nb):
            ohj[b] = bj
            olj[b] = 0.0
        # four input rows per step (the accumulators stay in registers for four terms; the
        # terms are applied in order k, so the result is that of one row per step)
        for k in range(0, n4, 4):
            w0, w1, w2, w3 = wt[k, c], wt[k + 1, c], wt[k + 2, c], wt[k + 3, c]
            h0, h1, h2, h3 = xh[k], xh[k + 1], xh[k + 2], xh[k + 3]
            l0, l1, l2, l3 = xl[k], xl[k + 1], xl[k + 2], xl[k + 3]
            for b in range(nb):
                a = ohj[b]
                lo = olj[b]
                x = h0[b]
                p = w0 * x
                e = fma(w0, x, -p)
                s = a + p
                bb = s - a
                lo = fma(w0, l0[b], lo + (((a - (s - bb)) + (p - bb)) + e))
                a = s
                x = h1[b]
                p = w1 * x
                e = fma(w1, x, -p)
                s = a + p
                bb = s - a
                lo = fma(w1, l1[b], lo + (((a - (s - bb)) + (p - bb)) + e))
                a = s
                x = h2[b]
                p = w2 * x
                e = fma(w2, x, -p)
                s = a + p
                bb = s - a
                lo = fma(w2, l2[b], lo + (((a - (s - bb)) + (p - bb)) + e))
                a = s
                x = h3[b]
                p = w3 * x
                e = fma(w3, x, -p)
                s = a + p
                bb = s - a
                lo = fma(w3, l3[b], lo + (((a - (s - bb)) + (p - bb)) + e))
                ohj[b] = s
                olj[b] = lo
        for k in range(n4, n):
            w = wt[k, c]
            xhk = xh[k]
            xlk = xl[k]
            for b in range(nb):
                x = xhk[b]
                p = w * x
                e = fma(w, x, -p)
                a = ohj[b]
                s = a + p
                bb = s - a
                q = (a - (s - bb)) + (p - bb)
                ohj[b] = s
                olj[b] = fma(w, xlk[b], olj[b] + (q + e))
        for b in range(nb):
            h, lo = two_sum(ohj[b], olj[b])
            ohj[b] = h
            olj[b] = lo
    if bounds:
        g = (n + 2) * (n + 2) * UU * (1 + U)
        for k in range(n):
            for b in range(nb):
                scratch[k, b] = rx[k, b] + g * (abs(xh[k, b]) + abs(xl[k, b]))
        inflate = 1.0 + (2 * n + 5) * U
        for j in range(c1 - c0):
            roj = ro[j]
            rb = g * abs(bias[c0 + j])
            for b in range(nb):
                roj[b] = rb
            for k in range(n):
                aw = awt[k, c0 + j]
                sk = scratch[k]
                for b in range(nb):
                    roj[b] += aw * sk[b]
            for b in range(nb):
                roj[b] = roj[b] * inflate + ETA


@kernel(types.void(A2, A2, A2, A2, A2, A2, b1))
def add_into_dd(yh, yl, ry, ah, al, ra, bounds):  # pragma: no cover - jitted
    """y <- y + a (dd_add: error <= DD_ADD |y + a|) with radius."""
    for i in range(yh.shape[0]):
        for b in range(yh.shape[1]):
            h, lo = dd_add(yh[i, b], yl[i, b], ah[i, b], al[i, b])
            yh[i, b] = h
            yl[i, b] = lo
            if bounds:
                ry[i, b] = (ry[i, b] + ra[i, b] + DD_ADD * (abs(h) + abs(lo))) * (1 + 2 * U)


@kernel(types.void(A2, A2, A2, b1))
def relu_dd(xh, xl, rx, bounds):  # pragma: no cover - jitted
    """x <- max(x, 0): a DD with xh < 0 is negative (|xl| <= u |xh|) and becomes exactly 0;
    relu is 1-Lipschitz, so the radius carries over (0 where the whole ball is <= 0)."""
    for i in range(xh.shape[0]):
        for b in range(xh.shape[1]):
            h = xh[i, b]
            if bounds and h + (rx[i, b] + abs(xl[i, b])) * (1 + U) <= 0.0:
                rx[i, b] = 0.0
            if h < 0.0:
                xh[i, b] = 0.0
                xl[i, b] = 0.0


@kernel(types.UniTuple(f8, 3)(f8, f8))
def inverse_dd(th, tl):  # pragma: no cover - jitted
    """(qh, ql, err): q = qh + ql approximates 1 / t (t = th + tl > 0) and |q - 1/t| <= err.

    A Newton step from 1/th; then, a posteriori, rho = 1 - t q evaluated in DD with
    |rho_exact - rho| <= DD_MUL |t q| + DD_ADD |rho|: since t q = 1 - rho_exact,
    |q - 1/t| = |q| |rho_exact| / |1 - rho_exact| (err = inf unless |rho| <= 1/2)."""
    q0 = 1.0 / th
    wh, wl = dd_mul_d(th, tl, q0)
    rh, rl = dd_add_d(-wh, -wl, 1.0)
    ch, cl = dd_mul_d(rh, rl, q0)
    qh, ql = dd_add_d(ch, cl, q0)
    wh, wl = dd_mul(th, tl, qh, ql)
    rh, rl = dd_add_d(-wh, -wl, 1.0)
    rho = (abs(rh) + abs(rl) + DD_MUL * abs(wh) * (1 + 2 * U) + DD_ADD * abs(rh)) * (1 + 4 * U)
    if not rho <= 0.5:
        return qh, ql, math.inf
    return qh, ql, abs(qh) * (1 + 2 * U) * rho / (1 - rho) * (1 + 4 * U)


@kernel(types.UniTuple(f8, 3)(f8, f8))
def rsqrt_dd(vh, vl):  # pragma: no cover - jitted
    """(zh, zl, err): z = zh + zl approximates 1 / sqrt(v) (v = vh + vl > 0), |z - v^-1/2| <=
    err.

    A Newton step from 1/sqrt(vh); then, a posteriori, rho = 1 - v z^2 in DD with
    |rho_exact - rho| <= (2 DD_MUL + DD_MUL^2) |v z^2| + DD_ADD |rho|: v z^2 = 1 - rho_exact,
    so v^-1/2 = z / sqrt(1 - rho_exact) and |z - v^-1/2| = z |1 - (1 - rho_exact)^-1/2| <=
    z |rho_exact| for |rho_exact| <= 1/2 (convexity; err = inf otherwise)."""
    z0 = 1.0 / math.sqrt(vh)
    sh, sl = dd_mul(z0, 0.0, z0, 0.0)
    wh, wl = dd_mul(vh, vl, sh, sl)
    rh, rl = dd_add_d(-wh, -wl, 1.0)
    ch, cl = dd_mul_d(rh, rl, 0.5 * z0)
    zh, zl = dd_add_d(ch, cl, z0)
    sh, sl = dd_mul(zh, zl, zh, zl)
    wh, wl = dd_mul(vh, vl, sh, sl)
    rh, rl = dd_add_d(-wh, -wl, 1.0)
    rho = (abs(rh) + abs(rl) + 2.01 * DD_MUL * abs(wh) * (1 + 2 * U) + DD_ADD * abs(rh)) * (
        1 + 4 * U
    )
    if not rho <= 0.5:
        return zh, zl, math.inf
    return zh, zl, abs(zh) * (1 + 2 * U) * rho * (1 + 4 * U)
