"""The fused label kernel gives exactly the numpy labels (``truth_table._labels_from_midrad``)."""

from __future__ import annotations

import numpy as np
import pytest

from verify.model.certified.midrad_labels import midrad_labels
from verify.model.certified.truth_table import LABEL_UNCERTAIN, _labels_from_midrad


@pytest.mark.parametrize("xi", [0.0, 1e-3, 0.5])
def test_midrad_labels_match_numpy(xi: float) -> None:
    rng = np.random.default_rng(0)
    n = 5000
    mid = rng.normal(size=n) * rng.choice([1e-300, 1e-3, 1.0], size=n)
    rad = np.abs(rng.normal(size=n)) * rng.choice([0.0, 1e-16, 1e-3, 1.0], size=n)
    mid[:40] = [np.nan, np.inf, -np.inf, 0.0, -0.0, xi, -xi, 5e-324, -5e-324, 1.0] * 4
    rad[:40:3] = np.inf
    rad[1:40:3] = 0.0
    mid[40:50] = xi + rad[40:50]  # bounds on the margin
    tiny = np.nextafter(0.0, 1.0)
    edges = [0.0, tiny, 2 * tiny, 3 * tiny, xi, np.nextafter(xi, 1), np.nextafter(xi, -1)]
    edges += [np.nextafter(np.nextafter(xi, 1), 1), np.nextafter(np.nextafter(xi, -1), -1)]
    edges += [-e for e in edges] + [np.finfo(float).max, -np.finfo(float).max]
    for k, e in enumerate(edges):  # x = mid - rad and y = mid + rad on and next to each test
        mid[60 + 2 * k], rad[60 + 2 * k] = e, 0.0
        mid[61 + 2 * k], rad[61 + 2 * k] = e + 1.0, 1.0
    with np.errstate(over="ignore"):
        want = _labels_from_midrad(mid, rad, xi)
    label = np.full(n, 7, dtype=np.int8)
    tier = np.full(n, 4, dtype=np.int8)
    with np.errstate(all="ignore"):
        n_open = midrad_labels(mid, rad, xi, 0, label, tier)
    np.testing.assert_array_equal(label, want)
    assert n_open == np.count_nonzero(want == LABEL_UNCERTAIN)
    np.testing.assert_array_equal(tier, np.where(want == LABEL_UNCERTAIN, 4, 0))
