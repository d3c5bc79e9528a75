"""The double-double driver: T(x) of any batch of strings with DD midpoints (about 106 bits)
and one 2-norm radius per vector, the middle tier between the float64 kernels and arb.

Every layer is computed from the embeddings (no float64 tables: their radii would be the
float64 ones); the last layer only at the readout position. Strings go in blocks of
``STRINGS_PER_BLOCK`` along the last axis; blocks run in parallel (prange).

Radii (``double_double.dd_l2``): rho bounds |x_exact - x_mid|_2 of the residual stream at each
position and of every intermediate vector. A stage f costs |f(x_exact) - f(x_mid)| <= Lip(f)
rho (a matrix: its spectral norm, ``wn``, bounded with arb before the call; a layer norm: its
Lipschitz constant on the ball; relu: 1) plus the 2-norm of the stage kernel's componentwise
rounding bound at the midpoint (the ``dd_dense`` / ``dd_norm`` kernels with zero input radii).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.double_double.dd_dense import add_into_dd, matvec_dd, relu_dd
from verify.model.double_double.dd_l2 import (
    SQ_SLACK,
    abs_l2,
    attention_l2,
    l2_rows,
    layer_norm_lipschitz,
    matvec_radius,
)
from verify.model.double_double.dd_norm import layer_norm_dd
from verify.model.stages.bundles import (
    A1,
    A2,
    A3,
    DOUBLE_DOUBLE_TABLES,
    LAYER_WEIGHTS_T,
    NORM_AFFINE,
    SCALARS,
    U2,
    b1,
    f8,
    i8,
)

STRINGS_PER_BLOCK = 16
EOS = 2  # the eos token


@kernel(types.void(A3, i8, i8, A1, A1, i8, i8, A1))
def _mv_radius(wn, layer, c, rho, na, n, rows, out):  # pragma: no cover - jitted
    """``matvec_radius`` with the norms of column c of wn[layer] (spectral, Frobenius, bias)."""
    matvec_radius(rho, na, n, rows, wn[layer, 0, c], wn[layer, 1, c], wn[layer, 2, c], out)


@kernel(types.void(A2, A1, A1, A1, A1))
def _sum3(r, ra, rb, tmp, out):  # pragma: no cover - jitted
    """out[b] >= ra[b] + rb[b] + |r[:, b]|_2 (a residual addition)."""
    l2_rows(r, 0, r.shape[0], tmp)
    for b in range(out.shape[0]):
        out[b] = (ra[b] + rb[b] + tmp[b]) * (1 + 2 * U)


@kernel(types.void(A2, A2, A1, A1, f8, b1, A1, f8, A2, A2, A2, A1, A1))
def _norm_l2(vh, vl, rv, gain, eps, ann, bias, gmax, oh, ol, ro, tmp, rout):  # pragma: no cover
    """Layer norm of v into o with rout >= Lip rv + |rounding|_2 (gmax = max |gain|)."""
    layer_norm_lipschitz(vh, vl, rv, eps, ann, gmax, rout)
    zero = np.zeros_like(vh)
    layer_norm_dd(vh, vl, zero, gain, bias, eps, ann, oh, ol, ro, True)
    l2_rows(ro, 0, ro.shape[0], tmp)
    for b in range(rout.shape[0]):
        rout[b] = (rout[b] * rv[b] + tmp[b]) * (1 + 2 * U)


@kernel(types.void(i8, LAYER_WEIGHTS_T, A3, i8, A2, A2, A1, A2, A2, A2, A2, A2, A2, A2, A2, A2,
                    A1, A1, b1))  # fmt: skip
def _mlp_l2(
    layer, lw, wn, nh3, xh, xl, rx, zd, zf, hh, hl, hr, oh, ol, orr, scratch, tmp, rout, bounds
):  # pragma: no cover - jitted
    """FFN(x) = W_2 relu(W_1 x + b_1) + b_2 into o, with rout >= |W_1|_2 |W_2|_2 rx + the
    rounding (relu is 1-Lipschitz); x may alias o and rx rout (each is read before written)."""
    d = xh.shape[0]
    f = hh.shape[0]
    if bounds:
        abs_l2(xh, xl, tmp)
        _mv_radius(wn, layer, nh3 + 1, rx, tmp, d, f, rout)
    matvec_dd(xh, xl, zd, lw.lin1_t[layer], lw.lin1_t_abs[layer], lw.lin1_bias[layer], 0, f,
              hh, hl, hr, scratch, False)  # fmt: skip
    relu_dd(hh, hl, zf, bounds)
    if bounds:
        abs_l2(hh, hl, tmp)
        _mv_radius(wn, layer, nh3 + 2, rout, tmp, f, d, rout)
    matvec_dd(hh, hl, zf, lw.lin2_t[layer], lw.lin2_t_abs[layer], lw.lin2_bias[layer], 0, d,
              oh, ol, orr, scratch, False)  # fmt: skip


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS_T, NORM_AFFINE, A3, A1,
        A2, A2, A1, A2, A2, A2, A1, A2, A2, A2, A2, A2, A2, A2, A1, A1, b1,
    )
)  # fmt: skip
def _finish_position(
    layer,
    sc,
    lw,
    ln,
    wn,
    gm,
    yh,
    yl,
    ry,
    ah,
    al,
    ar,
    ra,
    hh,
    hl,
    hr,
    th,
    tl,
    tr,
    scratch,
    r1,
    tmp,
    bounds,
):  # pragma: no cover - jitted
    """Given the residual input y (radius ry) and the attention output a after out_proj (ra)
    at one position, the layer's output there into y and ry; a, ra are overwritten."""
    k1 = 2 * layer
    eps = sc.eps
    ann = sc.ln_annotated  # the layer-norm form
    nh3 = 3 * sc.n_heads
    zd = np.zeros_like(yh)
    zf = np.zeros_like(hh)
    g1, g2 = gm[k1], gm[k1 + 1]
    if sc.norm_first:
        tr[:] = 0.0
        add_into_dd(yh, yl, tr, ah, al, zd, bounds)  # h = y + MHA(LN1(y))
        if bounds:
            _sum3(tr, ry, ra, tmp, ry)
            _norm_l2(
                yh, yl, ry, ln.gains[k1 + 1], eps, ann, ln.biases[k1 + 1], g2, th, tl, tr, tmp, r1
            )
        else:
            layer_norm_dd(
                yh, yl, zd, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, ann, th, tl, tr, bounds
            )
        _mlp_l2(layer, lw, wn, nh3, th, tl, r1, zd, zf, hh, hl, hr, th, tl, tr, scratch, tmp, r1,
                bounds)  # fmt: skip
        ar[:] = 0.0
        add_into_dd(yh, yl, ar, th, tl, zd, bounds)  # y' = h + FFN(LN2(h))
        if bounds:
            _sum3(ar, ry, r1, tmp, ry)
    else:
        ar[:] = 0.0
        add_into_dd(ah, al, ar, yh, yl, zd, bounds)  # y + MHA(y)
        if bounds:
            _sum3(ar, ra, ry, tmp, ra)
            _norm_l2(
                ah, al, ra, ln.gains[k1], eps, ann, ln.biases[k1], g1, yh, yl, tr, tmp, ry
            )  # h
        else:
            layer_norm_dd(ah, al, zd, ln.gains[k1], ln.biases[k1], eps, ann, yh, yl, tr, bounds)
        _mlp_l2(layer, lw, wn, nh3, yh, yl, ry, zd, zf, hh, hl, hr, th, tl, tr, scratch, tmp, r1,
                bounds)  # fmt: skip
        ar[:] = 0.0
        add_into_dd(th, tl, ar, yh, yl, zd, bounds)  # h + FFN(h)
        if bounds:
            _sum3(ar, r1, ry, tmp, r1)
            _norm_l2(
                th, tl, r1, ln.gains[k1 + 1], eps, ann, ln.biases[k1 + 1], g2, yh, yl, tr, tmp, ry
            )
        else:
            layer_norm_dd(
                th, tl, zd, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, ann, yh, yl, tr, bounds
            )  # fmt: skip


