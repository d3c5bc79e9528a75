"""verify.theory.majority and verify.theory.random_functions: MAJORITY thresholds, the
Chen-Stein radius."""

from __future__ import annotations

import math

import pytest

from verify.boolean import exact_probability_some_zero_sensitive, make_family, sensitivity_profile
from verify.theory.majority import majority_k0_formula, majority_polynomial_threshold
from verify.theory.random_functions import chen_stein_radius


@pytest.mark.parametrize("tie", ["zero", "one"])
def test_majority_formula_matches_kernel(tie):
    for n in range(1, 15):
        assert (
            majority_k0_formula(n, tie)
            == sensitivity_profile(make_family("majority", n, tie=tie))[0]
        )


@pytest.mark.parametrize("c", range(1, 11))
def test_majority_threshold_is_minimal_and_holds_far_beyond(c):
    n_star, n_tail = majority_polynomial_threshold(c)
    assert n_star <= n_tail
    if n_star > 1:
        assert majority_k0_formula(n_star - 1) <= (n_star - 1) ** c
    # independent of the tail argument: exact integers far past the scan end
    for n in range(n_star, n_tail + 400):
        assert majority_k0_formula(n) >= (1 << n) - 2 * math.comb(n, n // 2)  # tail bound
        assert majority_k0_formula(n) > n**c


def test_chen_stein_radius_covers_exact_values_and_shrinks():
    limit = 1 - math.exp(-1)
    for n in range(1, 6):
        assert abs(float(exact_probability_some_zero_sensitive(n)) - limit) <= chen_stein_radius(n)
    radii = [chen_stein_radius(n) for n in range(8, 30)]
    assert all(b < a for a, b in zip(radii, radii[1:], strict=False)) and radii[-1] < 1e-5
