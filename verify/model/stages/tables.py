"""Layer 0 from its (token, position) tables.

Layer 0's input at a position depends only on (token, position), so its embeddings, the
exponentiated scores exp(q_i . k_j / sqrt(d_h) - shift) and each head's values through the
output projection are tabulated beforehand with radii
(``verify.model.per_string.per_string_pass.prepare``).

- ``layer0_attention``: the per-string kernel's attention output at one query position from
  those tables (componentwise radii).
- ``low_sums``, ``fill_rows``, ``add_weighted``: the exhaustive kernel's split of the sums over
  positions into the low positions j < lo_bits (tabulated once for all 2^lo_bits low parts) and
  the high ones (summed once per block); see ``verify.model.exhaustive.exhaustive_pass``.
"""

from __future__ import annotations

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.attention import SV_GAP, SV_RTOT, SV_TOT
from verify.model.stages.bundles import A1, A2, A3, A4, A5, BS, I2, LAYER0_TABLES, b1, i8
from verify.model.stages.simd import mlp_rows1, mlp_rows4, mlp_rows8, mlp_rows16
from verify.model.stages.softmax import softmax_normalise


@kernel(types.void(I2, i8, i8, LAYER0_TABLES, A1, A2, A2, A2, A2, A2, A2, b1))
def layer0_attention(
    tok, i, n_heads, l0, out_bias, am, ar, amag, pm, pr, sv, bounds
):  # pragma: no cover - jitted
    """Layer 0's attention output after out_proj, am = b_o + sum_h sum_j p_j (W_o,h v_j), at
    query position i of the strings whose tokens are tok (s, nb), with componentwise radii ar
    (amag: scratch, sum of magnitudes; sv: scratch (SV_ROWS, nb))."""
    s = tok.shape[0]
    nb = tok.shape[1]
    d = am.shape[0]
    tot = sv[SV_TOT]
    rtot = sv[SV_RTOT]
    gap = sv[SV_GAP]
    sce_m, sce_r = l0.exp_scores_mid, l0.exp_scores_rad
    vo_m, vo_r = l0.values_out_mid, l0.values_out_rad
    for e in range(d):
        for b in range(nb):
            am[e, b] = out_bias[e]
            ar[e, b] = 0.0
            amag[e, b] = abs(out_bias[e])
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
                ar[e, b] = (ar[e, b] + g * amag[e, b]) * (1 + (2 * s * n_heads + 5) * U) + ETA


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


@kernel(types.void(A5, A4, A4, I2, i8, i8, A5))
def low_sums(sce, vo, mv, slot_tok, k, i0, out):  # pragma: no cover - jitted
    """out[i, slot, h, :, b] = sum_{j < k} e_j [vo_j, 1, mv_j] for the low part b (bit j of b
    is the token at j), e_j = sce[t_i, i, t_j, j, h], t_i = slot_tok[slot, i] for i >= k and
    bit i of b for i < k (both slots then hold the same); for the query positions i >= i0
    (the rows i < i0 are not written: one layer reads only the readout position's)."""
    s = out.shape[0]
    n_heads = out.shape[2]
    d = vo.shape[3]
    f = mv.shape[3]
    ev = np.empty(BS)
    for i in range(i0, s):
        for sl in range(2):
            if sl == 1 and i < k:  # the query token is bit i of b: both slots hold the same
                out[i, 1] = out[i, 0]
                continue
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


@kernel(types.void(A3, i8, A3, A2, A1, A1, A1, A1, A2, A1, A2, A1, i8, b1))
def mlp_from_tables(
    lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, lo_q
):  # pragma: no cover - jitted
    """Layer 0's MLP at query position i from the tables: h = relu(z (g0 + sum_h (lo[h, off +
    e] + hi[., h, off + e]) iv[h]) + c0) row by row (g0 = g0a and hi[0], or, when lo_q, g0b
    and hi[1] for the strings whose bit i is 1), and out = b2 + W2 h without storing h, W2 given
    transposed (w2t = W2^T, (f, d): the weights of a hidden unit contiguous)
    (``stages.simd``: 16 (8, 4, 1) output rows by 8 strings in vector registers, the row of
    h in a register too); xmax[b] = max_e h[e, b] (NaN skipped). Each h[e, b] is computed by
    the operations, in the order, of ``fill_rows``, ``add_weighted`` per head, h z + c0 and
    relu, and out by fused multiply-adds in the order e = 0, 1, ... (the bound of
    ``dense.matvec_scalar``): bit-identical to those passes and ``dense.matvec_scalar``."""
    d = out.shape[0]
    sel = 1 if lo_q else 0
    j = 0
    while d - j >= 16:
        mlp_rows16(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j)
        j += 16
    if d - j >= 8:
        mlp_rows8(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j)
        j += 8
    if d - j >= 4:
        mlp_rows4(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j)
        j += 4
    while j < d:
        mlp_rows1(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j)
        j += 1
