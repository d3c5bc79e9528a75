"""The named bounds of verify.theory: MAJORITY thresholds, the Chen-Stein radius; and every
explicit bound built from its parts by the statement's own definition, with golden values
computed independently (mpmath, or by hand)."""

from __future__ import annotations

import math

import mpmath
import pytest

from verify.boolean import exact_probability_some_zero_sensitive, make_family, sensitivity_profile
from verify.model import ModelConfig, init_params
from verify.theory import bounds, eps_zero_bounds, small_ball, zero_sensitivity
from verify.theory.majority import majority_k0_formula, majority_polynomial_threshold
from verify.theory.probability import ProbabilityError, checked_probability
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


# --------------------------------------------------------------------------------------------
# Every bound built from its parts, by the statement's own definition, and golden values
# computed independently (mpmath, or by hand) at a few points. tests/test_mutations.py runs
# these functions against weakened bounds: each must fail there.
# --------------------------------------------------------------------------------------------

POST_LN = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.01)  # K = 2 (norm1, norm2)
PRE_LN = ModelConfig(d_model=4, n_layers=2, n_heads=1, ln_eps=0.25, norm_first=True)  # K = 5


def _w_norm(p) -> float:
    return float(mpmath.norm(mpmath.matrix(p["readout.weight"].tolist())))


def test_lemma_3_2_bound_golden():
    """(1 + eps^-1/2)^K by hand: eps = 0.01, K = 2 -> 11^2; eps = 0.25, K = 5 -> 3^5."""
    assert bounds.lemma_3_2_bound(POST_LN) == pytest.approx(121.0, rel=1e-14, abs=0)
    assert bounds.lemma_3_2_bound(PRE_LN) == pytest.approx(243.0, rel=1e-14, abs=0)
    assert bounds.z_max(POST_LN) == pytest.approx(10.0, rel=1e-15, abs=0)


def test_cor_3_3_bound_from_parts():
    """Cor 3.3 = ||w|| C_infl (Lemma 3.2 bound)^2: Lemma 2.9 with beta(x), beta(x^n) each at
    most the Lemma 3.2 bound, times ||w|| (the readout)."""
    for cfg in (POST_LN, PRE_LN):
        for seed in range(2):
            p = init_params(cfg, "xavier_normal", seed)
            parts = _w_norm(p) * bounds.c_infl(p) * bounds.lemma_3_2_bound(cfg) ** 2
            assert bounds.cor_3_3_bound(p) == pytest.approx(parts, rel=1e-9, abs=0)
            # and Cor 3.4's N* = that / (2 xi)
            assert bounds.n_star(p, 0.05) == pytest.approx(parts / 0.1, rel=1e-9, abs=0)


def test_cor_3_3_bound_golden():
    """At eps = 0.01, K = 2 (one post-LN layer): the factor (1 + eps^-1/2)^(2K) = 11^4 = 14641,
    computed by hand; at eps = 0.25, K = 5: 3^10 = 59049."""
    for cfg, factor in ((POST_LN, 14641), (PRE_LN, 59049)):
        p = init_params(cfg, "uniform", 1)
        assert bounds.cor_3_3_bound(p) / (_w_norm(p) * bounds.c_infl(p)) == pytest.approx(
            factor, rel=1e-9
        )
        log10 = mpmath.log10(_w_norm(p) * bounds.c_infl(p) * factor / (2 * mpmath.mpf("0.1")))
        assert bounds.log10_n_star(p, 0.1) == pytest.approx(float(log10), abs=1e-9)


def test_cor_4_3_bound_from_parts():
    """Cor 4.3 = ||w|| C_infl N^(zeta-1): Lemma 2.9's bound with both blowups at the good
    event's N^(zeta/2), off the readout position, times ||w||."""
    for w, c, n, zeta in ((2.0, 3.0, 16, 0.9), (0.5, 1e4, 100, 0.5), (1.0, 7.0, 3, 1.5)):
        t = n ** (zeta / 2)
        parts = w * float(bounds.lemma_2_9_bound(c, t, t, n, False))
        assert eps_zero_bounds.cor_4_3_bound(w, c, n, zeta) == pytest.approx(
            parts, rel=1e-12, abs=0
        )
        assert eps_zero_bounds.good_event_blowup(n, zeta) == pytest.approx(t, rel=1e-14, abs=0)
        flip = eps_zero_bounds.cor_4_3_flip_bound(w, c, 1.5, 2.5, n)
        assert float(flip) == pytest.approx(w * c * 1.5 * 2.5 / n, rel=1e-14, abs=0)


