"""Labels of the truth table from float64 midpoints and radii, in parallel.

``midrad_labels`` is ``verify.model.certified.truth_table._labels_from_midrad`` fused with the tier
bookkeeping of the float64 stage: one pass over the strings instead of the numpy chain
(nextafter, comparisons, boolean masks), which took ~10 ms per 2^20 strings on one core.
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from verify._numba import kernel
from verify.model.stages.bundles import A1, f8, i8

I1 = types.Array(types.int8, 1, "C")
LABEL_UNDECIDED = -1
LABEL_UNCERTAIN = -2
_PIECES = 64  # work units of the parallel loop


@kernel(types.int8(f8, f8, f8, f8, f8, f8))
def _label(x, y, xi, tiny, above_minus_xi, below_xi):  # pragma: no cover - jitted
    """The label from x = fl(mid - rad), y = fl(mid + rad) (see ``midrad_labels``)."""
    lab = LABEL_UNCERTAIN
    if xi == 0.0:
        if x > tiny:  # lo > 0
            lab = 1
        if y < 0.0:  # hi <= 0
            lab = 0
    else:
        if x > xi:  # lo >= xi
            lab = 1
        if y < -xi:  # hi <= -xi
            lab = 0
        if x > above_minus_xi and y < below_xi:  # -xi < lo and hi < xi
            lab = LABEL_UNDECIDED
    return lab


def midrad_labels(
    mid: np.ndarray, rad: np.ndarray, xi: float, tier_value: int, label: np.ndarray,
    tier: np.ndarray,
) -> int:  # fmt: skip
    """label[k] from |T_k - mid[k]| <= rad[k]: the bounds lo = mid - rad and hi = mid + rad
    rounded one ulp outward, then (xi = 0) 1 if lo > 0, 0 if hi <= 0; (xi > 0) 1 if lo >= xi,
    0 if hi <= -xi, -1 if -xi < lo and hi < xi; else -2 (NaN included): the labels of
    ``truth_table._labels_from_midrad``. tier[k] = tier_value where the label is not -2 (left
    as it is elsewhere). Returns the number of -2 labels.

    With x = fl(mid - rad), y = fl(mid + rad), lo = pred(x), hi = succ(y) (pred, succ: the
    neighbouring floats; pred(-inf) = -inf, succ(inf) = inf), each test is one comparison of
    x or y with a float: pred(x) > c <=> x > succ(c), pred(x) >= c <=> x > c,
    succ(y) <= c <=> y < c (c = 0 too, as succ(-tiny) = -0.0), succ(y) < c <=> y < pred(c);
    NaN fails every test either way. This avoids two libm calls per string."""
    tiny = float(np.nextafter(0.0, 1.0))
    above_minus_xi = float(np.nextafter(-xi, np.inf))
    below_xi = float(np.nextafter(xi, -np.inf))
    return int(_labels(mid, rad, float(xi), tiny, above_minus_xi, below_xi, tier_value, label,
                       tier))  # fmt: skip


@kernel(i8(A1, A1, f8, f8, f8, f8, i8, I1, I1), parallel=True)
def _labels(
    mid, rad, xi, tiny, above_minus_xi, below_xi, tier_value, label, tier
):  # pragma: no cover
    """``midrad_labels`` in parallel pieces; returns the number of -2 labels."""
    n = mid.shape[0]
    pieces = min(n, _PIECES)
    open_counts = np.zeros(pieces, dtype=np.int64)
    for p in prange(pieces):
        k0 = p * n // pieces
        k1 = (p + 1) * n // pieces
        n_open = 0
        for k in range(k0, k1):
            lab = _label(mid[k] - rad[k], mid[k] + rad[k], xi, tiny, above_minus_xi, below_xi)
            label[k] = lab
            if lab == LABEL_UNCERTAIN:
                n_open += 1
            else:
                tier[k] = tier_value
        open_counts[p] = n_open
    return open_counts.sum()
