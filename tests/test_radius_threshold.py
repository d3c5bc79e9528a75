"""Soundness of the threshold shift (issue 40), in exact arithmetic: the enclosure of
T(x) - threshold that every tier labels (``verify.model.spec.label_rule.relative_to_threshold``)
contains every exact difference. A soundness file of the radius mutation suite
(tests/test_radius_mutations.py): its mutants of the shift (``_radius_mutants``, issue 40's
block) must fail here."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from verify.model.spec.label_rule import relative_to_threshold


def _exact_enclosed(mid: float, rad: float, thr: float, d: float, r: float) -> bool:
    """Every real in [mid - rad, mid + rad], minus thr, lies in [d - r, d + r] (exactly)."""
    lo = Fraction(mid) - Fraction(rad) - Fraction(thr)
    hi = Fraction(mid) + Fraction(rad) - Fraction(thr)
    return Fraction(d) - Fraction(r) <= lo and hi <= Fraction(d) + Fraction(r)


def test_relative_to_threshold_encloses_the_exact_difference() -> None:
    """Random values over 40 decades and adversarial ones (differences that round, cancel,
    underflow); a difference that rounds must widen the radius (else the exact value falls
    outside: counted, so that the test sees such cases)."""
    rng = np.random.default_rng(0)
    mids = list(rng.normal(size=300) * 10.0 ** rng.integers(-20, 20, size=300))
    thrs = list(rng.normal(size=300) * 10.0 ** rng.integers(-20, 20, size=300))
    rads = list(np.abs(rng.normal(size=300)) * rng.choice([0.0, 1e-17, 1e-3], size=300))
    mids += [2.0**53, 1.0, 0.1, 5e-324, 1e300, 0.5 + 2**-52, 1.0, 3.0]
    thrs += [0.5, 1.0 - 2**-53, 0.3, -5e-324, -1e300, 0.5, 2.0**-60, -(2.0**-60)]
    rads += [0.0] * 8
    rounded = 0
    for mid, thr, rad in zip(mids, thrs, rads, strict=True):
        d, r = relative_to_threshold(np.array([mid]), np.array([rad]), thr)
        assert _exact_enclosed(mid, rad, thr, float(d[0]), float(r[0])), (mid, thr, rad)
        if not _exact_enclosed(mid, rad, thr, float(d[0]), rad):
            rounded += 1
    assert rounded > 100


def test_an_exact_difference_keeps_the_radius() -> None:
    """Sterbenz: t/2 <= mid <= 2t makes mid - t exact, so the radius is not widened (a label at
    the threshold is decided by the enclosure of T alone)."""
    mid = np.array([0.75, 1.0, 0.5 + 2**-40])
    rad = np.array([1e-3, 0.0, 2**-50])
    d, r = relative_to_threshold(mid, rad, 0.5)
    np.testing.assert_array_equal(d, mid - 0.5)
    np.testing.assert_array_equal(r, rad)
