"""The plain float64 forward pass with its diagnostics, for any batch of strings (Numba).

:func:`forward_diagnostics` computes, for each row of ``bits``, what
``verify.model.plain.forward_numpy.forward_dense`` computes: T(x), the population variance of every
layer norm's input at every position (K, S) and the readout vector y^L_r, every position in every
layer (the variances of the last layer's norms are needed at all positions). It is the
numpy pass reorganised, not a certified one: no radii.

Strings go in blocks of ``STRINGS_PER_BLOCK``; a block's positions are the rows of one matrix
(row = string * S + position), so each linear map is one matrix product (``np.dot``, BLAS)
over the block; blocks run in parallel (prange, one BLAS thread each: the caller limits BLAS
with ``verify._threads``). The layer-norm moments are summed in numpy's pairwise order
(:func:`pairwise_sum`) and divided by D as ``np.mean`` does, so a layer-norm input that is
exactly constant gives var = 0 here exactly when it does in the numpy pass, and at eps = 0
the same NaN (0/0) follows. Attention: scores divided by sqrt(d_h), max subtracted, exp,
divided by their pairwise sum, as ``dense.mha``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import prange, types
from numba.core.types import BaseTuple

from verify._numba import kernel

STRINGS_PER_BLOCK = 32
EOS = 2  # the eos token
_PW_BLOCK = 128  # numpy's PW_BLOCKSIZE

f8 = types.float64
i8 = types.int64
b1 = types.boolean
A1 = types.Array(f8, 1, "C")
A2 = types.Array(f8, 2, "C")
A3 = types.Array(f8, 3, "C")
U2 = types.Array(types.uint8, 2, "C")


class PlainModel(NamedTuple):
    """The model for :func:`forward_diagnostics` (L layers, K norms, D, F = d_ff, S).

    Weights are stored transposed (x W^T = x @ wt), C-contiguous float64."""

    y0: np.ndarray  # (3, S, D) embedding of token t (0, 1, eos) at position n
    in_wt: np.ndarray  # (L, D, 3D)
    in_b: np.ndarray  # (L, 3D)
    out_wt: np.ndarray  # (L, D, D)
    out_b: np.ndarray  # (L, D)
    lin1_wt: np.ndarray  # (L, D, F)
    lin1_b: np.ndarray  # (L, F)
    lin2_wt: np.ndarray  # (L, F, D)
    lin2_b: np.ndarray  # (L, D)
    gains: np.ndarray  # (K, D)
    biases: np.ndarray  # (K, D)
    readout: np.ndarray  # (D,)


class PlainScalars(NamedTuple):
    """The model's switches and scalars for :func:`forward_diagnostics`."""

    eos: bool
    norm_first: bool
    final_norm: bool
    affine: bool
    n_heads: int
    eps: float
    omega: float
    layer0_table: bool  # layer 0's projections (pre-LN: and its first norm) from a table


PLAIN_MODEL = BaseTuple.from_types((A3, A3, A2, A3, A2, A3, A2, A3, A2, A2, A2, A1), PlainModel)
PLAIN_SCALARS = BaseTuple.from_types((b1, b1, b1, b1, i8, f8, f8, b1), PlainScalars)


