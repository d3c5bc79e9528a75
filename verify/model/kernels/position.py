"""The rest of a layer at one position once its attention output is known: the residual
additions, the layer norms and the MLP (post-LN or pre-LN), with componentwise radii
(``finish_position``) or scalar radii (``finish_position_scalar``)."""

from __future__ import annotations

from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import (
    A1,
    A2,
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
    b1,
    i8,
)
from verify.model.kernels.dense import (
    add_into,
    add_into_scalar,
    matvec,
    matvec_scalar,
    relu,
    relu_scalar,
)
from verify.model.kernels.layer_norm import layer_norm, layer_norm_scalar


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


@kernel(
    types.void(
        i8, SCALARS, LAYER_WEIGHTS, NORM_AFFINE, WEIGHT_BOUNDS,
        A2, A1, A2, A1, A2, A1, A2, A1, A1, A2, b1,
    )
)  # fmt: skip
def finish_position_scalar(
    layer, sc, lw, ln, wb, y, ry, a, ra, hid, rhid, tmp, rtmp, xmax, ls, bounds
):  # pragma: no cover - jitted
    """Given the residual input y and the attention output a (after out_proj) at one position
    of a block, the layer's output there into y, ry (scalar radii; a is overwritten)."""
    nm = wb.layer[layer]
    k1 = 2 * layer
    f = hid.shape[0]
    d = y.shape[0]
    eps = sc.eps
    w1, b1v = lw.lin1_w[layer], lw.lin1_b[layer]
    w2, b2v = lw.lin2_w[layer], lw.lin2_b[layer]
    g1, bb1 = ln.gains[k1], ln.biases[k1]
    g2, bb2 = ln.gains[k1 + 1], ln.biases[k1 + 1]
    if sc.norm_first:
        add_into_scalar(y, ry, a, ra, bounds)  # h = y + MHA(LN1(y))
        layer_norm_scalar(
            y, ry, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, tmp, rtmp, ls, bounds
        )
        matvec_scalar(tmp, rtmp, w1, b1v, 0, f, nm[NB_W1], nm[NB_B1], hid, rhid, xmax, bounds)
        relu_scalar(hid)
        matvec_scalar(hid, rhid, w2, b2v, 0, d, nm[NB_W2], nm[NB_B2], tmp, rtmp, xmax, bounds)
        add_into_scalar(y, ry, tmp, rtmp, bounds)  # y' = h + FFN(LN2(h))
    else:
        add_into_scalar(a, ra, y, ry, bounds)  # y + MHA(y)
        layer_norm_scalar(
            a, ra, g1, bb1, nm[NB_LN1_GAIN], nm[NB_LN1_BIAS], eps, y, ry, ls, bounds
        )  # y <- h
        matvec_scalar(y, ry, w1, b1v, 0, f, nm[NB_W1], nm[NB_B1], hid, rhid, xmax, bounds)
        relu_scalar(hid)
        matvec_scalar(hid, rhid, w2, b2v, 0, d, nm[NB_W2], nm[NB_B2], tmp, rtmp, xmax, bounds)
        add_into_scalar(tmp, rtmp, y, ry, bounds)  # h + FFN(h)
        layer_norm_scalar(
            tmp, rtmp, g2, bb2, nm[NB_LN2_GAIN], nm[NB_LN2_BIAS], eps, y, ry, ls, bounds
        )
