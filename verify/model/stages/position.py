"""The rest of a layer at one position once its attention output is known: the residual
additions, the layer norms and the MLP (post-LN or pre-LN), with componentwise radii
(``finish_position``; the attention output after out_proj) or one 2-norm radius per string
(``finish_position_l2``; out_proj included)."""

from __future__ import annotations

import math

from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import (
    A1,
    A2,
    BS,
    LAYER_WEIGHTS,
    LAYER_WEIGHTS_T,
    NB_B1,
    NB_B2,
    NB_LN1_BIAS,
    NB_LN1_GAIN,
    NB_LN2_BIAS,
    NB_LN2_GAIN,
    NB_W1,
    NB_W2,
    NORM_AFFINE,
    OB_B,
    OB_W,
    SCALARS,
    WEIGHT_BOUNDS,
    WN_SPEC,
    b1,
    i8,
)
from verify.model.stages.dense import add_into, add_into_scalar, matvec, relu, relu_scalar
from verify.model.stages.layer_norm import layer_norm
from verify.model.stages.register_sums import LS_VAR
from verify.model.stages.stage_l2 import layer_norm_l2, matvec_l2, to_l2


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS_T, NORM_AFFINE, A2, A2, A2, A2, A2, A2, A2, A2, A2, A2, b1
    )
)
def finish_position(
    layer, sc, lw, ln, y, ry, a, ra, hid, rhid, tmp, rtmp, scratch, ls, bounds
):  # pragma: no cover - jitted
    """Given the residual input y and the attention output a (after out_proj) at one position
    (per string), the layer's output there into y, ry (componentwise radii; a is
    overwritten)."""
    d = y.shape[0]
    f = hid.shape[0]
    k1 = 2 * layer
    eps = sc.eps
    ann = sc.ln_annotated  # the layer-norm form
    w1t, aw1t, b1v = lw.lin1_t[layer], lw.lin1_t_abs[layer], lw.lin1_bias[layer]
    w2t, aw2t, b2v = lw.lin2_t[layer], lw.lin2_t_abs[layer], lw.lin2_bias[layer]
    if sc.norm_first:
        add_into(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y))
        layer_norm(y, ry, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, ann, tmp, rtmp, ls, bounds)
        matvec(tmp, rtmp, w1t, aw1t, b1v, 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t, aw2t, b2v, 0, d, tmp, rtmp, scratch, bounds)
        add_into(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into(a, ra, y, ry, bounds)  # d1 = y + MHA(y)
        layer_norm(a, ra, ln.gains[k1], ln.biases[k1], eps, ann, y, ry, ls, bounds)  # y <- h
        matvec(y, ry, w1t, aw1t, b1v, 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t, aw2t, b2v, 0, d, tmp, rtmp, scratch, bounds)
        add_into(tmp, rtmp, y, ry, bounds)  # d2 = h + FFN(h)
        layer_norm(tmp, rtmp, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, ann, y, ry, ls, bounds)


@kernel(
    types.void(
        i8, LAYER_WEIGHTS, WEIGHT_BOUNDS, i8, A2, A1, A2, A1, A2, A1, A1, A1, A1, b1
    )
)  # fmt: skip
def _ffn_l2(
    layer, lw, wb, nh, x, rx, hid, rhid, out, rout, xmax, zero, one, bounds
):  # pragma: no cover - jitted
    """out = W_2 relu(W_1 x + b_1) + b_2 with rout >= its 2-norm error given |x_exact - x|_2
    <= rx (``matvec_l2`` twice; relu is 1-Lipschitz). out may be x (x is read first); rout
    must not be rx."""
    nm = wb.layer[layer]
    wn = wb.l2[layer]
    f = hid.shape[0]
    d = out.shape[0]
    matvec_l2(
        x, rx, lw.lin1_wt[layer], lw.lin1_b[layer], 0, f, nm[NB_W1], nm[NB_B1],
        wn[WN_SPEC, 3 * nh + 1], hid, rhid, xmax, zero, one, bounds,
    )  # fmt: skip
    relu_scalar(hid)
    matvec_l2(
        hid, rhid, lw.lin2_wt[layer], lw.lin2_b[layer], 0, d, nm[NB_W2], nm[NB_B2],
        wn[WN_SPEC, 3 * nh + 2], out, rout, xmax, zero, one, bounds,
    )  # fmt: skip


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS, NORM_AFFINE, WEIGHT_BOUNDS,
        A2, A1, A2, A1, A2, A1, A2, A1, A2, A1, A1, A2, A2, A1, A1, A1, b1, A2,
    )
)  # fmt: skip
def finish_position_l2(
    layer, sc, lw, ln, wb, y, ry, att, ratt, a, ra, hid, rhid, tmp, rtmp, xmax, ls, zero, one,
    rho, lip, bounds, lnvar,
):  # fmt: skip  # pragma: no cover - jitted
    """Given the residual input y and the concatenated head outputs att (before out_proj) at one
    position of a block, the layer's output there into y, ry: one 2-norm radius per string in
    and out (|x_exact - x|_2 <= r for y, att and the output). Every stage (out_proj, the
    residual additions, the layer norms, the MLP) by the rules of ``stages.stage_l2``: the
    spectral norms of W_o, W_1, W_2 (``wb.l2``), the layer norms' Lipschitz constants on the
    ball, 1 for relu, plus each stage's rounding at the computed midpoint. a, ra: scratch for
    out_proj's output; zero: a (d, BS) array of zeros; one: a (BS,) array of ones; rho, lip:
    scratch (BS,). lnvar (2, BS): the variances of the inputs of the layer's norms computed
    here (row 0: post-LN's norm1; row 1: norm2; pre-LN leaves row 0 as it is)."""
    nm = wb.layer[layer]
    wn = wb.l2[layer]
    nh = sc.n_heads
    k1 = 2 * layer
    d = y.shape[0]
    eps = sc.eps
    ann = sc.ln_annotated  # the layer-norm form
    g1, bb1 = ln.gains[k1], ln.biases[k1]
    g2, bb2 = ln.gains[k1 + 1], ln.biases[k1 + 1]
    z1 = zero[0]
    sq_d = math.sqrt(d) * (1 + 2 * U)
    on = wb.out[layer]
    matvec_l2(
        att, ratt, lw.out_wt[layer], lw.out_b[layer], 0, d, on[OB_W], on[OB_B],
        wn[WN_SPEC, 3 * nh], a, ra, xmax, z1, one, bounds,
    )  # fmt: skip  # a = out_proj(att); ra: its error
    if bounds:  # the 2-norm error of y + a from the inputs' errors
        for b in range(BS):
            rho[b] = (ry[b] + ra[b]) * (1 + U)
            ry[b] = 0.0
            ra[b] = 0.0
    if sc.norm_first:
        add_into_scalar(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y)); ry: its rounding
        if bounds:
            to_l2(rho, one, 1.0, ry, sq_d, rho)  # rho: the error of h
        layer_norm_l2(
            y, rho, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, ann, tmp, rtmp, ls, zero, lip,
            bounds,
        )  # fmt: skip  # rtmp: the error of LN2(h)
        lnvar[1] = ls[LS_VAR]
        _ffn_l2(layer, lw, wb, nh, tmp, rtmp, hid, rhid, tmp, lip, xmax, z1, one, bounds)
        # tmp <- FFN(LN2(h)); lip: its error
        if bounds:
            to_l2(lip, one, 1.0, rho, 1.0, lip)  # plus the error of h
            rtmp[:] = 0.0
            ry[:] = 0.0
        add_into_scalar(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h)); ry: its rounding
        if bounds:
            to_l2(lip, one, 1.0, ry, sq_d, ry)
    else:
        add_into_scalar(a, ra, y, ry, bounds)  # y + MHA(y); ra: its rounding
        if bounds:
            to_l2(rho, one, 1.0, ra, sq_d, rho)  # rho: the error of y + MHA(y)
        layer_norm_l2(
            a, rho, g1, bb1, nm[NB_LN1_GAIN], nm[NB_LN1_BIAS], eps, ann, y, ry, ls, zero, lip,
            bounds,
        )  # fmt: skip  # y <- h; ry: the error of h
        lnvar[0] = ls[LS_VAR]
        _ffn_l2(layer, lw, wb, nh, y, ry, hid, rhid, tmp, lip, xmax, z1, one, bounds)
        # tmp <- FFN(h); lip: its error
        if bounds:
            to_l2(lip, one, 1.0, ry, 1.0, rho)  # rho: the error of FFN(h) plus that of h
            ry[:] = 0.0
            rtmp[:] = 0.0
        add_into_scalar(tmp, rtmp, y, ry, bounds)  # h + FFN(h); rtmp: its rounding
        if bounds:
            to_l2(rho, one, 1.0, rtmp, sq_d, rho)  # rho: the error of h + FFN(h)
        layer_norm_l2(
            tmp, rho, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, ann, y, ry, ls, zero, lip,
            bounds,
        )  # fmt: skip  # ry: the error of the output
        lnvar[1] = ls[LS_VAR]
