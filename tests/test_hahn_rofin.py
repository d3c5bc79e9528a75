"""Hahn & Rofin's statements (H&R Cor 5, H&R Thm 6): the bounds, and checks that can fail.

A check that cannot fail checks nothing: each mutation below weakens the toolkit's explicit
constant (drops the blowup factor, divides the constant, halves the noise probability) and the
statement's own check must then report a violation. Counterexamples of the mutated runs go to
a temporary folder.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import verify.registry.counterexamples as counterexamples
from verify.boolean import make_family
from verify.boolean.function import all_bit_strings
from verify.checks.hahn_rofin import measure_tradeoff
from verify.model import ModelConfig, init_params
from verify.registry import CheckContext, Status, run_check
from verify.theory import hahn_rofin as hr
from verify.validation import ValidationError

COR_5 = "H&R Cor 5"
THM_6 = "H&R Thm 6"
ADVERSARIAL = "adversarial search (Hypothesis, target = ratio)"
CORNER = "construction (layer-norm corner, DICTATOR on the readout bit)"
RANDOM = "random parameters of the four init schemes"
EQUALITY = "noise on one bias, constant norm input (equality case)"


@pytest.fixture
def scratch_counterexamples(tmp_path, monkeypatch):
    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    return tmp_path


def _run(statement: str, check: str):
    return run_check(statement, check, CheckContext(budget="quick", seed=0))


def test_cor_5_checks_hold_unmutated(scratch_counterexamples) -> None:
    for check in (ADVERSARIAL, RANDOM, CORNER):
        result = _run(COR_5, check)
        print(result.summary())
        assert result.status is Status.HOLDS
    assert not list(scratch_counterexamples.iterdir())


def test_cor_5_dropping_the_blowup_factor_is_caught(scratch_counterexamples, monkeypatch) -> None:
    """Without beta^2 in E[beta^2 omega_f] the bound is too small: the adversarial search (and
    the random models) report a violation and leave a counterexample."""
    original = hr.cor_5_bound

    def no_blowup(w_norm, c_infl, beta, omega, weights=None):
        return original(w_norm, c_infl, np.ones_like(beta), omega, weights)

    monkeypatch.setattr(hr, "cor_5_bound", no_blowup)
    result = _run(COR_5, ADVERSARIAL)
    print(result.summary())
    assert result.status is Status.VIOLATED
    assert result.counterexample is not None
    assert any(scratch_counterexamples.glob("h_r_cor_5*.npz"))
    assert _run(COR_5, RANDOM).status is Status.VIOLATED


def test_cor_5_a_quarter_of_the_constant_is_caught(scratch_counterexamples, monkeypatch) -> None:
    """The search reaches more than a quarter of the bound (quick budget); a constant 4x
    smaller fails."""
    original = hr.cor_5_bound
    monkeypatch.setattr(hr, "cor_5_bound", lambda *a, **k: original(*a, **k) / 4.0)
    assert _run(COR_5, ADVERSARIAL).status is Status.VIOLATED


def test_cor_5_half_of_the_constant_is_caught(scratch_counterexamples, monkeypatch) -> None:
    """The DICTATOR layer-norm corner reaches N / (N + 1) of ||w|| C_infl E[beta^2 omega_f]
    (Lemma 2.9 tight on the readout bit, omega_f = 1/N + 1 at every string): half the bound
    fails for N >= 2. The c_r form's factor 2 is what the weight omega_f recovers."""
    result = _run(COR_5, CORNER)
    print(result.summary())
    assert result.status is Status.HOLDS
    worst = max(r.measured / r.bound for r in result.rows)
    assert worst > 0.5
    original = hr.cor_5_bound
    monkeypatch.setattr(hr, "cor_5_bound", lambda *a, **k: original(*a, **k) / 2.0)
    halved = _run(COR_5, CORNER)
    print(halved.summary())
    assert halved.status is Status.VIOLATED


def test_thm_6_halved_probability_is_caught(scratch_counterexamples, monkeypatch) -> None:
    """In the equality case the measured frequency sits at F: the point estimates scatter
    around the bound (undecided when one lies above it inside its interval, never violated);
    half of F is refuted (an interval entirely above the bound)."""
    plain = _run(THM_6, EQUALITY)
    assert plain.status in (Status.HOLDS, Status.UNDECIDED)
    assert all(r.ok or not r.decisive for r in plain.rows)
    assert all(r.ci[0] <= r.measured <= r.ci[1] for r in plain.rows)
    original = hr.noise_variance_probability
    monkeypatch.setattr(hr, "noise_variance_probability", lambda *a: original(*a) / 2.0)
    result = _run(THM_6, EQUALITY)
    print(result.summary())
    assert result.status is Status.VIOLATED


