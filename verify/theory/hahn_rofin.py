"""Explicit bounds for Hahn & Rofin (arXiv 2402.09963), as the toolkit reconstructs them.

Their theorem texts were not at hand (docs/reference: only abstracts, summaries and their code);
a third-party review names the norm-blowup trade-off "Corollary 5" and the sharpness result
"Theorem 6". The toolkit states and derives its own explicit versions
(docs/derivations_hahn_rofin.md); every function here is plain arithmetic on numbers a check
measures or a summary computes.

- **H&R Cor 5 (trade-off)**: if T recognises f on {0,1}^N with margin xi (|T(x)| >= xi, sign
  as f), then ``2 xi as_N(f) <= ||w|| C_infl(theta) E_x[beta(x)^2 omega_f(x)]`` with
  ``omega_f(x) = |S_f(x)| / N + [r <= N and r in S_f(x)]`` (S_f(x) the sensitive coordinates
  of x, r the readout position), C_infl the explicit constant of Lemma 2.9
  (verify.theory.bounds) and beta the paper's blowup prod_k max_n (1 + z^k_n)
  (:func:`cor_5_bound`). Since omega_f <= c_r (1 with eos, 2 with the readout on the last
  bit), ``2 xi as_N(f) <= c_r ||w|| C_infl E_x[beta^2]`` follows (:func:`cor_5_as_bound`). For
  PARITY (as_N = N) the blowup or the parameter norms must grow linearly in N.
- **H&R Thm 6 (sharpness, mechanism)**: Gaussian noise N(0, sigma^2) on a bias added right
  before a layer norm (or on any set of parameters that contains one) caps that norm's
  coefficient in probability, for every input and position (the bound does not depend on N):
  ``P[var(d + delta) <= t] <= F_{chi^2_{D-1}}(t D / sigma^2)`` (Anderson's inequality), so
  ``P[beta'(x) >= (1 + (t + eps)^{-1/2})^K] <= min(1, K S F_{chi^2_{D-1}}(t D / sigma^2))``
  for an input with S positions. Since F(u) <= (u/2)^{(D-1)/2} / Gamma((D+1)/2), the cap at
  probability 1/2 is at most a constant times S^{K/(D-1)} (:func:`noise_cap_growth`), while a
  fit of PARITY needs E[beta^2] growing like N (Cor 5, at bounded norms): for D > 2K + 1 such
  noise destroys the blowup PARITY needs, so the loss increase under noise (H&R's sharpness)
  cannot vanish as N grows.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import stats

from verify.theory.probability import checked_probability
from verify.validation import check_int, check_real

__all__ = [
    "blowup_cap",
    "cor_5_as_bound",
    "cor_5_bound",
    "cor_5_omega",
    "cor_5_edge_bound",
    "cor_5_required_blowup",
    "log10_cor_5_as_bound",
    "log10_cor_5_bound",
    "noise_beta_cap_probability",
    "noise_cap_growth",
    "noise_cap_threshold",
    "noise_variance_probability",
    "noise_variance_threshold",
]


# ----------------------------------------------------------------------------- Cor 5
def cor_5_omega(n_sensitive: np.ndarray, readout_sensitive: np.ndarray, n_bits: int) -> np.ndarray:
    """omega_f(x) = |S_f(x)| / N + [r <= N and r in S_f(x)], per string: the sum over the
    sensitive coordinates n of x of Lemma 2.9's weight 1/N + delta_{r,n}. ``n_sensitive``:
    |S_f(x)|; ``readout_sensitive``: whether the readout sits on an input bit (no eos) and that
    bit is sensitive at x. At most c_r = 1 + [r <= N]."""
    n = check_int("N", n_bits, minimum=1)
    return np.asarray(n_sensitive, dtype=float) / n + np.asarray(readout_sensitive, dtype=float)


def _mean_beta_sq_omega(beta, omega, weights) -> float:
    b = np.asarray(beta, dtype=float)
    return float(np.average(b * b * np.asarray(omega, dtype=float), weights=weights))


def cor_5_bound(
    w_norm: float, c_infl: float, beta: np.ndarray, omega: np.ndarray, weights=None
) -> float:
    """H&R Cor 5 (toolkit's form): ``2 xi as_N(f) <= ||w|| C_infl E_x[beta(x)^2 omega_f(x)]``;
    returns the right-hand side from the per-string blowup beta(x) and weight omega_f(x)
    (:func:`cor_5_omega`): the mean over the 2^N strings given, or, with ``weights``, over
    classes of strings with those probabilities. inf when C_infl overflows."""
    if not math.isfinite(float(c_infl)):
        return math.inf
    return float(w_norm) * float(c_infl) * _mean_beta_sq_omega(beta, omega, weights)


def log10_cor_5_bound(
    w_norm: float, log10_c_infl: float, beta: np.ndarray, omega: np.ndarray, weights=None
) -> float:
    """:func:`cor_5_bound` in log10 (finite where C_infl exceeds float64)."""
    mean = _mean_beta_sq_omega(beta, omega, weights)
    return float(mpmath.log10(w_norm) + log10_c_infl + mpmath.log10(mean))


def cor_5_as_bound(w_norm: float, c_infl: float, mean_beta_sq: float, xi: float) -> float:
    """H&R Cor 5, the weaker c_r form divided by c_r (omega_f <= c_r in :func:`cor_5_bound`):
    as_N(f) <= c_r ||w|| C_infl E_x[beta(x)^2] / (2 xi); this returns it without c_r,
    ||w|| C_infl E_x[beta(x)^2] / (2 xi) (inf when C_infl overflows)."""
    xi = check_real("xi", xi, strictly_positive=True)
    return float(w_norm) * float(c_infl) * float(mean_beta_sq) / (2.0 * xi)


def log10_cor_5_as_bound(
    w_norm: float, log10_c_infl: float, mean_beta_sq: float, xi: float
) -> float:
    """H&R Cor 5 in log10 (finite where C_infl exceeds float64)."""
    xi = check_real("xi", xi, strictly_positive=True)
    return float(
        mpmath.log10(w_norm)
        + log10_c_infl
        + mpmath.log10(mean_beta_sq)
        - mpmath.log10(2 * mpmath.mpf(xi))
    )


def cor_5_edge_bound(w_norm: float, c_infl: float, sum_beta_products: float, n_bits: int) -> float:
    """H&R Cor 5, edge form (the step before averaging): the sum over sensitive ordered edges
    (x, n) of |T(x) - T(x^n)| is at most ||w|| C_infl / N times the sum over the same edges of
    beta(x) beta(x^n) (Lemma 2.9 with the readout at eos)."""
    n = check_int("N", n_bits, minimum=1)
    return float(w_norm) * float(c_infl) * float(sum_beta_products) / n


def cor_5_required_blowup(avg_sensitivity: float, xi: float, w_norm: float, c_infl: float) -> float:
    """H&R Cor 5 read as a requirement: E_x[beta^2] >= 2 xi as_N(f) / (||w|| C_infl)."""
    xi = check_real("xi", xi, strictly_positive=True)
    return 2.0 * xi * float(avg_sensitivity) / (float(w_norm) * float(c_infl))


# ----------------------------------------------------------------------------- Thm 6
def noise_variance_probability(d_model: int, sigma: float, t: float) -> float:
    """H&R Thm 6 (toolkit's form): P[var(d + delta) <= t] <= F_{chi^2_{D-1}}(t D / sigma^2)
    for any fixed d in R^D and delta ~ N(0, sigma^2 I_D) (population variance)."""
    d = check_int("d_model", d_model, minimum=2)
    sigma = check_real("sigma", sigma, strictly_positive=True)
    t = check_real("t", t, minimum=0.0)
    return float(stats.chi2.cdf(t * d / sigma**2, d - 1))


def noise_variance_threshold(d_model: int, sigma: float, probability: float) -> float:
    """The t with F_{chi^2_{D-1}}(t D / sigma^2) = probability (the quantile, scaled; inf at
    probability 1). A probability outside [0, 1] raises (scipy would return NaN)."""
    d = check_int("d_model", d_model, minimum=2)
    sigma = check_real("sigma", sigma, strictly_positive=True)
    q = checked_probability("probability", probability)
    return float(stats.chi2.ppf(q, d - 1) * sigma**2 / d)


def blowup_cap(t: float, eps: float, n_norms: int) -> float:
    """(1 + (t + eps)^{-1/2})^K: the blowup when every norm input has variance > t."""
    k = check_int("K", n_norms, minimum=1)
    v = check_real("t", t, minimum=0.0) + check_real("eps", eps, minimum=0.0)
    return math.inf if v == 0 else (1.0 + v**-0.5) ** k


def noise_beta_cap_probability(
    d_model: int, n_norms: int, seq_len: int, sigma: float, t: float
) -> float:
    """H&R Thm 6 (toolkit's form): P[beta'(x) >= blowup_cap(t, eps, K)] <= min(1, K S F(t D /
    sigma^2)) for each fixed input x with S positions, when every layer norm's input carries its
    own independent N(0, sigma^2 I_D) term (a noisy bias or token row right before it): beta'
    reaches the cap only if some norm k at some position n has variance <= t (union bound)."""
    k = check_int("K", n_norms, minimum=1)
    s = check_int("S", seq_len, minimum=1)
    p = min(1.0, k * s * noise_variance_probability(d_model, sigma, t))
    return checked_probability("P[beta > cap] bound", p)


def noise_cap_threshold(d_model: int, n_norms: int, seq_len: int, sigma: float, p: float) -> float:
    """The t at which the bound of :func:`noise_beta_cap_probability` equals p (0 <= p <= 1;
    any other p raises)."""
    k = check_int("K", n_norms, minimum=1)
    s = check_int("S", seq_len, minimum=1)
    p = checked_probability("p", p)
    return noise_variance_threshold(d_model, sigma, p / (k * s))


def noise_cap_growth(d_model: int, n_norms: int, seq_len: int, sigma: float, p: float) -> float:
    """An explicit upper bound on the cap at probability p, showing its growth in S:
    ``(1 + sqrt(D / (2 sigma^2)) (K S / (p Gamma((D+1)/2)))^{1/(D-1)})^K`` (eps = 0), from
    F_{chi^2_k}(u) <= (u/2)^{k/2} / Gamma(k/2 + 1) with k = D - 1: it grows like S^{K/(D-1)}."""
    d = check_int("d_model", d_model, minimum=2)
    k = check_int("K", n_norms, minimum=1)
    s = check_int("S", seq_len, minimum=1)
    sigma = check_real("sigma", sigma, strictly_positive=True)
    p = check_real("p", p, strictly_positive=True)
    dof = d - 1
    inner = (k * s / (p * math.gamma(dof / 2 + 1))) ** (1.0 / dof)
    return (1.0 + math.sqrt(d / (2 * sigma**2)) * inner) ** k
