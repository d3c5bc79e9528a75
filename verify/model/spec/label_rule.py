"""Labels of T from rigorous bounds: the one label rule of every certified tier (the truth-table
tiers, the sub-cube pass, the constancy test).

The model's label is 1 iff T(x) > threshold (``ModelConfig.threshold``, 0 in the spec, step 7).
Every tier certifies the comparison of T with the threshold itself: the labels are read off an
enclosure of T(x) - threshold (:func:`relative_to_threshold`: the float64 difference, its
exact rounding error added to the radius), never off a model whose readout bias was edited.

With D(x) = T(x) - threshold: margin xi = 0: 1 if D > 0 is proven, 0 if D <= 0; margin xi > 0:
1 if D >= xi, 0 if D <= -xi, -1 (``LABEL_UNDECIDED``, certified) if -xi < D < xi; -2
(``LABEL_UNCERTAIN``) where the bounds settle none of these (NaN bounds included).
"""

from __future__ import annotations

import numpy as np

LABEL_UNDECIDED, LABEL_UNCERTAIN = -1, -2


def relative_to_threshold(
    mid: np.ndarray, rad: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """(mid', rad') with |(T - threshold) - mid'| <= rad' wherever |T - mid| <= rad.

    mid' = fl(mid - threshold), and its rounding error e = (mid - threshold) - mid' exactly, by
    Knuth's TwoSum (error-free in round-to-nearest, barring overflow, where mid' is infinite
    and e NaN: no label); rad' = rad where e = 0 (the difference was exact), else
    succ(fl(rad + |e|)), one ulp outward covering the rounding of the sum. threshold 0 returns
    the arrays unchanged."""
    if threshold == 0.0:
        return mid, rad
    a = np.asarray(mid, dtype=np.float64)
    b = -float(threshold)
    with np.errstate(invalid="ignore", over="ignore"):
        d = a + b
        b_virtual = d - a
        a_virtual = d - b_virtual
        err = np.abs((a - a_virtual) + (b - b_virtual))
        r = np.asarray(rad, dtype=np.float64)
        r = np.where(err == 0.0, r, np.nextafter(r + err, np.inf))
    return d, r


def _labels_from_bounds(lo: np.ndarray, hi: np.ndarray, margin: float) -> np.ndarray:
    """Label from rigorous bounds lo <= D <= hi; -2 where they do not settle it (NaN too)."""
    out = np.full(lo.shape, LABEL_UNCERTAIN, dtype=np.int8)
    if margin == 0.0:
        out[lo > 0] = 1
        out[hi <= 0] = 0
    else:
        out[lo >= margin] = 1
        out[hi <= -margin] = 0
        out[(lo > -margin) & (hi < margin)] = LABEL_UNDECIDED
    return out


def _labels_from_midrad(
    mid: np.ndarray, rad: np.ndarray, margin: float, threshold: float = 0.0
) -> np.ndarray:
    """Labels from a float64 midpoint and radius of T, |T - mid| <= rad, at ``threshold``
    (:func:`relative_to_threshold`; one ulp outward covers the rounding of mid -/+ rad)."""
    mid, rad = relative_to_threshold(mid, rad, threshold)
    with np.errstate(invalid="ignore"):
        lo = np.nextafter(mid - rad, -np.inf)
        hi = np.nextafter(mid + rad, np.inf)
    return _labels_from_bounds(lo, hi, margin)


def label_arb(t: object, margin: float, threshold: float = 0.0) -> int:
    """The label of an arb ball ``t`` enclosing T at ``threshold`` (t - threshold is an arb
    operation: its enclosure is rigorous)."""
    from flint import arb

    if not t.is_finite():
        return LABEL_UNCERTAIN
    if threshold != 0.0:
        t = t - arb(threshold)
    if margin == 0.0:
        if t > 0:
            return 1
        if t <= 0:
            return 0
        return LABEL_UNCERTAIN
    xi = arb(margin)
    if t >= xi:
        return 1
    if t <= -xi:
        return 0
    if t > -xi and t < xi:
        return LABEL_UNDECIDED
    return LABEL_UNCERTAIN


def predictions(t: np.ndarray, threshold: float) -> np.ndarray:
    """The model's own 0/1 predictions from its outputs ``t`` (any dtype): 1 iff t > threshold,
    compared in ``t``'s dtype against the threshold in float64 (NumPy promotes the comparison,
    so no rounding of the threshold enters)."""
    return (np.asarray(t) > np.float64(threshold)).astype(np.int8)
