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
from verify.model.arithmetic.rounding import ETA, EXP_ULPS, TINY, U
from verify.model.stages.bundles import A1, A2, b1, f8, i8


@kernel(f8(f8))
def expm1_upper(x):  # pragma: no cover - jitted
    """An upper bound of expm1(x) for x >= 0 (x / (1 - x) on [0, 1/2), libm with EXP_ULPS)."""
    if x < 0.5:  # expm1(x) <= x / (1 - x) on [0, 1): no libm call
        return x / (1 - x) * (1 + 4 * U)
    return math.expm1(x) * (1 + EXP_ULPS * U)


@kernel(f8(f8, f8))
def exp_radius(bigv, rd):  # pragma: no cover - jitted
    """A radius of ev = fl(exp(a)) for every exponent within rd of a: |exp(a + da) - ev| <=
    bigv (expm1(rd) + EXP_ULPS U) for |da| <= rd, with bigv >= exp(a), rounded up."""
    return bigv * (expm1_upper(rd) + EXP_ULPS * U) * (1 + 4 * U) + ETA


@kernel(f8(f8, f8, f8, f8))
def quotient_radius(r, p, rtot, gap):  # pragma: no cover - jitted
    """A radius of p = fl(e / tot) when e has radius r, tot has radius rtot (the radii of all
    terms) and gap <= the exact denominator: ((r + p (1 + U) rtot) / gap + U p)(1 + 4U), or
    inf when gap <= 0 (the denominator's enclosure reaches 0)."""
    if gap > 0:
        return ((r + p * (1 + U) * rtot) / gap + U * p) * (1 + 4 * U)
    return np.inf


@kernel(f8(f8, f8, i8))
def total_radius(rsum, tot, s):  # pragma: no cover - jitted
    """A radius of the float64 sum tot of s exponentials whose radii sum to rsum: rsum plus
    the sum's rounding gamma_{s+1} tot, rounded up."""
    return (rsum + (s + 1) * U * tot) * (1 + (s + 4) * U)


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
                pr[j, b] = exp_radius(ev * (1 + EXP_ULPS * U) + TINY, rd)
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
            rtot[b] = total_radius(rtot[b], tot[b], s)
            gap[b] = (tot[b] - rtot[b]) * (1 - U)
    for j in range(s):
        for b in range(nb):
            p = pm[j, b] / tot[b]
            pm[j, b] = p
            if bounds:
                pr[j, b] = quotient_radius(pr[j, b], p, rtot[b], gap[b])


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


@kernel(types.void(A2, A2, f8, A1, A1, i8, A2, A1, A1))
def softmax_rounding(pm, scores, cm, mx, tot, s, out, rtot, gap):  # pragma: no cover - jitted
    """After ``scaled_softmax`` (pm: the computed p; mx, tot: its shift and denominator;
    scores: the unscaled scores it was given), out[j] >= |p_j(a) - p~_j| at the computed
    scaled scores a = fl(cm scores) themselves (zero score radius): the rounding of the
    softmax alone. The same rules as ``scaled_softmax`` with the exponentials bounded from the
    computed p: e_j = fl(exp(a_j - mx)) and p_j = fl(e_j / tot) give e_j <= fl(p_j tot)(1 + 5U)
    (+ (s + 1) TINY for underflow, as tot <= s). rtot, gap: scratch (nb,)."""
    nb = pm.shape[1]
    for b in range(nb):
        rtot[b] = 0.0
    for j in range(s):
        for b in range(nb):
            dv = scores[j, b] * cm - mx[b]
            ev = (pm[j, b] * tot[b] * (1 + 5 * U) + (s + 1) * TINY) * (1 + U)  # >= fl(exp(dv))
            rd = U * abs(dv) * (1 + 2 * U)
            out[j, b] = exp_radius(ev * (1 + EXP_ULPS * U) + TINY, rd)
            rtot[b] += out[j, b]
    for b in range(nb):
        rtot[b] = total_radius(rtot[b], tot[b], s)
        gap[b] = (tot[b] - rtot[b]) * (1 - U)
    for j in range(s):
        for b in range(nb):
            out[j, b] = quotient_radius(out[j, b], pm[j, b], rtot[b], gap[b])
