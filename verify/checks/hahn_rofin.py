"""Measurements for Hahn & Rofin's statements (H&R Cor 5, H&R Thm 6; bounds in
:mod:`verify.theory.hahn_rofin`, derivations in docs/derivations_hahn_rofin.md).

- :func:`measure_tradeoff`: over all 2^N strings (float64 forward pass with diagnostics), the
  function f the model computes (sign of T), its margin xi = min_x |T(x)|, as_N(f), the blowup
  beta(x) and the pieces of the H&R Cor 5 bound (||w||, C_infl, the weight omega_f(x) from
  the truth table, E[beta^2 omega_f], E[beta^2], the edge sums).
- :func:`gaussian_sharpness`: H&R's sharpness proxy, the mean increase of the MSE loss
  (targets +-1) when N(0, sigma^2) noise is added to every parameter except the positions.
- :func:`noisy_blowup_frequency`: how often the blowup of a fixed input stays above a cap
  under that noise (H&R Thm 6, toolkit's form).

Every random draw takes an explicit seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from verify.boolean.analysis import average_sensitivity
from verify.boolean.function import all_bit_strings
from verify.model import ForwardResult, ModelConfig, Params, forward
from verify.theory import hahn_rofin as hr
from verify.theory.bounds import c_infl, log10_c_infl
from verify.validation import ValidationError

__all__ = [
    "NOISE_EXCLUDED",
    "TradeoffMeasurement",
    "gaussian_sharpness",
    "measure_tradeoff",
    "noisy_blowup_frequency",
    "parameter_norm_sq",
    "perturbed",
    "readout_factor",
]

# arrays H&R leave out of the sharpness noise and of the parameter norm
NOISE_EXCLUDED = ("pos_embedding",)


def readout_factor(config: ModelConfig) -> float:
    """1 with eos (no input bit sits at the readout); 2 without (the last bit does: Lemma 2.9's
    delta term, see docs/derivations_hahn_rofin.md)."""
    return 1.0 if config.eos else 2.0


@dataclass(frozen=True)
class TradeoffMeasurement:
    """Everything H&R Cor 5 compares, for one model and one N (see the module doc)."""

    n_bits: int
    xi: float  # min_x |T(x)|: the margin with which T recognises its own f
    avg_sensitivity: float  # as_N(f), total influence in [0, N]
    mean_beta_sq: float  # E_x beta(x)^2, the paper's blowup
    mean_beta: float
    max_beta: float
    mean_beta_hr: float  # Hahn & Rofin's logged blowup (unbiased std, no eps), for reference
    w_norm: float
    c_infl: float  # inf when beyond float64
    log10_c_infl: float
    factor: float  # readout_factor: c_r, the bound on omega_f
    sensitive_dT: float  # sum over sensitive ordered edges of |T(x) - T(x^n)|
    sensitive_beta_products: float  # sum over them of beta(x) beta(x^n) (1/N + delta)
    param_norm_sq: float  # ||theta||^2 without positions (H&R's parameter norm)
    mean_omega: float  # E_x omega_f(x), omega_f = |S_f(x)|/N + [readout bit sensitive at x]
    mean_beta_sq_omega: float  # E_x beta(x)^2 omega_f(x)
    bound: float  # ||w|| C_infl E[beta^2 omega_f] (Cor 5's right-hand side; inf on overflow)
    log10_bound: float

    @property
    def lhs(self) -> float:
        """2 xi as_N(f): what Cor 5 bounds."""
        return 2.0 * self.xi * self.avg_sensitivity

    @property
    def bound_c_r(self) -> float:
        """c_r ||w|| C_infl E[beta^2]: the weaker form (omega_f <= c_r; inf on overflow)."""
        return (
            hr.cor_5_as_bound(self.w_norm, self.c_infl, self.mean_beta_sq, 0.5) * self.factor
            if math.isfinite(self.c_infl)
            else math.inf
        )

    @property
    def edge_bound(self) -> float:
        """Cor 5, edge form: ||w|| C_infl sum_sensitive beta beta' (1/N + delta)."""
        if not math.isfinite(self.c_infl):
            return math.inf
        return hr.cor_5_edge_bound(self.w_norm, self.c_infl, self.sensitive_beta_products, 1)

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(lhs=self.lhs, bound_c_r=self.bound_c_r)
        return out


def parameter_norm_sq(params: Params) -> float:
    """H&R's parameter norm: the squared l2 norm of every array except the positions."""
    return float(sum(np.sum(a * a) for k, a in params.items() if k not in NOISE_EXCLUDED))