def test_noise_variance_probability_is_the_chi_square_cdf() -> None:
    """var(delta) of delta ~ N(0, sigma^2 I_D) is sigma^2 chi^2_{D-1} / D (population variance):
    Monte Carlo against the formula, and the threshold inverts it."""
    rng = np.random.default_rng(0)
    d, sigma = 6, 0.3
    v = (sigma * rng.standard_normal((200_000, d))).var(axis=1)
    for prob in (0.1, 0.5, 0.9):
        t = hr.noise_variance_threshold(d, sigma, prob)
        assert hr.noise_variance_probability(d, sigma, t) == pytest.approx(prob, rel=1e-9)
        assert np.mean(v <= t) == pytest.approx(prob, abs=0.005)
    assert hr.noise_variance_probability(d, sigma, 0.0) == 0.0
    assert stats.chi2.cdf(1.0, d - 1) == pytest.approx(
        hr.noise_variance_probability(d, sigma, sigma**2 / d)
    )


def test_cor_5_bound_algebra() -> None:
    assert hr.cor_5_as_bound(2.0, 3.0, 5.0, 0.5) == pytest.approx(30.0)
    omega = hr.cor_5_omega(np.array([2, 0]), np.array([True, False]), 4)
    assert omega.tolist() == pytest.approx([1.5, 0.0])
    beta = np.array([2.0, 3.0])
    assert hr.cor_5_bound(2.0, 3.0, beta, omega) == pytest.approx(2 * 3 * (4 * 1.5) / 2)
    assert hr.log10_cor_5_bound(2.0, np.log10(3.0), beta, omega) == pytest.approx(np.log10(18))
    assert hr.cor_5_required_blowup(4.0, 0.5, 2.0, 3.0) == pytest.approx(4.0 / 6.0)
    assert hr.log10_cor_5_as_bound(2.0, np.log10(3.0), 5.0, 0.5) == pytest.approx(np.log10(30.0))
    assert hr.blowup_cap(0.25, 0.0, 2) == pytest.approx(9.0)


@pytest.mark.parametrize("n", [3, 5, 9])
def test_dictator_corner_classes_match_exhaustive(n: int) -> None:
    """The class-by-class E_x of the DICTATOR corner (used at N >= 64) against the exhaustive
    measurement over all 2^N strings."""
    from verify.statements.hr_cor_5 import dictator_corner, dictator_corner_by_classes

    _, m = dictator_corner(n)
    c = dictator_corner_by_classes(n)
    assert m is not None and c is not None
    assert m.avg_sensitivity == pytest.approx(c["avg_sensitivity"])
    assert m.xi == pytest.approx(c["xi"], rel=1e-12)
    assert m.bound == pytest.approx(c["bound"], rel=1e-12)


@pytest.mark.parametrize("eos", [True, False])
def test_measure_tradeoff_sums_by_hand(eos: bool) -> None:
    """The edge sums, omega_f and as_N of measure_tradeoff against a direct loop over the bit
    strings (the readout bit is the last position when there is no eos)."""
    cfg = ModelConfig(d_model=8, n_layers=1, n_heads=2, ln_eps=1e-3, eos=eos)
    p = init_params(cfg, "gaussian", 4)
    from verify.model import forward

    n = 4
    bits = all_bit_strings(n)
    index = {tuple(row): i for i, row in enumerate(bits.tolist())}
    res = forward(p, bits, diagnostics=True)
    bias = -float(np.median(res.y_readout @ p["readout.weight"]))
    m = measure_tradeoff(p, n, readout=(p["readout.weight"], bias))
    t = res.y_readout @ p["readout.weight"] + bias
    f = t > 0
    dt = prods = sens = weighted = 0.0
    for i in range(2**n):
        omega = 0.0
        for pos in range(n):
            flipped = bits[i].copy()
            flipped[pos] ^= 1
            j = index[tuple(flipped.tolist())]
            if f[i] != f[j]:
                weight = 1.0 / n + (1.0 if pos == n - 1 and not eos else 0.0)
                sens += 1
                dt += abs(t[i] - t[j])
                prods += res.beta[i] * res.beta[j] * weight
                omega += weight
        weighted += res.beta[i] ** 2 * omega / 2**n
    assert m.avg_sensitivity == pytest.approx(sens / 2**n)
    assert m.sensitive_dT == pytest.approx(dt)
    assert m.sensitive_beta_products == pytest.approx(prods)
    assert m.mean_beta_sq_omega == pytest.approx(weighted)
    assert m.bound <= m.bound_c_r
    assert m.xi == pytest.approx(np.min(np.abs(t)))
    assert m.lhs <= m.bound
    # the caller's forward pass serves (check-model passes its own): the same measurement
    assert measure_tradeoff(p, n, readout=(p["readout.weight"], bias), result=res) == m
    for wrong in (forward(p, bits), forward(p, all_bit_strings(n + 1), diagnostics=True)):
        with pytest.raises(ValidationError, match="result"):
            measure_tradeoff(p, n, result=wrong)


