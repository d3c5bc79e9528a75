"""Labels of T from rigorous bounds, shared by the truth-table tiers and the sub-cube pass.

Margin xi = 0: 1 if T > 0 is proven, 0 if T <= 0; margin xi > 0: 1 if T >= xi, 0 if T <= -xi,
-1 (``LABEL_UNDECIDED``, certified) if -xi < T < xi; -2 (``LABEL_UNCERTAIN``) where the bounds
settle none of these (NaN bounds included).
"""

from __future__ import annotations

import numpy as np

LABEL_UNDECIDED, LABEL_UNCERTAIN = -1, -2


def _labels_from_bounds(lo: np.ndarray, hi: np.ndarray, margin: float) -> np.ndarray:
    """Label from rigorous bounds lo <= T <= hi; -2 where they do not settle it (NaN too)."""
    out = np.full(lo.shape, LABEL_UNCERTAIN, dtype=np.int8)
    if margin == 0.0:
        out[lo > 0] = 1
        out[hi <= 0] = 0
    else:
        out[lo >= margin] = 1
        out[hi <= -margin] = 0
        out[(lo > -margin) & (hi < margin)] = LABEL_UNDECIDED
    return out


def _labels_from_midrad(mid: np.ndarray, rad: np.ndarray, margin: float) -> np.ndarray:
    """Labels from a float64 midpoint and radius: |T - mid| <= rad (one ulp outward covers the
    rounding of mid -/+ rad)."""
    with np.errstate(invalid="ignore"):
        lo = np.nextafter(mid - rad, -np.inf)
        hi = np.nextafter(mid + rad, np.inf)
    return _labels_from_bounds(lo, hi, margin)