def measure_tradeoff(
    params: Params,
    n_bits: int,
    *,
    readout: tuple[np.ndarray, float] | None = None,
    result: ForwardResult | None = None,
) -> TradeoffMeasurement | None:
    """H&R Cor 5's quantities over all 2^N strings; None when some T is undefined (a 0/0 layer
    norm) or exactly 0 (no margin). ``readout``: replace (w, omega) (the adversarial search
    chooses them; T is linear in them, so one forward pass serves). ``result``: that forward
    pass, ``forward(params, all_bit_strings(n_bits), diagnostics=True)``, if the caller has it."""
    bits = all_bit_strings(n_bits)
    if result is None:
        result = forward(params, bits, diagnostics=True)
    elif result.beta is None or result.T.shape != (bits.shape[0],):
        got = (
            "a pass without diagnostics" if result.beta is None else f"T of shape {result.T.shape}"
        )
        raise ValidationError(
            "result", f"a forward pass with diagnostics of all 2^{n_bits} strings", got
        )
    res = result
    if readout is None:
        w, omega = params["readout.weight"], float(params["readout.bias"])
        t = res.T
    else:
        w, omega = readout
        t = res.y_readout @ w + omega
    if not np.all(np.isfinite(t)) or not np.all(np.isfinite(res.beta)):
        return None
    # the label rule of the model: 1 iff T > its threshold (0 in the spec); the margin is of
    # T - threshold (a model with readout bias omega - threshold, the same w)
    t = t - params.config.threshold
    xi = float(np.min(np.abs(t)))
    if xi == 0.0:
        return None
    f = (t > 0).astype(np.uint8)
    beta = res.beta
    n_idx = np.arange(bits.shape[0])
    sensitive_dt = 0.0
    products = 0.0
    at_readout = np.zeros(n_bits, dtype=bool)
    if not params.config.eos:
        at_readout[n_bits - 1] = True
    n_sensitive = np.zeros(bits.shape[0], dtype=np.int64)  # |S_f(x)|
    readout_sensitive = np.zeros(bits.shape[0], dtype=bool)  # r <= N and r in S_f(x)
    for n in range(n_bits):
        flipped = n_idx ^ (1 << n)
        sens = f != f[flipped]
        n_sensitive += sens
        if at_readout[n]:
            readout_sensitive |= sens
        sensitive_dt += float(np.sum(np.abs(t[sens] - t[flipped][sens])))
        weight = 1.0 / n_bits + float(at_readout[n])
        products += float(np.sum(beta[sens] * beta[flipped][sens])) * weight
    omega = hr.cor_5_omega(n_sensitive, readout_sensitive, n_bits)
    src = params if readout is None else params.with_arrays({"readout.weight": w})
    w_norm = float(np.linalg.norm(w))
    ci, log_ci = c_infl(src), log10_c_infl(src)
    return TradeoffMeasurement(
        n_bits=n_bits,
        xi=xi,
        avg_sensitivity=float(average_sensitivity(f)),
        mean_beta_sq=float(np.mean(beta**2)),
        mean_beta=float(np.mean(beta)),
        max_beta=float(np.max(beta)),
        mean_beta_hr=float(np.mean(res.beta_hr)),
        w_norm=w_norm,
        c_infl=ci,
        log10_c_infl=log_ci,
        factor=readout_factor(params.config),
        sensitive_dT=sensitive_dt,
        sensitive_beta_products=products,
        param_norm_sq=parameter_norm_sq(src),
        mean_omega=float(np.mean(omega)),
        mean_beta_sq_omega=float(np.mean(beta**2 * omega)),
        bound=hr.cor_5_bound(w_norm, ci, beta, omega),
        log10_bound=hr.log10_cor_5_bound(w_norm, log_ci, beta, omega),
    )


def perturbed(
    params: Params, sigma: float, rng: np.random.Generator, only: Sequence[str] | None = None
) -> Params:
    """params + N(0, sigma^2) on every array except the positions (or only on ``only``)."""
    arrays = {}
    for name, a in params.items():
        hit = name not in NOISE_EXCLUDED if only is None else name in only
        arrays[name] = a + sigma * rng.standard_normal(a.shape) if hit else a
    return params.with_arrays(arrays)


def target_values(threshold: float) -> tuple[float, float]:
    """The MSE targets (label 0, label 1) of a model labelled 1 iff T > ``threshold``: their
    midpoint is the threshold. 0.5: (0, 1), H&R's convention; 0: (-1, +1). Any other threshold
    does not say its targets: ValidationError (pass them explicitly)."""
    if threshold == 0.5:
        return 0.0, 1.0
    if threshold == 0.0:
        return -1.0, 1.0
    raise ValidationError(
        "threshold",
        "0.5 (targets 0/1) or 0 (targets +-1), or the target values given explicitly",
        threshold,
    )


def gaussian_sharpness(
    params: Params,
    bits: np.ndarray,
    targets: np.ndarray,
    *,
    sigma: float = 0.02,
    repeats: int = 10,
    seed: int = 0,
    values: tuple[float, float] | None = None,
) -> tuple[float, float, float]:
    """H&R's sharpness proxy: (mean loss increase, its standard error, loss at params), the
    MSE loss mean_x (T(x) - y(x))^2 over ``repeats`` draws of N(0, sigma^2) noise on every
    parameter except the positions. The target values y are the model's own convention,
    following its threshold (:func:`target_values`: 0/1 at threshold 0.5, as H&R train, +-1 at
    0), or ``target_values`` = (value of label 0, value of label 1). Undefined outputs (a 0/0
    norm) count as loss inf."""
    rng = np.random.default_rng(seed)
    low, high = (
        target_values(params.config.threshold) if values is None else tuple(map(float, values))
    )
    y = np.where(np.asarray(targets) > 0, high, low)

    def loss(p: Params) -> float:
        t = forward(p, bits).T
        return float(np.mean((t - y) ** 2)) if np.all(np.isfinite(t)) else math.inf

    base = loss(params)
    incs = np.array([loss(perturbed(params, sigma, rng)) - base for _ in range(repeats)])
    from scipy.stats import sem  # s / sqrt(repeats)

    se = float(sem(incs)) if repeats > 1 else math.nan
    return float(np.mean(incs)), se, base


def noisy_blowup_frequency(
    params: Params,
    bits: np.ndarray,
    *,
    sigma: float,
    cap: float,
    draws: int,
    seed: int,
    only: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """For each string of ``bits``: how many of ``draws`` noisy copies of ``params`` have
    blowup beta'(x) >= cap (the paper's beta), and the (draws, B) array of beta'."""
    rng = np.random.default_rng(seed)
    betas = np.empty((draws, bits.shape[0]))
    for i in range(draws):
        betas[i] = forward(perturbed(params, sigma, rng, only), bits, diagnostics=True).beta
    return np.sum(betas >= cap, axis=0), betas
