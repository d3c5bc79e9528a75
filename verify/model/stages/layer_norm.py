"""Layer norm with a rigorous radius: the shared moments and the radius of the coefficient z,
the componentwise rule (per-string kernel) and the scalar rule (exhaustive kernel).

Both forms of ``verify.model.spec.ln_forms`` run through the same kernels, chosen by the flag
``annotated``: out_i = gain_i c_i z + bias_i with c = v - mean and z = 1 / sqrt(var + eps)
(torch, var = ss / d) or z = 1 / (sqrt(ss / (d - 1)) + eps) (annotated), ss = sum_i c_i^2.
Only z and its radius (:func:`coefficient_radius`) depend on the form.

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
from verify.model.stages.l2_bounds import inverse_std_radius
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


@kernel(f8(f8, f8, f8, i8, b1))
def ln_coefficient(ss, var, eps, d, annotated):  # pragma: no cover - jitted
    """z from ss = sum_i c_i^2 and var = ss / d (both as computed): 1 / sqrt(var + eps), or
    annotated 1 / (sqrt(ss / (d - 1)) + eps); inf or NaN where the denominator is 0."""
    if annotated:
        return 1.0 / (math.sqrt(ss / (d - 1)) + eps)
    return 1.0 / math.sqrt(var + eps)


@kernel(types.void(A2, f8, b1, i8, A2, A2))
def layer_norm_moments(v, eps, annotated, nb, out, ls):  # pragma: no cover - jitted
    """Per string b < nb (axis 1): ls[LS_MEAN] and ls[LS_VAR] the mean and biased variance of v
    over axis 0 (ls[LS_SS] = d var), the centred values into out, and ls[LS_Z] the coefficient
    z of the form (:func:`ln_coefficient`; inf or NaN when its denominator is 0). When nb is
    the whole width and a multiple of 8 the sums run in registers (``register_sums.ln_block``,
    the same operations)."""
    d = v.shape[0]
    if nb % LANES == 0 and nb == v.shape[1]:
        # no affine map: gain, bias unread
        ln_block(v, out, ls, ls[0], ls[0], eps, 0, 0, 1 if annotated else 0)
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
        z[b] = ln_coefficient(ls[LS_SS, b], var[b], eps, d, annotated)


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


@kernel(f8(f8, f8, f8, i8, f8))
def annotated_radius(ss, eps, acc, d, z):  # pragma: no cover - jitted
    """A bound of |z_exact - z| for the annotated form's z = 1 / (sqrt(q) + eps), q = ss /
    (d - 1) the unbiased variance (ss = sum_i c_i^2 as computed, d >= 2), when the exact
    centred values' errors contribute acc = sum_i (2 |c_i| r_i + r_i^2) to sum_i c_i^2:
    r_q covers acc / (d - 1) and the rounding of ss and q (as ``rsqrt_radius`` covers var's,
    with d - 1 for d); then ``l2_bounds.inverse_std_radius`` with the float64 roundings U s
    of the square root, U t of s + eps and 2 U z of 1 / t."""
    dm1 = d - 1
    q = ss / dm1
    rq = ((acc + (d + 2) * U * ss) / dm1 + 2 * U * q) * (1 + (d + 4) * U) + ETA
    s = math.sqrt(q)
    t = s + eps
    return inverse_std_radius(q, rq, s, U * s, t, U * t, 2 * U * z)


@kernel(f8(f8, f8, f8, f8, i8, f8, b1))
def coefficient_radius(var, ss, eps, acc, d, z, annotated):  # pragma: no cover - jitted
    """A bound of |z_exact - z| for the coefficient z of the form (:func:`ln_coefficient`):
    ``annotated_radius`` or ``rsqrt_radius``."""
    if annotated:
        return annotated_radius(ss, eps, acc, d, z)
    return rsqrt_radius(var, eps, acc, d, z)


@kernel(types.void(A2, A2, A1, A1, f8, b1, A2, A2, A2, b1))
def layer_norm(v, rv, gain, bias, eps, annotated, out, rout, ls, bounds):  # pragma: no cover
    """out = gain * (v - mean) z + bias over axis 0, per string (axis 1), z of the form
    (``annotated``, :func:`ln_coefficient`), with componentwise radii rout from rv.

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
    layer_norm_moments(v, eps, annotated, nb, out, ls)
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
            rz[b] = coefficient_radius(var[b], ls[LS_SS, b], eps, acc[b], d, z[b], annotated)
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


@kernel(types.void(A2, A1, A1, A1, f8, f8, f8, b1, A2, A1, A2, b1))
def layer_norm_scalar(
    v, rv, gain, bias, gmax, bmax, eps, annotated, out, rout, ls, bounds
):  # pragma: no cover
    """out = gain (v - mean) z + bias over axis 0 (z of the form, :func:`ln_coefficient`) for a
    block of BS strings, with one radius per string (rv in, rout out). On return ls[LS_Z]
    holds z and, with bounds, ls[LS_RZ] a bound of its error and ls[LS_SS], ls[LS_SC],
    ls[LS_CSUM] the sums of ``dd_l2.lipschitz_from_sums``. The radius follows the
    componentwise rule of ``layer_norm`` with |c_i| <= max|c|, sum |c_i|, |gain| <= gmax,
    |bias| <= bmax; a variance enclosure reaching 0 gives an infinite radius. The moments,
    the sums of the bound and the affine map are one pass in registers
    (``register_sums.ln_block``)."""
    d = v.shape[0]
    mean = ls[LS_MEAN]
    var = ls[LS_VAR]
    z = ls[LS_Z]
    sabs = ls[LS_SABS]
    cmax = ls[LS_CMAX]
    csum = ls[LS_CSUM]
    ln_block(v, out, ls, gain, bias, eps, 1 if bounds else 0, 1, 1 if annotated else 0)
    if bounds:
        for b in range(BS):
            rmean = (rv[b] + (d + 1) * U * sabs[b] / d + 2 * U * abs(mean[b])) * (1 + (d + 4) * U)
            rc = (rv[b] + rmean + U * cmax[b]) * (1 + 3 * U)
            acc = 2 * rc * csum[b] + d * rc * rc
            rz = coefficient_radius(var[b], ls[LS_SS, b], eps, acc, d, z[b], annotated)
            ls[LS_RZ, b] = rz
            cz = cmax[b] * z[b]
            r = cmax[b] * rz + rc * (z[b] + rz) + U * cz
            o = cz * gmax
            rout[b] = (r * gmax + U * o + U * (o + bmax)) * (1 + 8 * U) + ETA