def test_cor_4_3_bound_golden():
    """||w|| C_infl N^(zeta-1) in mpmath: 2 * 3 * 16^-0.1 and 0.5 * 1e4 * 100^-0.5 = 500."""
    golden = mpmath.mpf(6) * mpmath.power(16, mpmath.mpf("-0.1"))
    assert eps_zero_bounds.cor_4_3_bound(2.0, 3.0, 16, 0.9) == pytest.approx(float(golden))
    assert eps_zero_bounds.cor_4_3_bound(0.5, 1e4, 100, 0.5) == pytest.approx(
        500.0, rel=1e-12, abs=0
    )


def _mp_small_ball_constant(d: int, a) -> mpmath.mpf:
    k = d - 1
    v = mpmath.pi ** (mpmath.mpf(k) / 2) / mpmath.gamma(mpmath.mpf(k) / 2 + 1)
    return mpmath.sqrt(d) * v * (mpmath.mpf(d) / mpmath.mpf(a) ** 2) ** (mpmath.mpf(k) / 2)


def test_small_ball_constant_golden():
    """C_SB(2, 1) = sqrt2 * V_1 * 2^(1/2) = 4 (V_1 = 2) by hand; C_SB(3, 2) = 3 sqrt3 pi / 4."""
    assert small_ball.small_ball_constant(2, 1.0) == pytest.approx(4.0, rel=1e-14, abs=0)
    assert small_ball.small_ball_constant(3, 2.0) == pytest.approx(
        3 * math.sqrt(3) * math.pi / 4, rel=1e-13
    )
    assert small_ball.small_ball_constant(8, 0.5) == pytest.approx(
        float(_mp_small_ball_constant(8, "0.5")), rel=1e-12
    )


LEMMA_4_2_POINTS = ((1e4, 8, 2.0, 2, 16, 8), (1e6, 16, 1.0, 4, 64, 32), (50.0, 8, 2.0, 2, 8, 8))


def test_lemma_4_2_bound_from_parts():
    """Lemma 4.2 = min(1, p (1 + N/(N-k+1))) with p the tail bound P[beta > t] (the better of
    the union and sequential bounds), S = N + 1 positions with eos."""
    for t, d, side, k_norms, n, k in LEMMA_4_2_POINTS:
        p = min(
            small_ball.blowup_tail_bound_union(t, d, side, k_norms, n + 1),
            small_ball.blowup_tail_bound_sequential(t, d, side, k_norms, n + 1),
        )
        parts = min(1.0, p * (1.0 + n / (n - k + 1)))
        got = small_ball.neighbourhood_blowup_bound(t, d, side, k_norms, n, k)
        assert got == pytest.approx(parts, rel=1e-12, abs=0)
    assert small_ball.lemma_4_2_markov_factor(8, 4) == pytest.approx(1 + 8 / 5, rel=1e-15, abs=0)
    assert small_ball.lemma_4_2_markov_factor(8, 8) == pytest.approx(9.0, rel=1e-15, abs=0)


def test_lemma_4_2_bound_golden():
    """The whole bound in mpmath from the formulas (union: K S C_SB (t^(1/K) - 1)^-(D-1);
    sequential: Q(K, (D-1)(log t - K log(1 + (S C_SB)^(1/(D-1)))))), at points below 1."""
    for t, d, side, k_norms, n, k in LEMMA_4_2_POINTS[:2]:
        s = n + 1
        c = _mp_small_ball_constant(d, side)
        union = k_norms * s * c * (mpmath.power(t, mpmath.mpf(1) / k_norms) - 1) ** -(d - 1)
        u0 = mpmath.log(1 + (s * c) ** (mpmath.mpf(1) / (d - 1)))
        y = (d - 1) * (mpmath.log(t) - k_norms * u0)
        seq = mpmath.gammainc(k_norms, y, mpmath.inf, regularized=True) if y > 0 else 1
        golden = min(1, min(1, union, seq) * (1 + mpmath.mpf(n) / (n - k + 1)))
        assert golden < 1
        got = small_ball.neighbourhood_blowup_bound(t, d, side, k_norms, n, k)
        assert got == pytest.approx(float(golden), rel=1e-9, abs=0)


def test_theorem_4_5_exponent_golden():
    """Thm 4.5's exponent (D-1)/(2L) - 5 by hand: D = 16, L = 1 -> 2.5; D = 64, L = 2 -> 10.75."""
    assert zero_sensitivity.theorem_exponent(16, 1) == pytest.approx(2.5)
    assert zero_sensitivity.theorem_exponent(64, 2) == pytest.approx(10.75)


def test_probabilities_are_checked_where_computed():
    assert checked_probability("p", 0.25) == 0.25
    for bad in (-1e-12, 1.0 + 1e-12, 2.125, math.nan):
        with pytest.raises(ProbabilityError, match="p: a probability must lie in"):
            checked_probability("p", bad)


