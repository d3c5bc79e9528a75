"""Tests of the explicit small-ball bounds (verify.theory.small_ball), the tail statistics
(verify.checks.tail_fits) and the z samplers (verify.checks.ln_coefficients)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.boolean.sampling import clopper_pearson
from verify.checks.ln_coefficients import sample_conditional_z, sample_readout_z
from verify.checks.tail_fits import fit_tail_exponent, hill_estimator
from verify.errors import ValidationError
from verify.model import ModelConfig
from verify.theory.small_ball import (
    blowup_tail_bound,
    neighbourhood_blowup_bound,
    small_ball_constant,
    unit_ball_volume,
    variance_small_ball_bound,
)


def test_unit_ball_volume_known_values() -> None:
    assert unit_ball_volume(1) == pytest.approx(2.0)
    assert unit_ball_volume(2) == pytest.approx(math.pi)
    assert unit_ball_volume(3) == pytest.approx(4 * math.pi / 3)


@pytest.mark.parametrize("d_model", [2, 3, 5])
def test_small_ball_bound_dominates_monte_carlo(d_model: int) -> None:
    """d = c + b, b ~ Unif(cube of side a), c fixed and awkward: the empirical P[var <= delta]
    stays below the bound (SB) and the upper CI is of the same order at small delta."""
    rng = np.random.default_rng(1)
    a = 0.7
    c = rng.normal(size=d_model) * 0.1
    b = rng.uniform(0, a, size=(200_000, d_model))
    var = (c + b).var(axis=1)
    for delta in (1e-3, 1e-2):
        hits = int(np.count_nonzero(var <= delta))
        lo, _ = clopper_pearson(hits, var.size, confidence=0.999)
        bound = variance_small_ball_bound(delta, d_model, a)
        print(d_model, delta, hits / var.size, bound)
        assert lo <= bound


def test_small_ball_bound_is_attained_up_to_constant_in_d2() -> None:
    """D = 2: var(d) = (d1 - d2)^2 / 4 and d1 - d2 has the triangular density of peak 1/a, so
    P[var <= delta] -> 4 sqrt(delta) / a; the bound gives sqrt(2) V_1 sqrt(2) sqrt(delta) / a
    = 4 sqrt(delta) / a: tight."""
    assert small_ball_constant(2, 0.5) == pytest.approx(4 / 0.5)


def test_blowup_bounds_monotone_and_validated() -> None:
    vals = [blowup_tail_bound(t, 8, 1.0, 2, 9) for t in (2.0, 10.0, 100.0, 1e4)]
    assert all(x >= y for x, y in zip(vals, vals[1:], strict=False))
    assert blowup_tail_bound(1.0, 8, 1.0, 2, 9) == 1.0
    p = blowup_tail_bound(1e4, 8, 1.0, 2, 9)
    assert neighbourhood_blowup_bound(1e4, 8, 1.0, 2, 8, 8) == pytest.approx(min(1, 9 * p))
    with pytest.raises(ValidationError, match="k"):
        neighbourhood_blowup_bound(10.0, 8, 1.0, 2, 8, 9)
    with pytest.raises(ValidationError, match="side"):
        small_ball_constant(4, 0.0)


def test_tail_fit_recovers_pareto_index() -> None:
    rng = np.random.default_rng(3)
    a = 3.0
    z = rng.pareto(a, 40_000) + 1.0
    fit = fit_tail_exponent(z, seed=0)
    print(fit.alpha, fit.ci, fit.hill, fit.hill_ci)
    assert fit.ci[0] <= a <= fit.ci[1]
    assert fit.hill_ci[0] <= a <= fit.hill_ci[1]
    h, _ = hill_estimator(z, 500)
    assert abs(h - a) < 0.5


def test_conditional_sampler_matches_plain_sampler_in_law() -> None:
    """sample_conditional_z draws from the same law as sample_readout_z: compare medians of z
    (a coarse but honest check; both use theta ~ Unif[-1,1]^M)."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.0)
    bits = np.array([1, 0, 1], dtype=np.uint8)
    plain = sample_readout_z(cfg, bits, 400, box=1.0, seed=1)
    cond = sample_conditional_z(cfg, bits, 40, 200, box=1.0, seed=2).reshape(-1, cfg.n_norms)
    for k in range(cfg.n_norms):
        assert np.median(cond[:, k]) == pytest.approx(np.median(plain[:, k]), rel=0.25)