@pytest.mark.parametrize("function", ["parity", "sparse_parity", "majority", "first", "dictator"])
def test_training_targets_are_the_families(function: str) -> None:
    from verify.experiments.train import family_params, target_labels

    for n in range(1, 9):
        f = make_family(function, n, **family_params(function, n))
        assert np.array_equal(target_labels(function, all_bit_strings(n)), f.table), (function, n)


def test_blowup_cap_union_over_norms_and_positions() -> None:
    """The cap's probability is K S F (union over norms and positions), capped at 1, and the
    threshold inverts it."""
    d, k, s, sigma = 16, 4, 11, 0.02
    t = hr.noise_cap_threshold(d, k, s, sigma, 0.5)
    assert hr.noise_beta_cap_probability(d, k, s, sigma, t) == pytest.approx(0.5)
    assert hr.noise_beta_cap_probability(d, k, s, sigma, 1.0) == 1.0
    # the cap grows slowly with S: below an explicit C S^{K/(D-1)} (docs/derivations_hahn_rofin.md)
    for s in (1, 10, 1000, 10**6):
        cap = hr.blowup_cap(hr.noise_cap_threshold(d, k, s, sigma, 0.5), 0.0, k)
        assert cap <= hr.noise_cap_growth(d, k, s, sigma, 0.5)
        assert cap >= hr.noise_cap_growth(d, k, s, sigma, 0.5) / 100


def test_slow_training_checks_on_a_tiny_grid(monkeypatch, scratch_counterexamples) -> None:
    """The --full checks of both statements (the training experiment, figures in the report),
    run on a tiny stand-in grid: Cor 5 rows on every model, Thm 6 figures per function."""
    pytest.importorskip("torch")
    from verify.experiments import train

    tiny = train.TrainSettings(
        d_model=8, n_layers=1, d_ff=16, steps=60, batch=32, max_len=8, sharpness_repeats=2,
        sharpness_strings=16, exhaustive_max=5, tradeoff_max=4,
    )  # fmt: skip
    monkeypatch.setitem(train.CHECK_GRIDS, "full", (("parity", "first"), (3, 5), tiny))
    monkeypatch.setattr(train, "_PARAMS", {})
    ctx = CheckContext(budget="full", seed=0)
    cor5 = run_check(COR_5, "training experiment (D=16, L=2, N up to 18)", ctx)
    print(cor5.summary())
    # every row within its bound; the trained models' bounds exceed the trivial swing bound
    # (2 xi as_N <= swing as_N), so the rows are vacuous, never "holds"
    assert cor5.status is Status.VACUOUS and all(r.ok and r.vacuous for r in cor5.rows)
    assert len(cor5.rows) == 4  # two models with N <= tradeoff_max, two rows each
    assert {f.name for f in cor5.figures} >= {"hr_cor_5_beta_mean", "hr_cor_5_beta_hr_mean"}
    thm6 = run_check(THM_6, "training experiment: sharpness and blowup against N (D=16, L=2)", ctx)
    print(thm6.summary())
    assert thm6.status in (Status.HOLDS, Status.UNDECIDED, Status.VACUOUS)
    names = {f.name for f in thm6.figures}
    assert {"hr_thm_6_accuracy", "hr_thm_6_as_model"} <= names
    assert any("| parity | 5 |" in n for n in thm6.notes)