@kernel(f8(A1, i8, i8))
def pairwise_block(a, i0, n):  # pragma: no cover - jitted
    """sum(a[i0 : i0 + n]) for n <= 128 in numpy's order: sequential below 8 terms, else 8
    running sums, combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
    remainder one by one."""
    if n < 8:
        res = 0.0
        for i in range(i0, i0 + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[i0], a[i0 + 1], a[i0 + 2], a[i0 + 3]
    r4, r5, r6, r7 = a[i0 + 4], a[i0 + 5], a[i0 + 6], a[i0 + 7]
    i = i0 + 8
    stop = i0 + n - (n % 8)
    while i < stop:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < i0 + n:
        res += a[i]
        i += 1
    return res


@kernel(f8(A1, i8, i8))
def pairwise_split(a, i0, n):  # pragma: no cover - jitted
    """sum(a[i0 : i0 + n]) in numpy's order: above 128 terms, the sums of two halves whose
    first has a multiple of 8 terms."""
    if n <= _PW_BLOCK:
        return pairwise_block(a, i0, n)
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_split(a, i0, n2) + pairwise_split(a, i0 + n2, n - n2)


@kernel(f8(A1))
def pairwise_sum(a):  # pragma: no cover - jitted
    """sum(a) in numpy's pairwise order (``np.add.reduce`` over a contiguous float64 axis)."""
    n = a.shape[0]
    if n <= _PW_BLOCK:
        return pairwise_block(a, 0, n)
    return pairwise_split(a, 0, n)


@kernel(types.void(A2, A1, A1, b1, f8, A2, A1, A2))
def norm_rows(x, gain, bias, affine, eps, out, var_out, c):  # pragma: no cover - jitted
    """out[r] = LN(x[r]) (gain, bias when affine), var_out[r] = the population variance of x[r];
    c: scratch (2, D)."""
    d = x.shape[1]
    sq = c[1]
    for r in range(x.shape[0]):
        mean = pairwise_sum(x[r]) / d
        for e in range(d):
            c[0, e] = x[r, e] - mean
            sq[e] = c[0, e] * c[0, e]
        v = pairwise_sum(sq) / d
        var_out[r] = v
        z = 1.0 / np.sqrt(v + eps)
        for e in range(d):
            o = c[0, e] * z
            out[r, e] = o * gain[e] + bias[e] if affine else o


@kernel(types.void(A2, i8, i8, A2, A2, A2, A1, A1))
def attention_rows(qkv, s, n_heads, att, kt, vh, p, acc):  # pragma: no cover - jitted
    """att (B S, D) = the heads' softmax(Q K^T / sqrt(d_h)) V of each string of the block, from
    the rows qkv (B S, 3D) = [q | k | v]; scratch (separate arrays, so that the loops
    vectorise): kt (d_h, S) for K_h^T, vh (S, d_h) for V_h, p (S,), acc (d_h,)."""
    d = att.shape[1]
    dh = d // n_heads
    sqrt_dh = np.sqrt(float(dh))
    n_str = qkv.shape[0] // s
    for b in range(n_str):
        r0 = b * s
        for h in range(n_heads):
            c0 = h * dh
            for j in range(s):
                for e in range(dh):
                    kt[e, j] = qkv[r0 + j, d + c0 + e]
                    vh[j, e] = qkv[r0 + j, 2 * d + c0 + e]
            for i in range(s):
                for j in range(s):
                    p[j] = 0.0
                for e in range(dh):
                    qe = qkv[r0 + i, c0 + e]
                    for j in range(s):
                        p[j] += qe * kt[e, j]
                m = -np.inf
                for j in range(s):
                    p[j] = p[j] / sqrt_dh
                    m = max(m, p[j])
                for j in range(s):
                    p[j] = math.exp(p[j] - m)
                den = pairwise_block(p, 0, s) if s <= _PW_BLOCK else pairwise_split(p, 0, s)
                for e in range(dh):
                    acc[e] = 0.0
                for j in range(s):
                    w = p[j] / den
                    for e in range(dh):
                        acc[e] += w * vh[j, e]
                for e in range(dh):
                    att[r0 + i, c0 + e] = acc[e]


@kernel(types.void(A2, A2, A1, A2))
def linear_rows(x, wt, bias, out):  # pragma: no cover - jitted
    """out = x @ wt + bias (one matrix product over the rows)."""
    np.dot(x, wt, out)
    for r in range(out.shape[0]):
        for o in range(out.shape[1]):
            out[r, o] += bias[o]


@kernel(types.void(U2, PLAIN_MODEL, PLAIN_SCALARS, A1, A3, A2), parallel=True)
def forward_diagnostics(bits, m, sc, t_out, var_out, yr_out):  # pragma: no cover - jitted
    """For each row x of ``bits``: t_out = T(x), var_out (K, S) = the layer-norm input
    variances, yr_out (D,) = the readout vector (module doc)."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    s = n + 1 if sc.eos else n
    d = m.y0.shape[2]
    f = m.lin1_wt.shape[2]
    n_layers = m.in_wt.shape[0]
    n_norms = m.gains.shape[0]
    bs = STRINGS_PER_BLOCK
    n_blocks = (n_str + bs - 1) // bs
    # layer 0's input at a position is the embedding of (token, position): its q, k, v rows
    # (pre-LN: of its first norm, whose variance too) are computed once per (token, position),
    # by the same row operations as in a block (the product of a row does not depend on the
    # other rows of the matrix; tests compare both ways bit for bit)
    y0rows = m.y0.reshape((m.y0.shape[0] * s, d))
    qkv0 = np.empty((y0rows.shape[0], 3 * d))
    var0 = np.zeros(y0rows.shape[0])
    if sc.layer0_table:
        if sc.norm_first:
            x0 = np.empty((y0rows.shape[0], d))
            norm_rows(y0rows, m.gains[0], m.biases[0], sc.affine, sc.eps, x0, var0,
                      np.empty((2, d)))  # fmt: skip
            linear_rows(x0, m.in_wt[0], m.in_b[0], qkv0)
        else:
            linear_rows(y0rows, m.in_wt[0], m.in_b[0], qkv0)
    for blk in prange(n_blocks):
        start = blk * bs
        nb = min(bs, n_str - start)
        rows = nb * s
        y = np.empty((rows, d))
        h = np.empty((rows, d))
        x = np.empty((rows, d))
        a = np.empty((rows, d))
        qkv = np.empty((rows, 3 * d))
        hid = np.empty((rows, f))
        var = np.empty((n_norms, rows))
        c = np.empty((2, d))
        dh = d // sc.n_heads
        kt = np.empty((dh, s))
        vh = np.empty((s, dh))
        p = np.empty(s)
        acc = np.empty(dh)
        for b in range(nb):
            for j in range(s):
                t = EOS if j == n else bits[start + b, j]
                for e in range(d):
                    y[b * s + j, e] = m.y0[t, j, e]
        for layer in range(n_layers):
            k1 = 2 * layer
            k2 = k1 + 1
            if layer == 0 and sc.layer0_table:
                for b in range(nb):
                    for j in range(s):
                        t = EOS if j == n else bits[start + b, j]
                        var[k1, b * s + j] = var0[t * s + j]
                        for e in range(3 * d):
                            qkv[b * s + j, e] = qkv0[t * s + j, e]
            elif sc.norm_first:  # h = y + MHA(LN1 y); y = h + FFN(LN2 h)
                norm_rows(y, m.gains[k1], m.biases[k1], sc.affine, sc.eps, x, var[k1], c)
                linear_rows(x, m.in_wt[layer], m.in_b[layer], qkv)
            else:  # h = LN1(y + MHA y); y = LN2(h + FFN h)
                linear_rows(y, m.in_wt[layer], m.in_b[layer], qkv)
            attention_rows(qkv, s, sc.n_heads, x, kt, vh, p, acc)
            linear_rows(x, m.out_wt[layer], m.out_b[layer], a)
            a += y
            if sc.norm_first:
                h[:] = a
                norm_rows(h, m.gains[k2], m.biases[k2], sc.affine, sc.eps, x, var[k2], c)
            else:
                norm_rows(a, m.gains[k1], m.biases[k1], sc.affine, sc.eps, h, var[k1], c)
                x[:] = h
            linear_rows(x, m.lin1_wt[layer], m.lin1_b[layer], hid)
            hid[:] = np.maximum(hid, 0.0)
            linear_rows(hid, m.lin2_wt[layer], m.lin2_b[layer], a)
            a += h
            if sc.norm_first:
                y[:] = a
            else:
                norm_rows(a, m.gains[k2], m.biases[k2], sc.affine, sc.eps, y, var[k2], c)
        if sc.final_norm:
            kf = n_norms - 1
            x[:] = y
            norm_rows(x, m.gains[kf], m.biases[kf], sc.affine, sc.eps, y, var[kf], c)
        for b in range(nb):
            r = b * s + s - 1
            t = 0.0
            for e in range(d):
                yr_out[start + b, e] = y[r, e]
                t += y[r, e] * m.readout[e]
            t_out[start + b] = t + sc.omega
            for k in range(n_norms):
                for j in range(s):
                    var_out[start + b, k, j] = var[k, b * s + j]
