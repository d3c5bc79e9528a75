"""The tail fit's thresholds (verify.checks.tail_fits): the grid's ends are the order statistics
themselves, so the survival counts there are exact and the fit does not move when the samples
move by an ulp (float64 rounding differs between machines: numpy's AVX-512 exp/log or not).
Before, s_grid = exp(linspace(log s_lo, log s_hi)) rounded the ends up or down, and the sample
at an end fell on either side: Thm 4.5's D=5, L=2 tail row read 11/400 on one machine and
10/400 on another, and its fitted exponent 3.90 against 4.18."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from verify.checks.blowup_tails import beta_tail_rows, sample_beta
from verify.checks.tail_fits import THRESHOLD_TRUST, fit_tail_exponent, margin_note
from verify.model import ModelConfig


def _pareto(seed: int, n: int = 400, a: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 5.0 * (1 - rng.random(n)) ** (-1 / a)


def _ulp_jitter(z: np.ndarray, seed: int) -> np.ndarray:
    """Every sample moved by one ulp up or down (at random): what another machine's rounding
    does to the same draws."""
    up = np.random.default_rng(seed).random(z.size) < 0.5
    return np.where(up, np.nextafter(z, np.inf), np.nextafter(z, -np.inf))


@pytest.mark.parametrize("seed", range(20))
def test_grid_ends_are_the_order_statistics_and_their_counts_exact(seed):
    z = _pareto(seed)
    fit = fit_tail_exponent(z, seed=seed, n_boot=20)
    zs, n = np.sort(z), z.size
    assert fit.s_grid[0] == zs[n - fit.k - 1]
    assert fit.s_grid[-1] == zs[n - 10 - 1]
    assert round(fit.survival[0] * n) == fit.k
    assert round(fit.survival[-1] * n) == 10  # min_count samples remain above the top
    assert np.all(np.diff(fit.s_grid) > 0)
    assert fit.margin > THRESHOLD_TRUST and margin_note("x", fit) == []


@pytest.mark.parametrize("seed", range(20))
def test_fit_is_unchanged_by_one_ulp_perturbations_of_the_samples(seed):
    z = _pareto(seed)
    fit = fit_tail_exponent(z, seed=seed, n_boot=50)
    moved = fit_tail_exponent(_ulp_jitter(z, seed + 100), seed=seed, n_boot=50)
    np.testing.assert_array_equal(moved.survival, fit.survival)
    assert moved.alpha == pytest.approx(fit.alpha, rel=1e-9)
    assert moved.ci == pytest.approx(fit.ci, rel=1e-9)


def test_thm_4_5_d5_l2_tail_row_is_the_same_under_one_ulp_perturbations():
    """The row that flipped between machines (quick budget, seed 0: grid index 4): the
    fitted exponent and P[beta > t_top] are the same for the betas moved by an ulp."""
    cfg = ModelConfig(d_model=5, n_layers=2, n_heads=1, ln_eps=0.0)
    betas = sample_beta(cfg, np.array([1, 0, 1], dtype=np.uint8), 400, box=1.0, seed=4)
    rows, _ = beta_tail_rows(cfg, betas, seed=4, confidence=0.95)
    for s in range(3):
        moved, _ = beta_tail_rows(cfg, _ulp_jitter(betas, s), seed=4, confidence=0.95)
        assert moved[2].measured == rows[2].measured == 10 / 400
        assert moved[0].measured == pytest.approx(rows[0].measured, rel=1e-9)
        assert moved[0].ci == pytest.approx(rows[0].ci, rel=1e-9)


def test_margin_is_the_distance_of_the_interior_thresholds_to_the_samples():
    z = _pareto(0)
    fit = fit_tail_exponent(z, seed=0, n_boot=20)
    inner = fit.s_grid[1:-1]
    brute = np.min(np.abs(z[:, None] - inner[None, :]) / inner[None, :])
    assert fit.margin == pytest.approx(brute, rel=1e-12)
    assert margin_note("x", replace(fit, margin=0.0))  # a threshold on a sample is flagged


def _sorted_slope(sorted_z: np.ndarray, s_grid: np.ndarray) -> float:
    """The oracle: the fit's slope from the sorted resample (searchsorted), as first written."""
    from scipy import stats

    surv = 1.0 - np.searchsorted(sorted_z, s_grid, side="right") / sorted_z.size
    ok = surv > 0
    if np.count_nonzero(ok) < 2:
        return float("nan")
    return -float(stats.linregress(np.log(s_grid[ok]), np.log(surv[ok])).slope)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("clustered", [False, True])
def test_bootstrap_counts_give_the_sorted_resamples_fit(seed, clustered):
    """The bootstrap counts each resample's samples at or below each threshold (per group, summed
    over the groups drawn) instead of sorting it: the CI is the sorted resamples' to the bit,
    with ties among the samples (rounded draws) and repeated groups."""
    from scipy import stats

    rng = np.random.default_rng(100 + seed)
    z = np.round(_pareto(seed, n=3000), 1 + seed % 3)  # ties at several levels
    groups = rng.integers(0, 60, z.size) if clustered else None
    fit = fit_tail_exponent(z, tail_fraction=0.05, seed=seed, n_boot=60, groups=groups)
    boot_rng = np.random.default_rng(seed)
    if clustered:
        ids, inverse = np.unique(groups, return_inverse=True)
        members = [np.flatnonzero(inverse == g) for g in range(ids.size)]
        boots = []
        for _ in range(60):
            pick = boot_rng.integers(0, ids.size, ids.size)
            sample = z[np.concatenate([members[g] for g in pick])]
            boots.append(_sorted_slope(np.sort(sample), fit.s_grid))
        boots = np.array(boots)
    else:
        res = stats.bootstrap(
            (z,),
            lambda sample: _sorted_slope(np.sort(sample), fit.s_grid),
            n_resamples=60,
            vectorized=False,
            method="percentile",
            confidence_level=0.95,
            rng=boot_rng,
        )
        boots = np.asarray(res.bootstrap_distribution, dtype=float)
    ci = (float(np.nanquantile(boots, 0.025)), float(np.nanquantile(boots, 0.975)))
    assert fit.ci == ci
    assert fit.alpha == _sorted_slope(np.sort(z), fit.s_grid)


@pytest.mark.parametrize("seed", range(30))
def test_least_squares_line_is_scipys_linregress_to_the_bit(seed):
    from scipy import stats

    from verify.checks.tail_fits import least_squares_line

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    x = np.sort(rng.normal(size=n)) * 10.0 ** rng.integers(-3, 4)
    y = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4) + rng.normal() * x
    ref = stats.linregress(x, y)
    assert least_squares_line(x, y) == (float(ref.slope), float(ref.intercept))


def test_least_squares_line_refuses_equal_x():
    from verify.checks.tail_fits import least_squares_line

    with pytest.raises(ValueError, match="identical"):
        least_squares_line(np.ones(4), np.arange(4.0))
