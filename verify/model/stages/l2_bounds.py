"""Float64 bounds of 2-norms and of the layer norm's Lipschitz constant, shared by the float64
stages with 2-norm radii (``stage_l2``, the exhaustive driver) and the double-double ones
(``dd_l2``, which explains the rules); here on their own so that the float64 kernels do not
import (and compile) the double-double arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

from verify._numba import kernel
from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import f8, i8

SQ_SLACK = 1e-300  # added to sums of squares: covers squares that underflow (n 2^-1074 each)


@kernel(f8(f8, f8, f8, f8, i8, f8, f8))
def lipschitz_from_sums(ss, se, sc, rho, d, eps, gmax):  # pragma: no cover - jitted
    """The bound of ``layer_norm_lipschitz`` for one string from its sums over the d rows:
    ss = sum c_i^2, se = sum (|a_i| + |c_i|), sc = sum c_i (a_i, c_i as there)."""
    e1 = se * U * (1 + (2 * d + 4) * U)
    nc = math.sqrt(max(ss * (1 - (d + 3) * U) - SQ_SLACK, 0.0)) * (1 - 2 * U)
    nx = (nc - e1) * (1 - U)
    t = 0.0
    if nx > 0:
        sx = (abs(sc) + (d + 2) * U * se + e1) * (1 + 2 * U)
        p2 = (nx * nx * (1 - U) - sx * sx / d * (1 + 3 * U)) * (1 - U)
        if p2 > 0:
            t = math.sqrt(p2) * (1 - 2 * U)
            t = (t - rho) * (1 - U)
    if not t > 0:  # also NaN
        t = 0.0
    den = (t * t / d * (1 - 3 * U) + eps) * (1 - U)
    if den > 0:
        return gmax / (math.sqrt(den) * (1 - 2 * U)) * (1 + 2 * U)
    return np.inf


@kernel(f8(f8, i8))
def l2_from_squares(sq, n):  # pragma: no cover - jitted
    """An upper bound of sqrt(sum of n squares a_i^2) from their float64 sum sq (in any order;
    n + 4 roundings, and SQ_SLACK for squares that underflow)."""
    return math.sqrt(sq * (1 + (n + 4) * U) + SQ_SLACK) * (1 + 2 * U)
