"""The sampled estimator and the random-function probabilities."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from verify.boolean import (
    clopper_pearson,
    count_no_zero_sensitive,
    estimate_profile,
    exact_probability_some_zero_sensitive,
    make_family,
    monte_carlo_probability_some_zero_sensitive,
    sensitivity_profile,
)
from verify.boolean.kernels import packed_rows_have_zero_sensitive, rows_have_zero_sensitive
from verify.boolean.random_functions import brute_force_count_no_zero_sensitive, random_tables
from verify.errors import ValidationError


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))  # closed form at 0 hits
    lo, hi = clopper_pearson(10, 10, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    lo, hi = clopper_pearson(50, 100, 0.95)
    assert lo < 0.5 < hi and hi - lo < 0.21
    with pytest.raises(ValidationError, match="confidence"):
        clopper_pearson(1, 2, 1.0)
    with pytest.raises(ValidationError, match="hits"):
        clopper_pearson(3, 2)


@pytest.mark.parametrize("family", ["majority", "random", "mod", "sparse_majority"])
def test_sampled_profile_covers_exact_profile(family):
    f = make_family(family, 11)
    exact = sensitivity_profile(f) / 2**11
    est = estimate_profile(f, samples=5000, seed=7, confidence=0.999)
    assert est.counts.sum() == 5000
    assert np.all(est.ci_low <= exact) and np.all(exact <= est.ci_high)
    mean_lo, mean_hi = est.average_sensitivity_ci
    assert mean_lo <= float(np.dot(np.arange(12), exact)) <= mean_hi


def test_sampled_estimator_is_seeded_and_handles_large_n_callables():
    n = 1500
    parity = estimate_profile(lambda b: b.sum(axis=1) % 2, n, samples=40, seed=1)
    assert parity.counts[n] == 40 and parity.ci(n)[1] == 1.0
    first = estimate_profile(lambda b: b[:, 0], n, samples=40, seed=1)
    assert first.counts[1] == 40
    a = estimate_profile(make_family("random", 9, seed=3), samples=300, seed=11)
    b = estimate_profile(make_family("random", 9, seed=3), samples=300, seed=11)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_sampled_estimator_validates():
    with pytest.raises(ValidationError, match="n"):
        estimate_profile(lambda b: b[:, 0])
    with pytest.raises(ValidationError, match="f"):
        estimate_profile(lambda b: b.sum(axis=1), 5, samples=10)  # outputs not 0/1
    with pytest.raises(ValidationError, match="samples"):
        estimate_profile(lambda b: b[:, 0], 5, samples=0)
    with pytest.raises(ValidationError, match="f"):
        estimate_profile("parity", 5)


def _numpy_count_no_zero_sensitive(n: int) -> int:
    """Independent oracle: every table on n bits as rows, s(x) = 0 tested with numpy."""
    size = 1 << n
    codes = np.arange(1 << size, dtype=np.int64)
    tables = ((codes[:, None] >> np.arange(size)[None, :]) & 1).astype(np.uint8)
    same = np.ones_like(tables, dtype=bool)
    for i in range(n):
        same &= tables == tables[:, np.arange(size) ^ (1 << i)]
    return int(np.count_nonzero(~same.any(axis=1)))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_exact_counts_agree_with_brute_force(n):
    oracle = _numpy_count_no_zero_sensitive(n)
    assert count_no_zero_sensitive(n) == oracle
    assert count_no_zero_sensitive(n, use_symmetry=False) == oracle
    assert brute_force_count_no_zero_sensitive(n) == oracle


def test_exact_probability_known_small_values():
    assert exact_probability_some_zero_sensitive(1) == Fraction(1, 2)  # constants only
    assert exact_probability_some_zero_sensitive(2) == Fraction(5, 8)  # 6 of 16 have none
    p5 = exact_probability_some_zero_sensitive(5)
    assert 0.5 < p5 < 1 - math.exp(-1)
    with pytest.raises(ValidationError, match="N"):
        exact_probability_some_zero_sensitive(6)


def test_packed_and_byte_kernels_agree():
    rng = np.random.default_rng(2)
    for n in (6, 7, 10):
        tables = random_tables(rng, 500, n)
        words = np.ascontiguousarray(np.packbits(tables, axis=1, bitorder="little").view("<u8"))
        np.testing.assert_array_equal(
            packed_rows_have_zero_sensitive(words, n), rows_have_zero_sensitive(tables, n)
        )
        direct = [sensitivity_profile(t)[0] > 0 for t in tables[:50]]
        np.testing.assert_array_equal(rows_have_zero_sensitive(tables[:50].copy(), n), direct)


def test_monte_carlo_is_seeded_and_covers_exact():
    a = monte_carlo_probability_some_zero_sensitive(4, 3000, seed=9)
    b = monte_carlo_probability_some_zero_sensitive(4, 3000, seed=9)
    assert a == b
    exact = float(exact_probability_some_zero_sensitive(4))
    assert a.ci[0] <= exact <= a.ci[1]
    with pytest.raises(ValidationError, match="N"):
        monte_carlo_probability_some_zero_sensitive(21, 10, seed=0)
