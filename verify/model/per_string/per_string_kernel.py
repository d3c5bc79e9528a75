"""The per-string driver: T(x) of any batch of strings with componentwise radii.

:func:`certified_T` evaluates T(x) for each row of ``bits``. With ``bounds`` it also carries,
for every intermediate value, a radius bounding |exact - computed| (midpoint-radius arithmetic
with the rounding model of ``verify.model.arithmetic.rounding``: gamma_n <= n U for dot products and
sums in any order, exp within 16 ulps, sqrt and division correctly rounded; each radius is inflated
by a relative (1 + c U) and an absolute ETA for underflow), so |T_exact - T| <= radius. Without
``bounds`` it is the plain float64 pass.

Layer 0 comes from the (token, position) tables (``stages.tables.layer0_attention``); the
last layer computes only the readout position (``stages.attention.readout_attention``).
Strings go in blocks of ``STRINGS_PER_BLOCK``, the string index innermost in every array, so
the loops over strings vectorise; blocks run in parallel (prange).
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.attention import SV_ROWS, attention_at, readout_attention
from verify.model.stages.bundles import (
    A1,
    LAYER0_TABLES,
    LAYER_WEIGHTS_T,
    NORM_AFFINE,
    READOUT,
    SCALARS,
    U2,
    b1,
    i8,
)
from verify.model.stages.dense import matvec
from verify.model.stages.layer_norm import layer_norm
from verify.model.stages.position import finish_position
from verify.model.stages.register_sums import LS_ROWS
from verify.model.stages.tables import layer0_attention

STRINGS_PER_BLOCK = 32
EOS = 2  # the eos token


@kernel(
    types.void(i8, U2, SCALARS, LAYER0_TABLES, LAYER_WEIGHTS_T, NORM_AFFINE, READOUT, b1, A1, A1)
)
def certified_block(
    blk, bits, sc, l0, lw, ln, ro, bounds, t_out, r_out
):  # pragma: no cover - jitted
    """Block ``blk`` (rows blk bs .. blk bs + bs - 1 of ``bits``, bs = STRINGS_PER_BLOCK) of
    :func:`certified_T`, serial: the parallel driver only spreads the blocks over the threads
    (a prange over this body compiled 3x slower: Numba's parfor passes ran over all of it)."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    eos = sc.eos
    norm_first = sc.norm_first
    n_heads = sc.n_heads
    eps = sc.eps
    ann = sc.ln_annotated  # the layer-norm form
    cm = sc.inv_sqrt_dh
    cr = sc.inv_sqrt_dh_rad
    s = n + 1 if eos else n
    n_layers = lw.in_t.shape[0]
    d = l0.y0_mid.shape[2]
    f = lw.lin1_t.shape[2]
    n_norms = ln.gains.shape[0]
    bs = STRINGS_PER_BLOCK
    big = max(3 * d, f)
    start = blk * bs
    nb = min(bs, n_str - start)
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
    ls = np.empty((LS_ROWS, nb))
    sv = np.zeros((SV_ROWS, nb))
    xs = np.empty((s, d, nb))
    xsr = np.zeros((s, d, nb))
    qm = np.empty((d, nb))
    qr = np.zeros((d, nb))
    um = np.empty((d, nb))
    ur = np.zeros((d, nb))
    xbm = np.empty((d, nb))
    xbr = np.zeros((d, nb))
    for b in range(nb):
        for i in range(n):
            tok[i, b] = bits[start + b, i]
        if eos:
            tok[s - 1, b] = EOS
    # ---------------- layer 0, from the (bit, position) tables
    first_q = 0 if n_layers > 1 else s - 1
    for i in range(first_q, s):
        layer0_attention(tok, i, n_heads, l0, lw.out_bias[0], am, ar, amag, pm, pr, sv, bounds)
        for e in range(d):
            for b in range(nb):
                t = tok[i, b]
                ym[i, e, b] = l0.y0_mid[t, i, e]
                yr[i, e, b] = l0.y0_rad[t, i, e]
        finish_position(
            0, sc, lw, ln, ym[i], yr[i], am, ar, hid, rhid, tmp, rtmp, scratch, ls, bounds
        )
    # ---------------- layers 1..L-1
    for layer in range(1, n_layers):
        last = layer == n_layers - 1
        k1 = 2 * layer
        wint, awint, binv = lw.in_t[layer], lw.in_t_abs[layer], lw.in_bias[layer]
        wot, awot, bov = lw.out_t[layer], lw.out_t_abs[layer], lw.out_bias[layer]
        if last:  # readout position only: attention in O(s d) per head
            src = ym
            srcr = yr
            if norm_first:
                for j in range(s):
                    layer_norm(
                        ym[j], yr[j], ln.gains[k1], ln.biases[k1], eps, ann, xs[j], xsr[j], ls,
                        bounds,
                    )  # fmt: skip
                src = xs
                srcr = xsr
            readout_attention(
                src, srcr, wint, awint, binv, n_heads, cm, cr, attm, attr, qm, qr, um, ur,
                xbm, xbr, pm, pr, sv, scratch, bounds,
            )  # fmt: skip
            matvec(attm, attr, wot, awot, bov, 0, d, am, ar, scratch, bounds)
            finish_position(
                layer, sc, lw, ln, ym[s - 1], yr[s - 1], am, ar, hid, rhid, tmp, rtmp,
                scratch, ls, bounds,
            )  # fmt: skip
            continue
        for j in range(s):  # queries, keys, values of every position (pre-LN: of LN1(y))
            if norm_first:
                layer_norm(
                    ym[j], yr[j], ln.gains[k1], ln.biases[k1], eps, ann, tmp, rtmp, ls, bounds
                )
                matvec(tmp, rtmp, wint, awint, binv, 0, 3 * d, qkvm[j], qkvr[j], scratch,
                       bounds)  # fmt: skip
            else:
                matvec(ym[j], yr[j], wint, awint, binv, 0, 3 * d, qkvm[j], qkvr[j], scratch,
                       bounds)  # fmt: skip
        for i in range(s):
            attention_at(qkvm, qkvr, i, n_heads, cm, cr, attm, attr, pm, pr, sv, bounds)
            matvec(attm, attr, wot, awot, bov, 0, d, am, ar, scratch, bounds)
            # keys and values were all taken already: position i may be overwritten
            finish_position(
                layer, sc, lw, ln, ym[i], yr[i], am, ar, hid, rhid, tmp, rtmp, scratch, ls,
                bounds,
            )  # fmt: skip
    # ---------------- final norm and readout
    r = s - 1
    if sc.final_norm:
        layer_norm(
            ym[r], yr[r], ln.gains[n_norms - 1], ln.biases[n_norms - 1], eps, ann, tmp, rtmp, ls,
            bounds,
        )  # fmt: skip
        for e in range(d):
            for b in range(nb):
                ym[r, e, b] = tmp[e, b]
                yr[r, e, b] = rtmp[e, b]
    w = ro.weight
    aw = ro.weight_abs
    omega = sc.omega
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


@kernel(
    types.void(U2, SCALARS, LAYER0_TABLES, LAYER_WEIGHTS_T, NORM_AFFINE, READOUT, b1, A1, A1),
    parallel=True,
)
def certified_T(bits, sc, l0, lw, ln, ro, bounds, t_out, r_out):  # pragma: no cover - jitted
    """T(x) (and, with bounds, a rigorous radius) for each row of ``bits`` into t_out, r_out
    (the radius is 0 without bounds); blocks of strings run in parallel
    (:func:`certified_block`)."""
    n_blocks = (bits.shape[0] + STRINGS_PER_BLOCK - 1) // STRINGS_PER_BLOCK
    for blk in prange(n_blocks):
        certified_block(blk, bits, sc, l0, lw, ln, ro, bounds, t_out, r_out)
