"""The rest of a layer at one position once its attention output is known: the residual
additions, the layer norms and the MLP (post-LN or pre-LN), with componentwise radii
(``finish_position``) or one 2-norm radius per string (``finish_position_scalar``)."""

from __future__ import annotations

import math

from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import (
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
    SCALARS,
    WEIGHT_BOUNDS,
    WN_SPEC,
    b1,
    f8,
    i8,
)
from verify.model.kernels.dd_l2 import layer_norm_lipschitz
from verify.model.kernels.dense import (
    add_into,
    add_into_scalar,
    matvec,
    matvec_scalar,
    relu,
    relu_scalar,
)
from verify.model.kernels.layer_norm import layer_norm, layer_norm_scalar
from verify.model.rounding import U


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
    w1t, aw1t, b1v = lw.lin1_t[layer], lw.lin1_t_abs[layer], lw.lin1_bias[layer]
    w2t, aw2t, b2v = lw.lin2_t[layer], lw.lin2_t_abs[layer], lw.lin2_bias[layer]
    if sc.norm_first:
        add_into(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y))
        layer_norm(y, ry, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, tmp, rtmp, ls, bounds)
        matvec(tmp, rtmp, w1t, aw1t, b1v, 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t, aw2t, b2v, 0, d, tmp, rtmp, scratch, bounds)
        add_into(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into(a, ra, y, ry, bounds)  # d1 = y + MHA(y)
        layer_norm(a, ra, ln.gains[k1], ln.biases[k1], eps, y, ry, ls, bounds)  # y <- h
        matvec(y, ry, w1t, aw1t, b1v, 0, f, hid, rhid, scratch, bounds)
        relu(hid, rhid, bounds)
        matvec(hid, rhid, w2t, aw2t, b2v, 0, d, tmp, rtmp, scratch, bounds)
        add_into(tmp, rtmp, y, ry, bounds)  # d2 = h + FFN(h)
        layer_norm(tmp, rtmp, ln.gains[k1 + 1], ln.biases[k1 + 1], eps, y, ry, ls, bounds)


@kernel(types.void(A1, A1, f8, A1, f8, A1))
def to_l2(r_data, lip, k, r_round, sq, rho):  # pragma: no cover - jitted
    """rho <- (lip k r_data + sq r_round)(1 + 4U), per string: a 2-norm radius from a 2-norm
    input radius through a stage of Lipschitz constant lip[b] k, plus a componentwise
    (infinity-norm) rounding bound of sq^2 components. rho may alias r_data or lip."""
    for b in range(BS):
        rho[b] = (lip[b] * k * r_data[b] + sq * r_round[b]) * (1 + 4 * U)


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS, NORM_AFFINE, WEIGHT_BOUNDS,
        A2, A1, A2, A1, A2, A1, A2, A1, A1, A2, A2, A1, A1, A1, b1,
    )
)  # fmt: skip
def finish_position_scalar(
    layer,
    sc,
    lw,
    ln,
    wb,
    y,
    ry,
    a,
    ra,
    hid,
    rhid,
    tmp,
    rtmp,
    xmax,
    ls,
    zero,
    one,
    rho,
    lip,
    bounds,
):  # pragma: no cover - jitted
    """Given the residual input y and the attention output a (after out_proj) at one position
    of a block, the layer's output there into y, ry (one 2-norm radius per string in and out:
    |x_exact - x|_2 <= r for y, a and the output; a is overwritten).

    As in the double-double tier (``kernels.dd_l2``), each stage f costs |f(x_exact) -
    computed|_2 <= Lip(f) rho + sqrt(n) r0, with Lip the spectral norm of W_1, W_2 (``wb.l2``,
    bounded with arb), the layer norm's Lipschitz constant on the ball
    (``dd_l2.layer_norm_lipschitz``), 1 for relu, and r0 the stage's own scalar rounding bound
    at the computed midpoint (the scalar rules called with zero input radius; n outputs). The
    midpoints are those of the scalar rules. zero: a (d, BS) array of zeros; one: a (BS,)
    array of ones; rho, lip: scratch (BS,)."""
    nm = wb.layer[layer]
    k1 = 2 * layer
    f = hid.shape[0]
    d = y.shape[0]
    eps = sc.eps
    w1, b1v = lw.lin1_w[layer], lw.lin1_b[layer]
    w2, b2v = lw.lin2_w[layer], lw.lin2_b[layer]
    g1, bb1 = ln.gains[k1], ln.biases[k1]
    g2, bb2 = ln.gains[k1 + 1], ln.biases[k1 + 1]
    spec1 = wb.l2[layer, WN_SPEC, 3 * sc.n_heads + 1]
    spec2 = wb.l2[layer, WN_SPEC, 3 * sc.n_heads + 2]
    sq_d = math.sqrt(d) * (1 + 2 * U)
    sq_f = math.sqrt(f) * (1 + 2 * U)
    if bounds:  # the 2-norm error of y + a from the inputs' errors
        for b in range(BS):
            rho[b] = (ry[b] + ra[b]) * (1 + U)
            ry[b] = 0.0
            ra[b] = 0.0
    if sc.norm_first:
        add_into_scalar(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y)); ry: its rounding
        if bounds:
            to_l2(rho, one, 1.0, ry, sq_d, rho)  # rho: the error of h
            layer_norm_lipschitz(y, zero, rho, eps, nm[NB_LN2_GAIN], lip)
            ry[:] = 0.0
        layer_norm_scalar(
            y, ry, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, tmp, rtmp, ls, bounds
        )  # rtmp: LN2's rounding at h (ry = 0 here)
        if bounds:
            to_l2(rho, lip, 1.0, rtmp, sq_d, lip)  # lip: the error of LN2(h)
            rtmp[:] = 0.0
        matvec_scalar(tmp, rtmp, w1, b1v, 0, f, nm[NB_W1], nm[NB_B1], hid, rhid, xmax, bounds)
        relu_scalar(hid)
        if bounds:
            to_l2(lip, one, spec1, rhid, sq_f, lip)  # the error of relu(W_1 LN2(h) + b_1)
            rhid[:] = 0.0
        matvec_scalar(hid, rhid, w2, b2v, 0, d, nm[NB_W2], nm[NB_B2], tmp, rtmp, xmax, bounds)
        if bounds:
            to_l2(lip, one, spec2, rtmp, sq_d, lip)  # the error of FFN(LN2(h))
            to_l2(lip, one, 1.0, rho, 1.0, lip)  # plus the error of h
            rtmp[:] = 0.0
            ry[:] = 0.0
        add_into_scalar(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
        if bounds:
            to_l2(lip, one, 1.0, ry, sq_d, ry)
    else:
        add_into_scalar(a, ra, y, ry, bounds)  # y + MHA(y); ra: its rounding
        if bounds:
            to_l2(rho, one, 1.0, ra, sq_d, rho)  # rho: the error of y + MHA(y)
            layer_norm_lipschitz(a, zero, rho, eps, nm[NB_LN1_GAIN], lip)
            ra[:] = 0.0
        layer_norm_scalar(
            a, ra, g1, bb1, nm[NB_LN1_GAIN], nm[NB_LN1_BIAS], eps, y, ry, ls, bounds
        )  # y <- h; ry: LN1's rounding
        if bounds:
            to_l2(rho, lip, 1.0, ry, sq_d, rho)  # rho: the error of h
            ry[:] = 0.0
        matvec_scalar(y, ry, w1, b1v, 0, f, nm[NB_W1], nm[NB_B1], hid, rhid, xmax, bounds)
        relu_scalar(hid)
        if bounds:
            to_l2(rho, one, spec1, rhid, sq_f, lip)  # the error of relu(W_1 h + b_1)
            rhid[:] = 0.0
        matvec_scalar(hid, rhid, w2, b2v, 0, d, nm[NB_W2], nm[NB_B2], tmp, rtmp, xmax, bounds)
        if bounds:
            to_l2(lip, one, spec2, rtmp, sq_d, lip)  # the error of FFN(h)
            rtmp[:] = 0.0
        add_into_scalar(tmp, rtmp, y, ry, bounds)  # h + FFN(h); rtmp: its rounding
        if bounds:
            to_l2(lip, one, 1.0, rho, 1.0, rho)  # the error of FFN(h) plus that of h
            to_l2(rho, one, 1.0, rtmp, sq_d, rho)  # rho: the error of h + FFN(h)
            layer_norm_lipschitz(tmp, zero, rho, eps, nm[NB_LN2_GAIN], lip)
            rtmp[:] = 0.0
        layer_norm_scalar(
            tmp, rtmp, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, y, ry, ls, bounds
        )  # ry: LN2's rounding
        if bounds:
            to_l2(rho, lip, 1.0, ry, sq_d, ry)