def _mp_bad_event_term(d: int, layers: int, n: int, box: float) -> mpmath.mpf:
    """a_N of Thm 4.5's bad event, from the formula (docs/derivations_eps_zero.md section 5)."""
    alpha, k = d - 1, 2 * layers
    e = mpmath.mpf(d - 1) / (2 * layers) - 5
    zeta = mpmath.mpf(d - 2) / (d - 1)
    c = _mp_small_ball_constant(d, 2 * box)
    n = mpmath.mpf(n)
    poly = sum((alpha * zeta * mpmath.log(n) / 2) ** j / mpmath.factorial(j) for j in range(k))
    return (
        2 * n**e * (n + 1) * mpmath.mpf(2) ** (alpha * k) * (1 + (n + 1) * c) ** k
        * n ** (-zeta * alpha / 2) * poly
    )  # fmt: skip


def test_bad_event_probability_bound_golden():
    """min(1, a_N) in mpmath at D = 16, L = 1, B = 1: ~1.7e-9 at N = 10^20, 1 at N = 10^6."""
    for n in (10**20, 10**40):
        golden = _mp_bad_event_term(16, 1, n, 1.0)
        assert golden < 1
        got = zero_sensitivity.bad_event_probability_bound(16, 1, n, 1.0)
        assert got == pytest.approx(float(golden), rel=1e-9, abs=0)
    assert _mp_bad_event_term(16, 1, 10**6, 1.0) > 1
    assert zero_sensitivity.bad_event_probability_bound(16, 1, 10**6, 1.0) == 1.0


def test_cor_4_3_threshold_golden_and_from_parts():
    """log10 N_0 = (log10(||w|| C_infl) - log10(2 xi)) / (1 - zeta) by hand: ||w|| C = 1e3,
    xi = 0.05, zeta = 0.5 -> (3 + 1) / 0.5 = 8; and from Cor 4.3's bound: just past N_0 the
    bound ||w|| C N^(zeta-1) is below 2 xi, just before it is above."""
    assert eps_zero_bounds.log10_cor_4_3_threshold(3.0, 0.05, 0.5) == pytest.approx(8.0, abs=1e-12)
    for w, c, xi, zeta in ((2.0, 500.0, 0.05, 0.5), (1.0, 40.0, 0.1, 0.8)):
        log_n0 = eps_zero_bounds.log10_cor_4_3_threshold(math.log10(w * c), xi, zeta)
        above, below = int(10**log_n0 * 1.01) + 1, int(10**log_n0 * 0.99)
        assert eps_zero_bounds.cor_4_3_bound(w, c, above, zeta) < 2 * xi
        assert eps_zero_bounds.cor_4_3_bound(w, c, below, zeta) > 2 * xi


def test_cor_4_6_bound_from_parts():
    """Cor 4.6's finite-N bound: a_N past N_0, 1 below N_0 (and never above 1)."""
    a = zero_sensitivity.bad_event_probability_bound(16, 1, 10**20, 1.0)
    assert eps_zero_bounds.cor_4_6_recognition_bound(10**20, 19.0, a) == a
    assert eps_zero_bounds.cor_4_6_recognition_bound(10**20, 21.0, a) == 1.0
    assert eps_zero_bounds.cor_4_6_recognition_bound(8, 0.5, 3.0) == 1.0


def test_lemma_3_1_bound_golden():
    """C_Lip ||dtheta||: 250 * 0.004 = 1 by hand."""
    assert bounds.lemma_3_1_bound(250.0, 0.004) == pytest.approx(1.0, rel=1e-15, abs=0)


def test_lemma_3_2_per_layer_bound_golden():
    """The paper's (1 + eps^-1/2)^L by hand: eps = 0.01, L = 1 -> 11; eps = 0.25, L = 2 -> 9;
    and from parts: the per-norm bound with K replaced by L."""
    assert bounds.lemma_3_2_per_layer_bound(POST_LN) == pytest.approx(11.0, rel=1e-14, abs=0)
    assert bounds.lemma_3_2_per_layer_bound(PRE_LN) == pytest.approx(9.0, rel=1e-14, abs=0)
    per_norm = bounds.lemma_3_2_bound(PRE_LN) ** (PRE_LN.n_layers / PRE_LN.n_norms)
    assert bounds.lemma_3_2_per_layer_bound(PRE_LN) == pytest.approx(per_norm, rel=1e-12, abs=0)


def test_theorem_4_5_bound_golden():
    """N^e by hand: D = 16, L = 1 (e = 2.5), N = 16 -> 1024; D = 22, L = 1 (e = 5.5), N = 4
    -> 2048."""
    assert zero_sensitivity.theorem_bound(16, 1, 16) == pytest.approx(1024.0, rel=1e-14, abs=0)
    assert zero_sensitivity.theorem_bound(22, 1, 4) == pytest.approx(2048.0, rel=1e-14, abs=0)
