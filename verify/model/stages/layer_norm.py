"""Layer norm with a rigorous radius: the shared moments and 1/sqrt radius, the componentwise
rule (per-string kernel) and the scalar rule (exhaustive kernel).

Both work on (d, nb) arrays: one feature per row, one string per column. ``ls`` is a scratch
array of ``LS_ROWS`` rows, one string per column, whose rows are named below.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import ETA, U
from verify.model.stages.bundles import A1, A2, BS, b1, f8, i8
from verify.model.stages.register_sums import (  # the rows of the scratch ``ls``
    LS_CMAX,
    LS_CSUM,
    LS_MEAN,
    LS_RZ,
    LS_SABS,
    LS_SS,
    LS_VAR,
    LS_Z,
    ln_block,
)
from verify.model.stages.simd import LANES

# the componentwise rule reuses two rows of ``ls``:
LS_RMEAN = LS_SABS  # componentwise rule: radius of the mean
LS_ACC = LS_CMAX  # componentwise rule: sum_i (2 |c_i| r_i + r_i^2) over the centred values c_i


@kernel(types.void(A2, f8, i8, A2, A2))
def layer_norm_moments(v, eps, nb, out, ls):  # pragma: no cover - jitted
    """Per string b < nb (axis 1): ls[LS_MEAN] and ls[LS_VAR] the mean and biased variance of v
    over axis 0 (ls[LS_SS] = d var), the centred values into out, and ls[LS_Z] = 1 / sqrt(var +
    eps) (inf or NaN when var + eps is 0). When nb is the whole width and a multiple of 8 the
    sums run in registers (``register_sums.ln_block``, the same operations)."""
    d = v.shape[0]
    if nb % LANES == 0 and nb == v.shape[1]:
        ln_block(v, out, ls, ls[0], ls[0], eps, 0, 0)  # no affine map: gain, bias unread
        return
    mean = ls[LS_MEAN]
    var = ls[LS_VAR]
    z = ls[LS_Z]
    for b in range(nb):
        mean[b] = 0.0
        var[b] = 0.0
    for i in range(d):
        for b in range(nb):
            mean[b] += v[i, b]
    for b in range(nb):
        mean[b] = mean[b] / d
    for i in range(d):
        for b in range(nb):
            c = v[i, b] - mean[b]
            out[i, b] = c
            var[b] += c * c
    for b in range(nb):
        ls[LS_SS, b] = var[b]
        var[b] = var[b] / d
        z[b] = 1.0 / math.sqrt(var[b] + eps)


@kernel(f8(f8, f8, f8, i8, f8))
def rsqrt_radius(var, eps, acc, d, z):  # pragma: no cover - jitted
    """A bound of |z_exact - z| for z = 1 / sqrt(var + eps) computed from var, the biased
    variance of d centred values whose errors contribute acc = sum_i (2 |c_i| r_i + r_i^2):
    r_var covers acc / d and the rounding of var, and with v = var + eps - r_sv > 0,
    |z_exact - z| <= r_sv / (2 v^{3/2}) + 4 U z; inf when the variance ball reaches 0."""
    sv = var + eps
    rvar = ((acc + (d + 2) * U * var * d) / d + 2 * U * var) * (1 + (d + 4) * U) + ETA
    rsv = (rvar + U * sv) * (1 + 2 * U)
    low = (sv - rsv) * (1 - U)
    if low > 0:
        return rsv / (2.0 * low * math.sqrt(low) * (1 - 4 * U)) + 4 * U * z
    return np.inf


@kernel(types.void(A2, A2, A1, A1, f8, A2, A2, A2, b1))
def layer_norm(v, rv, gain, bias, eps, out, rout, ls, bounds):  # pragma: no cover
    """out = gain * (v - mean) / sqrt(var + eps) + bias over axis 0, per string (axis 1),
    with componentwise radii rout from rv.

    At eps = 0 and var = 0 the plain pass gives NaN; with bounds, a variance enclosure that
    reaches 0 gives an infinite radius, never a number."""
    d = v.shape[0]
    nb = v.shape[1]
    mean = ls[LS_MEAN]
    var = ls[LS_VAR]
    z = ls[LS_Z]
    rz = ls[LS_RZ]
    rmean = ls[LS_RMEAN]
    acc = ls[LS_ACC]
    layer_norm_moments(v, eps, nb, out, ls)
    if bounds:
        for b in range(nb):
            rmean[b] = 0.0
            acc[b] = 0.0
        for i in range(d):
            for b in range(nb):
                rmean[b] += rv[i, b]
                acc[b] += abs(v[i, b])
        for b in range(nb):
            rmean[b] = ((rmean[b] + (d + 1) * U * acc[b]) / d + 2 * U * abs(mean[b])) * (
                1 + (d + 4) * U
            )
            acc[b] = 0.0
        for i in range(d):
            for b in range(nb):
                c = out[i, b]
                rc = (rv[i, b] + rmean[b] + U * abs(c)) * (1 + 3 * U)
                rout[i, b] = rc
                acc[b] += 2 * abs(c) * rc + rc * rc
        for b in range(nb):
            rz[b] = rsqrt_radius(var[b], eps, acc[b], d, z[b])
    for i in range(d):
        gi = gain[i]
        bi = bias[i]
        for b in range(nb):
            c = out[i, b]
            cz = c * z[b]
            o = cz * gi
            o2 = o + bi
            out[i, b] = o2
            if bounds:
                rc = rout[i, b]
                r = abs(c) * rz[b] + rc * (z[b] + rz[b]) + U * abs(cz)
                r = r * abs(gi) + U * abs(o)
                rout[i, b] = (r + U * abs(o2)) * (1 + 8 * U) + ETA


@kernel(types.void(A2, A1, A1, A1, f8, f8, f8, A2, A1, A2, b1))
def layer_norm_scalar(
    v, rv, gain, bias, gmax, bmax, eps, out, rout, ls, bounds
):  # pragma: no cover
    """out = gain (v - mean) / sqrt(var + eps) + bias over axis 0 (biased variance) for a block
    of BS strings, with one radius per string (rv in, rout out). On return ls[LS_Z] holds z and,
    with bounds, ls[LS_RZ] a bound of its error and ls[LS_SS], ls[LS_SC], ls[LS_CSUM] the sums
    of ``dd_l2.lipschitz_from_sums``. The radius follows the componentwise rule of ``layer_norm``
    with |c_i| <= max|c|, sum |c_i|, |gain| <= gmax, |bias| <= bmax; a variance enclosure
    reaching 0 gives an infinite radius. The moments, the sums of the bound and the affine map
    are one pass in registers (``register_sums.ln_block``)."""
    d = v.shape[0]
    mean = ls[LS_MEAN]
    var = ls[LS_VAR]
    z = ls[LS_Z]
    sabs = ls[LS_SABS]
    cmax = ls[LS_CMAX]
    csum = ls[LS_CSUM]
    ln_block(v, out, ls, gain, bias, eps, 1 if bounds else 0, 1)
    if bounds:
        for b in range(BS):
            rmean = (rv[b] + (d + 1) * U * sabs[b] / d + 2 * U * abs(mean[b])) * (1 + (d + 4) * U)
            rc = (rv[b] + rmean + U * cmax[b]) * (1 + 3 * U)
            acc = 2 * rc * csum[b] + d * rc * rc
            rz = rsqrt_radius(var[b], eps, acc, d, z[b])
            ls[LS_RZ, b] = rz
            cz = cmax[b] * z[b]
            r = cmax[b] * rz + rc * (z[b] + rz) + U * cz
            o = cz * gmax
            rout[b] = (r * gmax + U * o + U * (o + bmax)) * (1 + 8 * U) + ETA
