"""The rigorous softmax, written once for the per-string and the exhaustive kernels.

Scores come as (s, nb) arrays pm (midpoints) and pr (radii), one string per column. The softmax
subtracts the float64 maximum of the score midpoints, an exact constant (softmax is invariant
under it), exponentiates with a radius from |exp(a + da) - exp(a)| <= exp(a) expm1(|da|), and
normalises with a radius that needs the denominator's enclosure to stay away from 0.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import A1, A2, b1, f8, i8
from verify.model.rounding import ETA, EXP_ULPS, TINY, U


@kernel(types.void(A2, A2, A1, A1, A1, i8, i8, b1))
def softmax_exponentials(pm, pr, mx, tot, rtot, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: e_j = exp(pm[j] - mx) (mx, the float64 maximum of the score
    midpoints, or 0 where it is not finite) and tot = sum_j e_j; with bounds, pr[j] becomes a
    radius of e_j (|exp(a + da) - exp(a)| <= exp(a) expm1(|da|), expm1(x) <= x / (1 - x) for
    x < 1/2, exp within EXP_ULPS ulps,
    TINY for underflow) and rtot = sum_j pr[j]."""
    for b in range(nb):
        if not np.isfinite(mx[b]):
            mx[b] = 0.0
        tot[b] = 0.0
        rtot[b] = 0.0
    for j in range(s):
        for b in range(nb):
            dv = pm[j, b] - mx[b]
            ev = math.exp(dv)
            if bounds:
                rd = (pr[j, b] + U * abs(dv)) * (1 + 2 * U)
                bigv = ev * (1 + EXP_ULPS * U) + TINY  # >= exp(dv)
                if rd < 0.5:  # expm1(x) <= x / (1 - x) on [0, 1): no libm call
                    em = rd / (1 - rd) * (1 + 4 * U)
                else:
                    em = math.expm1(rd) * (1 + EXP_ULPS * U)
                re = bigv * (em + EXP_ULPS * U)
                pr[j, b] = re * (1 + 4 * U) + ETA
                rtot[b] += pr[j, b]
            pm[j, b] = ev
            tot[b] += ev


@kernel(types.void(A2, A2, A1, A1, A1, i8, i8, b1))
def softmax_normalise(pm, pr, tot, rtot, gap, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: p_j = e_j / tot. With bounds, rtot (the radii of the e_j summed)
    also covers the rounding of the sum (gamma_{s+1}), gap = a lower bound of the exact
    denominator, and pr[j] = ((r_j + p_j (1 + U) rtot) / gap + U p_j) (1 + 4U), or inf when
    gap <= 0 (the denominator's enclosure reaches 0)."""
    if bounds:
        for b in range(nb):
            rtot[b] = (rtot[b] + (s + 1) * U * tot[b]) * (1 + (s + 4) * U)
            gap[b] = (tot[b] - rtot[b]) * (1 - U)
    for j in range(s):
        for b in range(nb):
            p = pm[j, b] / tot[b]
            pm[j, b] = p
            if bounds:
                if gap[b] > 0:
                    pr[j, b] = ((pr[j, b] + p * (1 + U) * rtot[b]) / gap[b] + U * p) * (1 + 4 * U)
                else:
                    pr[j, b] = np.inf


@kernel(types.void(A2, A2, f8, A1, A1, A1, A1, i8, i8, b1))
def scaled_softmax(pm, pr, cm, mx, tot, rtot, gap, s, nb, bounds):  # pragma: no cover - jitted
    """In place, per string b: p = softmax over j of cm pm[j] (cm = 1/sqrt(d_h)), shifted by
    the float64 maximum of the scaled scores (an exact constant: softmax is invariant under
    it). On entry pr[j] bounds the error of the scaled score; on return that of p_j."""
    for b in range(nb):
        mx[b] = -np.inf
    for j in range(s):
        for b in range(nb):
            sc = pm[j, b] * cm
            pm[j, b] = sc
            if sc > mx[b]:
                mx[b] = sc
    softmax_exponentials(pm, pr, mx, tot, rtot, s, nb, bounds)
    softmax_normalise(pm, pr, tot, rtot, gap, s, nb, bounds)
