"""Float64 bounds of 2-norms, of the layer norm's Lipschitz constant and of the annotated
layer norm's coefficient 1 / (std + eps), shared by the float64 kernels (``layer_norm``,
``stage_l2``, the exhaustive driver) and the double-double ones (``dd_l2``, which explains the
Lipschitz rules, ``dd_norm``); here on their own so that the float64 kernels do not import (and
compile) the double-double arithmetic, nor the double-double ones the float64 kernels.
"""

from __future__ import annotations

import math

import numpy as np

from verify._numba import kernel
from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import b1, f8, i8

SQ_SLACK = 1e-300  # added to sums of squares: covers squares that underflow (n 2^-1074 each)


@kernel(f8(f8, f8, f8, f8, i8, f8, b1, f8))
def lipschitz_from_sums(ss, se, sc, rho, d, eps, annotated, gmax):  # pragma: no cover - jitted
    """The bound of ``layer_norm_lipschitz`` for one string from its sums over the d rows:
    ss = sum c_i^2, se = sum (|a_i| + |c_i|), sc = sum c_i (a_i, c_i as there). With t <=
    |P v| on the ball: torch's form max|gain| / sqrt(t^2 / d + eps), the annotated form
    max|gain| / (t / sqrt(d - 1) + eps) (``dd_l2.layer_norm_lipschitz`` derives both)."""
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
    if annotated:  # t / sqrt(d - 1) rounded down (3 roundings), plus eps, rounded down
        den = (t / math.sqrt(d - 1) * (1 - 3 * U) + eps) * (1 - U)
        if den > 0:
            return gmax / den * (1 + 2 * U)
        return np.inf
    den = (t * t / d * (1 - 3 * U) + eps) * (1 - U)
    if den > 0:
        return gmax / (math.sqrt(den) * (1 - 2 * U)) * (1 + 2 * U)
    return np.inf


@kernel(f8(f8, i8))
def l2_from_squares(sq, n):  # pragma: no cover - jitted
    """An upper bound of sqrt(sum of n squares a_i^2) from their float64 sum sq (in any order;
    n + 4 roundings, and SQ_SLACK for squares that underflow)."""
    return math.sqrt(sq * (1 + (n + 4) * U) + SQ_SLACK) * (1 + 2 * U)


@kernel(f8(f8, f8, f8))
def sqrt_ball_radius(q_low, rq, s):  # pragma: no cover - jitted
    """A bound of |sqrt(q_exact) - sqrt(q)| for exact q, q_exact >= 0 with |q_exact - q| <= rq,
    given q_low <= q and s within a relative 2U of sqrt(q): with low = max(q - rq, 0), it is
    at most min(rq / (sqrt(low) + sqrt(q)), sqrt(rq)) (the linear term away from 0, the
    square-root term near it; ``arith.MidRadContext.sqrt_nonneg``), rounded up."""
    low = max(q_low - rq, 0.0) * (1 - 2 * U)
    den = (math.sqrt(low) + s) * (1 - 4 * U)
    lin = np.inf
    if den > 0:
        lin = rq / den * (1 + U)
    return min(lin, math.sqrt(rq) * (1 + 2 * U))


@kernel(f8(f8, f8, f8, f8, f8, f8, f8))
def inverse_std_radius(q_low, rq, s, s_err, t_low, t_err, z_err):  # pragma: no cover - jitted
    """A bound of |1 / (sqrt(q_exact) + eps) - z| (the annotated form's coefficient) for the
    computed unbiased variance q (q_low <= q), square root s (a float64 within a relative 2U of
    sqrt(q)), t ~ s + eps (t_low <= t) and z ~ 1 / t, given |q_exact - q| <= rq, |s - sqrt(q)|
    <= s_err, |t - (s + eps)| <= t_err and |z - 1 / t| <= z_err: r_s = ``sqrt_ball_radius`` +
    s_err, r_t = (r_s + t_err)(1 + 2U) >= |t_exact - t|, and with low = t_low - r_t > 0 (<=
    t_exact), |1/t_exact - 1/t| <= r_t / (t_low low), plus z_err; inf when the ball of t
    reaches 0. The float64 and double-double kernels differ only in the rounding errors."""
    rs = (sqrt_ball_radius(q_low, rq, s) + s_err) * (1 + U)
    rt = (rs + t_err) * (1 + 2 * U)
    low = (t_low - rt) * (1 - U)
    if low > 0:
        return rt / (t_low * low) * (1 + 4 * U) + z_err
    return np.inf
