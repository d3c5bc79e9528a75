"""Matrix-vector products, residual additions and relu with rigorous radii.

Arrays are (features, strings): one feature per row, one string per column, so every inner loop
runs over strings and vectorises. Two radius rules:

- componentwise (per-string kernel): a radius per value, ``rx`` of the same shape as ``x``;
  y = W x + b gets r_y = |W| (r_x + g |x|) + g |b|, g = (n + 2) U;
- scalar (exhaustive kernel, ``*_scalar``): one radius per string bounding every component
  (an infinity-norm ball), r_y = ||W||_inf (r_x + g max|x|) + g max|b|, with the norms of the
  weights rounded up beforehand; blocks of exactly ``BS`` strings.

Each radius is inflated by (1 + c U) for the rounding of its own computation and by ETA.
"""

from __future__ import annotations

from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.bundles import A1, A2, BS, b1, f8, i8
from verify.model.stages.simd import rows1, rows4, rows8, rows16


@kernel(types.void(A2, A2, A2, A2, A1, i8, i8, A2, A2, A2, b1))
def matvec(x, rx, wt, awt, bias, c0, c1, out, rout, scratch, bounds):  # pragma: no cover
    """out[j, :] = bias[c0+j] + sum_k wt[k, c0+j] x[k, :] (wt = W^T), with radius rout
    (componentwise; awt = |wt|; scratch holds at least n rows). Four input rows per step, so
    each accumulator is loaded and stored once per four products; the sums are then grouped
    ((w0 x0 + w1 x1) + (w2 x2 + w3 x3)), inside the bound for any order and grouping."""
    n = x.shape[0]
    nb = x.shape[1]
    m = c1 - c0
    n4 = n - n % 4
    g = (n + 2) * U
    for j in range(m):
        o = out[j]
        c = c0 + j
        bj = bias[c]
        for b in range(nb):
            o[b] = bj
        for k in range(0, n4, 4):
            w0, w1, w2, w3 = wt[k, c], wt[k + 1, c], wt[k + 2, c], wt[k + 3, c]
            x0, x1, x2, x3 = x[k], x[k + 1], x[k + 2], x[k + 3]
            for b in range(nb):
                o[b] += (w0 * x0[b] + w1 * x1[b]) + (w2 * x2[b] + w3 * x3[b])
        for k in range(n4, n):
            w = wt[k, c]
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
            c = c0 + j
            rb = g * abs(bias[c])
            for b in range(nb):
                ro[b] = rb
            for k in range(0, n4, 4):
                a0, a1, a2, a3 = awt[k, c], awt[k + 1, c], awt[k + 2, c], awt[k + 3, c]
                s0, s1, s2, s3 = scratch[k], scratch[k + 1], scratch[k + 2], scratch[k + 3]
                for b in range(nb):
                    ro[b] += (a0 * s0[b] + a1 * s1[b]) + (a2 * s2[b] + a3 * s3[b])
            for k in range(n4, n):
                aw = awt[k, c]
                sk = scratch[k]
                for b in range(nb):
                    ro[b] += aw * sk[b]
            for b in range(nb):
                ro[b] = ro[b] * inflate + ETA


@kernel(types.void(A2, A2, b1))
def relu(x, rx, bounds):  # pragma: no cover
    """x <- max(x, 0) in place; relu is 1-Lipschitz, so the radius carries over (0 where the
    whole ball is <= 0)."""
    for i in range(x.shape[0]):
        for b in range(x.shape[1]):
            if bounds and x[i, b] + rx[i, b] <= 0.0:
                rx[i, b] = 0.0
            if x[i, b] < 0.0:
                x[i, b] = 0.0


@kernel(types.void(A2, A2, A2, A2, b1))
def add_into(y, ry, a, ra, bounds):  # pragma: no cover
    """y <- y + a with componentwise radius."""
    for i in range(y.shape[0]):
        for b in range(y.shape[1]):
            s = y[i, b] + a[i, b]
            y[i, b] = s
            if bounds:
                ry[i, b] = (ry[i, b] + ra[i, b] + U * abs(s)) * (1 + 2 * U)


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


@kernel(types.void(A2, A2, A1, i8, i8, A2))
def matvec_mid(x, wt, bias, r0, r1, out):  # pragma: no cover - jitted
    """out[j] = bias[r0+j] + sum_k W[r0+j, k] x[k] for the rows r0..r1-1 of W, given
    transposed: wt = W^T (x.shape[0] rows; a block of strings).

    Register-blocked (``stages.simd``): 16 (then 8, 4, 1) output rows by 8 strings held in
    vector registers over the whole sum, each term added by a fused multiply-add in the order
    k = 0, 1, ..., n - 1 (2x the GMAC/s of two rows per pass with the accumulators in memory:
    26-28 against 13 on 16 x 64, one thread). The rounding bound of the callers holds for any
    order, with or without FMA."""
    m = r1 - r0
    j = 0
    while m - j >= 16:
        rows16(x, wt, bias, r0 + j, out, j)
        j += 16
    if m - j >= 8:
        rows8(x, wt, bias, r0 + j, out, j)
        j += 8
    if m - j >= 4:
        rows4(x, wt, bias, r0 + j, out, j)
        j += 4
    while j < m:
        rows1(x, wt, bias, r0 + j, out, j)
        j += 1


@kernel(types.void(i8, A1, A1, f8, f8, A1))
def matvec_radius(n, rx, xmax, wnorm, bnorm, rout):  # pragma: no cover - jitted
    """rout = (wnorm (rx + g xmax) + g bnorm)(1 + (2n + 5)U) + ETA, g = (n + 2)U: the scalar
    radius of a product with n input rows (xmax: max_k |x[k]| per string)."""
    g = (n + 2) * U
    for b in range(BS):
        rout[b] = (wnorm * (rx[b] + g * xmax[b]) + g * bnorm) * (1 + (2 * n + 5) * U) + ETA


@kernel(types.void(A2, A1, A2, A1, i8, i8, f8, f8, A2, A1, A1, b1))
def matvec_scalar(
    x, rx, wt, bias, r0, r1, wnorm, bnorm, out, rout, xmax, bounds
):  # pragma: no cover - jitted
    """out[j] = bias[r0+j] + sum_k W[r0+j, k] x[k] for the rows r0..r1-1 of W, given as wt = W^T
    (``matvec_mid``); with bounds, rout = (wnorm (rx + g max|x|) + g bnorm) (1 + (2n + 5)U) + ETA, g
    = (n + 2)U, where wnorm bounds the max absolute row sum of those rows and bnorm their max |bias|
    (xmax: scratch, then max|x| per string)."""
    matvec_mid(x, wt, bias, r0, r1, out)
    if bounds:
        col_absmax(x, xmax)
        matvec_radius(x.shape[0], rx, xmax, wnorm, bnorm, rout)


@kernel(types.void(A2, A1, A2, A1, b1))
def add_into_scalar(y, ry, a, ra, bounds):  # pragma: no cover - jitted
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
def relu_scalar(x):  # pragma: no cover - jitted
    """x <- max(x, 0) for a block; relu is 1-Lipschitz, so the scalar radius carries over."""
    for k in range(x.shape[0]):
        for b in range(BS):
            if x[k, b] < 0.0:
                x[k, b] = 0.0
