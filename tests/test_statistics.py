"""Statistics through scipy: the same numbers as the hand-written versions they replaced where
the method is the same (Clopper-Pearson, least-squares slopes), and where the numbers differ
(a bootstrap resamples with another random stream) the same method within Monte Carlo error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from verify.boolean import clopper_pearson
from verify.checks.certified_k0 import fit_growth
from verify.checks.summaries import loglog_fit, loglog_slope, mean_ci
from verify.checks.tail_fits import fit_tail_exponent


def _beta_quantile_interval(hits: int, trials: int, confidence: float) -> tuple[float, float]:
    """The hand-written Clopper-Pearson interval the toolkit used before (beta quantiles)."""
    a = 1 - confidence
    lo = 0.0 if hits == 0 else float(stats.beta.ppf(a / 2, hits, trials - hits + 1))
    hi = 1.0 if hits == trials else float(stats.beta.ppf(1 - a / 2, hits + 1, trials - hits))
    return lo, hi


@pytest.mark.parametrize("trials", [1, 2, 7, 30, 60, 1000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99, 0.999])
def test_clopper_pearson_from_binomtest_equals_the_beta_quantiles(trials, confidence):
    for hits in sorted({0, 1, trials // 3, trials // 2, trials - 1, trials}):
        if 0 <= hits <= trials:
            got = clopper_pearson(hits, trials, confidence)
            want = _beta_quantile_interval(hits, trials, confidence)
            assert got == pytest.approx(want, abs=1e-11), (hits, trials, confidence)


def test_loglog_fit_is_polyfit_with_the_textbook_standard_error():
    ns = [8, 16, 32, 64, 128]
    ys = [0.098, 0.0229, 0.0528, 0.0645, 0.0831]
    slope, se = loglog_fit(ns, ys)
    x, y = np.log(ns), np.log(ys)
    want = np.polyfit(x, y, 1)
    assert slope == pytest.approx(want[0], rel=1e-12) and loglog_slope(ns, ys) == slope
    resid = y - np.polyval(want, x)
    textbook = math.sqrt(resid @ resid / (len(x) - 2) / ((x - x.mean()) @ (x - x.mean())))
    assert se == pytest.approx(textbook, rel=1e-10)
    assert math.isnan(loglog_fit([2, 4], [1.0, 3.0])[1])  # two points: no standard error


def test_fit_growth_same_numbers_as_polyfit():
    ns = [4, 5, 6, 7, 8, 9]
    k0 = [11.0, 32.0, 60.0, 99.7, 198.0, 380.0]
    fit = fit_growth(ns, k0)
    y = np.log(k0)
    for name, x in (("exponential", np.asarray(ns, float)), ("polynomial", np.log(ns))):
        coef, res, *_ = np.polyfit(x, y, 1, full=True)
        assert fit[f"{name}_rate"] == pytest.approx(coef[0], rel=1e-12)
        assert fit[f"{name}_sse"] == pytest.approx(res[0], rel=1e-9)
        assert fit[f"{name}_rate_stderr"] > 0
    assert fit["exponential_base"] == pytest.approx(math.exp(fit["exponential_rate"]))


def _old_percentile_bootstrap(z: np.ndarray, fit, n_boot: int, seed: int, alpha: float):
    """The hand-written percentile bootstrap of the tail slope fit_tail_exponent used before."""
    rng = np.random.default_rng(seed)
    s_grid = fit.s_grid

    def slope(sorted_z):
        surv = 1.0 - np.searchsorted(sorted_z, s_grid, side="right") / sorted_z.size
        ok = surv > 0
        if np.count_nonzero(ok) < 2:
            return math.nan
        return -float(np.polyfit(np.log(s_grid[ok]), np.log(surv[ok]), 1)[0])

    boots = np.array([slope(np.sort(rng.choice(z, z.size))) for _ in range(n_boot)])
    return float(np.nanquantile(boots, alpha / 2)), float(np.nanquantile(boots, 1 - alpha / 2))


def test_tail_fit_bootstrap_through_scipy_matches_the_old_bootstrap():
    """Same estimate (least squares) and the same percentile bootstrap: scipy's resamples
    come from the same seeded stream, so the CI is the old one."""
    rng = np.random.default_rng(3)
    z = (1 - rng.random(4000)) ** (-1 / 3.0)  # Pareto tail, exponent 3
    fit = fit_tail_exponent(z, seed=1, n_boot=400)
    surv = fit.survival
    ok = surv > 0
    alpha_ls = -np.polyfit(np.log(fit.s_grid[ok]), np.log(surv[ok]), 1)[0]
    assert fit.alpha == pytest.approx(alpha_ls, rel=1e-12)
    old = _old_percentile_bootstrap(z, fit, 400, 1, 0.05)
    # scipy draws each resample's indices as rng.integers(0, n, n), as rng.choice(z, n) did,
    # and takes the same percentiles: the same numbers up to the fit's rounding
    assert fit.ci == pytest.approx(old, rel=1e-9)
    assert fit.ci[0] < 3.0 < fit.ci[1]
    # the scipy resamples are seeded: the same seed gives the same interval
    assert fit_tail_exponent(z, seed=1, n_boot=400).ci == fit.ci


def test_mean_ci_is_the_student_t_interval():
    v = np.array([11.0, 32.0, 1.0, 60.0, 52.0, 43.0])
    lo, hi = mean_ci(v)
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)  # by hand
    assert (lo, hi) == pytest.approx((v.mean() - half, v.mean() + half), rel=1e-12)
    assert mean_ci([16.0, 16.0, 16.0]) == (16.0, 16.0)  # no spread: the value itself
    assert all(math.isnan(e) for e in mean_ci([3.0]))  # one value says nothing about the spread


def test_sharpness_standard_error_is_scipys_sem():
    """gaussian_sharpness's standard error (scipy.stats.sem) equals the former
    std(ddof=1) / sqrt(repeats) of the same loss increments (recomputed here)."""
    from verify.boolean import make_family
    from verify.boolean.function import all_bit_strings
    from verify.checks.hahn_rofin import gaussian_sharpness, perturbed
    from verify.model import ModelConfig, forward, init_params

    params = init_params(ModelConfig(d_model=8, n_layers=1, ln_eps=0.1), "uniform", seed=0)
    bits = all_bit_strings(4)
    targets = make_family("parity", 4).table
    mean, se, base = gaussian_sharpness(params, bits, targets, sigma=0.02, repeats=6, seed=1)
    y = np.where(targets > 0, 1.0, -1.0)
    rng = np.random.default_rng(1)
    incs = np.array(
        [np.mean((forward(perturbed(params, 0.02, rng), bits).T - y) ** 2) - base for _ in range(6)]
    )
    assert mean == pytest.approx(incs.mean(), rel=1e-12)
    assert se == pytest.approx(np.std(incs, ddof=1) / math.sqrt(6), rel=1e-12)
