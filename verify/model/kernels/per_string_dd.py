"""The double-double driver: T(x) of any batch of strings with DD midpoints (about 106 bits)
and componentwise float64 radii, the middle tier between the float64 kernels and arb.

Every layer is computed from the embeddings (no float64 tables: their radii would be the
float64 ones); the last layer only at the readout position. Strings go in blocks of
``STRINGS_PER_BLOCK`` along the last axis; blocks run in parallel (prange).
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.kernels.bundles import (
    A1,
    DOUBLE_DOUBLE_TABLES,
    LAYER_WEIGHTS_T,
    NORM_AFFINE,
    SCALARS,
    U2,
    b1,
)
from verify.model.kernels.dd_dense import matvec_dd
from verify.model.kernels.dd_layers import attention_dd, finish_position_dd
from verify.model.kernels.dd_norm import layer_norm_dd
from verify.model.rounding import ETA, U

STRINGS_PER_BLOCK = 16
EOS = 2  # the eos token


@kernel(
    types.void(U2, SCALARS, DOUBLE_DOUBLE_TABLES, LAYER_WEIGHTS_T, NORM_AFFINE, b1, A1, A1),
    parallel=True,
)
def certified_T_dd(bits, sc, dt, lw, ln, bounds, t_out, r_out):  # pragma: no cover - jitted
    """T(x) for each row of ``bits``: t_out = the high part of the DD value, r_out a rigorous
    bound of |T_exact - t_out| (the radius plus the low part), or 0 without bounds."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    s = n + 1 if sc.eos else n
    n_layers = lw.in_t.shape[0]
    n_heads = sc.n_heads
    d = dt.y0_hi.shape[2]
    f = lw.lin1_t.shape[2]
    n_norms = ln.gains.shape[0]
    bs = STRINGS_PER_BLOCK
    n_blocks = (n_str + bs - 1) // bs
    big = max(3 * d, f)
    cmh, cml, cr = dt.inv_sqrt_dh_hi, dt.inv_sqrt_dh_lo, dt.inv_sqrt_dh_rad
    for blk in prange(n_blocks):
        start = blk * bs
        nb = min(bs, n_str - start)
        yh = np.empty((s, d, nb))
        yl = np.empty((s, d, nb))
        yr = np.zeros((s, d, nb))
        xh = np.empty((s, d, nb))
        xl = np.empty((s, d, nb))
        xr = np.zeros((s, d, nb))
        qh = np.empty((s, 3 * d, nb))
        ql = np.empty((s, 3 * d, nb))
        qr = np.zeros((s, 3 * d, nb))
        ath = np.empty((d, nb))
        atl = np.empty((d, nb))
        atr = np.zeros((d, nb))
        ah = np.empty((d, nb))
        al = np.empty((d, nb))
        ar = np.zeros((d, nb))
        hh = np.empty((f, nb))
        hl = np.empty((f, nb))
        hr = np.zeros((f, nb))
        th = np.empty((d, nb))
        tl = np.empty((d, nb))
        tr = np.zeros((d, nb))
        ph = np.empty((s, nb))
        pl = np.empty((s, nb))
        pr = np.zeros((s, nb))
        scratch = np.empty((big, nb))
        for b in range(nb):
            for i in range(s):
                t = EOS if i == n else bits[start + b, i]
                for e in range(d):
                    yh[i, e, b] = dt.y0_hi[t, i, e]
                    yl[i, e, b] = dt.y0_lo[t, i, e]
                    yr[i, e, b] = dt.y0_rad[t, i, e]
        for layer in range(n_layers):
            k1 = 2 * layer
            wint, awint, binv = lw.in_t[layer], lw.in_t_abs[layer], lw.in_bias[layer]
            for j in range(s):  # queries, keys, values of every position (pre-LN: of LN1(y))
                if sc.norm_first:
                    layer_norm_dd(
                        yh[j], yl[j], yr[j], ln.gains[k1], ln.biases[k1], sc.eps, xh[j], xl[j],
                        xr[j], bounds,
                    )  # fmt: skip
                    matvec_dd(xh[j], xl[j], xr[j], wint, awint, binv, 0, 3 * d, qh[j], ql[j],
                              qr[j], scratch, bounds)  # fmt: skip
                else:
                    matvec_dd(yh[j], yl[j], yr[j], wint, awint, binv, 0, 3 * d, qh[j], ql[j],
                              qr[j], scratch, bounds)  # fmt: skip
            first = s - 1 if layer == n_layers - 1 else 0  # the last layer: readout only
            for i in range(first, s):
                attention_dd(
                    qh, ql, qr, i, n_heads, cmh, cml, cr, ath, atl, atr, ph, pl, pr, bounds
                )
                matvec_dd(ath, atl, atr, lw.out_t[layer], lw.out_t_abs[layer],
                          lw.out_bias[layer], 0, d, ah, al, ar, scratch, bounds)  # fmt: skip
                # keys and values were all taken already: position i may be overwritten
                finish_position_dd(
                    layer, sc, lw, ln, yh[i], yl[i], yr[i], ah, al, ar, hh, hl, hr, th, tl,
                    tr, scratch, bounds,
                )  # fmt: skip
        r = s - 1
        if sc.norm_first:
            layer_norm_dd(
                yh[r], yl[r], yr[r], ln.gains[n_norms - 1], ln.biases[n_norms - 1], sc.eps,
                th, tl, tr, bounds,
            )  # fmt: skip
            for e in range(d):
                for b in range(nb):
                    yh[r, e, b] = th[e, b]
                    yl[r, e, b] = tl[e, b]
                    yr[r, e, b] = tr[e, b]
        matvec_dd(yh[r], yl[r], yr[r], dt.readout_t, dt.readout_t_abs, dt.readout_bias, 0, 1,
                  ah, al, ar, scratch, bounds)  # fmt: skip
        for b in range(nb):
            t_out[start + b] = ah[0, b]
            if bounds:
                r_out[start + b] = (ar[0, b] + abs(al[0, b])) * (1 + 2 * U) + ETA
            else:
                r_out[start + b] = 0.0