@kernel(
    types.void(U2, SCALARS, DOUBLE_DOUBLE_TABLES, LAYER_WEIGHTS_T, NORM_AFFINE, A3, A1, b1, A1, A1),
    parallel=True,
)
def certified_T_dd(bits, sc, dt, lw, ln, wn, wr, bounds, t_out, r_out):  # pragma: no cover
    """T(x) for each row of ``bits``: t_out = the high part of the DD value, r_out a rigorous
    bound of |T_exact - t_out| (the radius plus the low part), or 0 without bounds.

    wn[layer, 0] >= the spectral norms of in_proj's query blocks (one per head), key blocks,
    value blocks, then out_proj, linear1, linear2; wn[layer, 1] >= their Frobenius norms,
    wn[layer, 2] >= the 2-norms of their biases; wr the same three for the readout."""
    n_str = bits.shape[0]
    n = bits.shape[1]
    s = n + 1 if sc.eos else n
    n_layers = lw.in_t.shape[0]
    nhd = sc.n_heads
    d = dt.y0_hi.shape[2]
    dh = d // nhd
    f = lw.lin1_t.shape[2]
    n_norms = ln.gains.shape[0]
    gm = np.zeros(n_norms)
    for k in range(n_norms):
        for e in range(d):
            gm[k] = max(gm[k], abs(ln.gains[k, e]))
    bs = STRINGS_PER_BLOCK
    n_blocks = (n_str + bs - 1) // bs
    big = max(3 * d, f)
    cmh, cml, cr = dt.inv_sqrt_dh_hi, dt.inv_sqrt_dh_lo, dt.inv_sqrt_dh_rad
    for blk in prange(n_blocks):
        start = blk * bs
        nb = min(bs, n_str - start)
        yh = np.empty((s, d, nb))
        yl = np.empty((s, d, nb))
        ry = np.zeros((s, nb))
        xh = np.empty((s, d, nb))
        xl = np.empty((s, d, nb))
        rx = np.zeros((s, nb))
        qh = np.empty((s, 3 * d, nb))
        ql = np.empty((s, 3 * d, nb))
        qr = np.zeros((3 * d, nb))  # unused: matvec_dd without componentwise bounds
        rq = np.zeros((s, 3 * nhd, nb))
        ath = np.empty((d, nb))
        atl = np.empty((d, nb))
        rat = np.zeros(nb)
        ah = np.empty((d, nb))
        al = np.empty((d, nb))
        ar = np.zeros((d, nb))
        ra = np.zeros(nb)
        hh = np.empty((f, nb))
        hl = np.empty((f, nb))
        hr = np.zeros((f, nb))
        th = np.empty((d, nb))
        tl = np.empty((d, nb))
        tr = np.zeros((d, nb))
        ph = np.empty((s, nb))
        pl = np.empty((s, nb))
        pr = np.zeros((s, nb))
        r1 = np.zeros(nb)
        tmp = np.zeros(nb)
        zd = np.zeros((d, nb))
        scratch = np.empty((big, nb))
        for b in range(nb):
            for i in range(s):
                t = EOS if i == n else bits[start + b, i]
                sq = 0.0
                for e in range(d):
                    yh[i, e, b] = dt.y0_hi[t, i, e]
                    yl[i, e, b] = dt.y0_lo[t, i, e]
                    sq += dt.y0_rad[t, i, e] * dt.y0_rad[t, i, e]
                ry[i, b] = math.sqrt(sq * (1 + (d + 3) * U) + SQ_SLACK) * (1 + 2 * U)
        for layer in range(n_layers):
            k1 = 2 * layer
            wint, awint, binv = lw.in_t[layer], lw.in_t_abs[layer], lw.in_bias[layer]
            for j in range(s):  # queries, keys, values of every position (pre-LN: of LN1(y))
                if sc.norm_first:
                    if bounds:
                        _norm_l2(yh[j], yl[j], ry[j], ln.gains[k1], sc.eps, sc.ln_annotated,
                                 ln.biases[k1], gm[k1], xh[j], xl[j], tr, tmp, rx[j])  # fmt: skip
                    else:
                        layer_norm_dd(yh[j], yl[j], zd, ln.gains[k1], ln.biases[k1], sc.eps,
                                      sc.ln_annotated, xh[j], xl[j], tr, bounds)  # fmt: skip
                    matvec_dd(xh[j], xl[j], zd, wint, awint, binv, 0, 3 * d, qh[j], ql[j],
                              qr, scratch, False)  # fmt: skip
                    src = rx[j]
                    if bounds:
                        abs_l2(xh[j], xl[j], tmp)
                else:
                    matvec_dd(yh[j], yl[j], zd, wint, awint, binv, 0, 3 * d, qh[j], ql[j],
                              qr, scratch, False)  # fmt: skip
                    src = ry[j]
                    if bounds:
                        abs_l2(yh[j], yl[j], tmp)
                if bounds:
                    for c in range(3 * nhd):
                        _mv_radius(wn, layer, c, src, tmp, d, dh, rq[j, c])
            first = s - 1 if layer == n_layers - 1 else 0  # the last layer: readout only
            for i in range(first, s):
                attention_l2(qh, ql, rq, i, nhd, cmh, cml, cr, ath, atl, rat, ph, pl, pr)
                matvec_dd(ath, atl, zd, lw.out_t[layer], lw.out_t_abs[layer],
                          lw.out_bias[layer], 0, d, ah, al, ar, scratch, False)  # fmt: skip
                if bounds:
                    abs_l2(ath, atl, tmp)
                    _mv_radius(wn, layer, 3 * nhd, rat, tmp, d, d, ra)
                # keys and values were all taken already: position i may be overwritten
                _finish_position(
                    layer, sc, lw, ln, wn, gm, yh[i], yl[i], ry[i], ah, al, ar, ra, hh, hl,
                    hr, th, tl, tr, scratch, r1, tmp, bounds,
                )  # fmt: skip
        r = s - 1
        if sc.final_norm:
            k = n_norms - 1
            if bounds:
                _norm_l2(yh[r], yl[r], ry[r], ln.gains[k], sc.eps, sc.ln_annotated, ln.biases[k],
                         gm[k], th, tl, tr, tmp, r1)  # fmt: skip
            else:
                layer_norm_dd(yh[r], yl[r], zd, ln.gains[k], ln.biases[k], sc.eps,
                              sc.ln_annotated, th, tl, tr, bounds)  # fmt: skip
            for e in range(d):
                for b in range(nb):
                    yh[r, e, b] = th[e, b]
                    yl[r, e, b] = tl[e, b]
            for b in range(nb):
                ry[r, b] = r1[b]
        matvec_dd(yh[r], yl[r], zd, dt.readout_t, dt.readout_t_abs, dt.readout_bias, 0, 1,
                  ah, al, ar, scratch, False)  # fmt: skip
        if bounds:
            abs_l2(yh[r], yl[r], tmp)
            matvec_radius(ry[r], tmp, d, 1, wr[0], wr[1], wr[2], r1)
        for b in range(nb):
            t_out[start + b] = ah[0, b]
            if bounds:
                r_out[start + b] = (r1[b] + abs(al[0, b])) * (1 + 2 * U) + ETA
            else:
                r_out[start + b] = 0.0
