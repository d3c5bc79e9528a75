"""Explicit small-ball and blowup-tail bounds behind Lemma 4.2 / Thm 4.5 (eps = 0), and the bias
structure they rest on.

Derivation (docs/derivations_eps_zero.md, section 1). Every layer-norm input of the spec model
(post-LN; pre-LN with additive embedding) has the form ``d = c + b`` where ``b`` in R^D is a bias
vector that is a coordinate block of theta and ``c`` does not depend on ``b`` (norm1: the
attention output bias ``out_proj.bias``; norm2: ``linear2.bias``; pre-LN norm1 of layer 0: the
token-embedding row). If ``b`` is uniform on a cube of side ``a`` (independently of the other
coordinates, as for theta ~ Unif(box) or Delta ~ Unif(B_inf(rho)), a = 2 rho), then the centred
vector ``P d`` (P = I - 11^T/D) has a density on the hyperplane 1^perp bounded by
``sqrt(D) a^-(D-1)`` (a line parallel to 1 meets the cube in length <= a sqrt(D)), and since
``var(d) = |P d|^2 / D``::

    P[var(d) <= delta] <= sqrt(D) V_{D-1} D^{(D-1)/2} a^{-(D-1)} delta^{(D-1)/2}      (SB)

with ``V_k = pi^{k/2} / Gamma(k/2 + 1)`` the volume of the unit k-ball. At eps = 0,
``z = var^{-1/2}``, so ``P[z > s] <= C_SB(D, a) s^{-(D-1)}``: the tail exponent ``D - 1``.

The samplers and tail fits that measure these tails live in ``verify.checks.ln_coefficients``
and ``verify.checks.tail_fits``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, param_shapes
from verify.theory.probability import checked_probability
from verify.validation import check_int, check_real

__all__ = [
    "bias_block",
    "blowup_tail_bound",
    "blowup_tail_bound_sequential",
    "blowup_tail_bound_union",
    "lemma_4_2_markov_factor",
    "check_bias_structure",
    "neighbourhood_blowup_bound",
    "recover_centred_input",
    "sequential_shift",
    "small_ball_constant",
    "unit_ball_volume",
    "variance_small_ball_bound",
    "z_tail_bound",
]


def unit_ball_volume(k: int) -> float:
    """Volume of the unit ball in R^k: pi^{k/2} / Gamma(k/2 + 1)."""
    k = check_int("k", k, minimum=0)
    return math.exp(0.5 * k * math.log(math.pi) - special.gammaln(0.5 * k + 1.0))


def small_ball_constant(d_model: int, side: float) -> float:
    """C_SB(D, a) = sqrt(D) V_{D-1} D^{(D-1)/2} a^{-(D-1)}: P[var(d) <= delta] <= C_SB
    delta^{(D-1)/2} when d = c + b with b uniform on a cube of side a."""
    d_model = check_int("d_model", d_model, minimum=2)
    side = check_real("side", side, strictly_positive=True)
    k = d_model - 1
    return math.sqrt(d_model) * unit_ball_volume(k) * (d_model / side**2) ** (0.5 * k)


def variance_small_ball_bound(delta: float, d_model: int, side: float) -> float:
    """Bound (SB): P[var(d) <= delta] <= min(1, C_SB(D, a) delta^{(D-1)/2})."""
    delta = check_real("delta", delta, minimum=0.0)
    c = small_ball_constant(d_model, side)
    return checked_probability("(SB) bound", min(1.0, c * delta ** (0.5 * (d_model - 1))))


def z_tail_bound(s: float, d_model: int, side: float) -> float:
    """At eps = 0: P[z > s] = P[var < s^-2] <= min(1, C_SB s^{-(D-1)}), for s > 0."""
    s = check_real("s", s, strictly_positive=True)
    return variance_small_ball_bound(s**-2, d_model, side)


def blowup_tail_bound_union(
    t: float, d_model: int, side: float, n_norms: int, seq_len: int
) -> float:
    """P[beta(theta, x) > t] for one string x, beta = prod_k max_n (1 + z_kn) over K norms and
    S positions: beta > t forces some z_kn > t^{1/K} - 1, so (union over k, n)

        P[beta > t] <= min(1, K S C_SB (t^{1/K} - 1)^{-(D-1)})       (exponent (D-1)/K in t).
    """
    t = check_real("t", t, strictly_positive=True)
    n_norms = check_int("n_norms", n_norms, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    s = t ** (1.0 / n_norms) - 1.0
    if s <= 0.0:
        return 1.0  # beta >= 1 always: thresholds t <= 1 carry no information
    return min(1.0, n_norms * seq_len * z_tail_bound(s, d_model, side))


def sequential_shift(d_model: int, side: float, seq_len: int) -> float:
    """u0 = log(1 + (S C_SB)^{1/(D-1)}): log(tau_k) is stochastically below u0 + Exp(D - 1)."""
    alpha = d_model - 1
    a = seq_len * small_ball_constant(d_model, side)
    return math.log1p(a ** (1.0 / alpha))


def blowup_tail_bound_sequential(
    t: float, d_model: int, side: float, n_norms: int, seq_len: int
) -> float:
    """Sequential-conditioning bound (docs/derivations_eps_zero.md, section 2).

    Norm k's bias b_k is independent of everything that fixes tau_1..tau_{k-1} and c_k, so
    P[tau_k - 1 > s | past] <= min(1, S C_SB s^{-(D-1)}) and log tau_k is dominated by
    u0 + Exp(rate D - 1). Hence sum_k log tau_k <= K u0 + Gamma(K, D - 1) stochastically:

        P[beta > t] <= Q(K, (D - 1)(log t - K u0)),   Q the regularised upper gamma,

    a tail t^{-(D-1)} (log t)^{K-1}: the exponent D - 1 survives the product over norms.
    """
    t = check_real("t", t, strictly_positive=True)
    n_norms = check_int("n_norms", n_norms, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    u0 = sequential_shift(d_model, side, seq_len)
    y = (d_model - 1) * (math.log(t) - n_norms * u0)
    if y <= 0.0:
        return 1.0
    return float(special.gammaincc(n_norms, y))


def blowup_tail_bound(t: float, d_model: int, side: float, n_norms: int, seq_len: int) -> float:
    """The better of the union and the sequential bounds on P[beta(theta, x) > t] (both are
    valid for post-LN, and pre-LN with additive embedding)."""
    return checked_probability(
        "P[beta > t] bound",
        min(
            blowup_tail_bound_union(t, d_model, side, n_norms, seq_len),
            blowup_tail_bound_sequential(t, d_model, side, n_norms, seq_len),
        ),
    )


def lemma_4_2_markov_factor(n_bits: int, k: int) -> float:
    """Lemma 4.2's union-and-Markov factor 1 + N / (N - k + 1): the bad event is beta(x) > t
    (probability p: the "1") or more than N - k of the N neighbours have beta > t (expected
    count N p, Markov at N - k + 1: the "N / (N - k + 1)")."""
    n_bits = check_int("n_bits", n_bits, minimum=1)
    k = check_int("k", k, minimum=0, maximum=n_bits)
    return 1.0 + n_bits / (n_bits - k + 1)


def neighbourhood_blowup_bound(
    t: float, d_model: int, side: float, n_norms: int, n_bits: int, k: int, eos: bool = True
) -> float:
    """Explicit Lemma 4.2 bound. Bad event: there is no S of k bits with beta <= t at x and at
    every x^{+n}, n in S; i.e. beta(x) > t or more than N - k neighbours have beta > t. With
    p = blowup_tail_bound(t) and Markov on the neighbour count,

        P[bad] <= min(1, p (1 + N / (N - k + 1))).
    """
    n_bits = check_int("n_bits", n_bits, minimum=1)
    k = check_int("k", k, minimum=0, maximum=n_bits)
    seq_len = n_bits + 1 if eos else n_bits
    p = blowup_tail_bound(t, d_model, side, n_norms, seq_len)
    return checked_probability("Lemma 4.2 bound", min(1.0, p * lemma_4_2_markov_factor(n_bits, k)))


# --------------------------------------------------------------------------------------------
# The bias structure: which block of theta is the b in d = c + b


def check_bias_structure(config: ModelConfig) -> None:
    """The small-ball bounds need every layer-norm input to carry its own additive bias block of
    theta (post-LN: out_proj.bias / linear2.bias; pre-LN: additionally the token embedding for
    layer 0's norm1, which must then be D wide, i.e. ``embedding="add"``)."""
    if config.norm_first and config.embedding != "add":
        raise ValidationError(
            "config",
            "post-LN, or pre-LN with embedding='add' (layer 0's norm1 input must contain a"
            " D-wide parameter block)",
            f"norm_first=True, embedding={config.embedding!r}",
        )


def bias_block(params: Params, norm_index: int) -> tuple[str, slice]:
    """Name and theta-slice of the bias block added to layer norm ``norm_index``'s input
    (post-LN: norm 2l <- layers.l.self_attn.out_proj.bias, norm 2l+1 <- layers.l.linear2.bias)."""
    cfg = params.config
    if cfg.norm_first:
        raise ValidationError("params", "a post-LN model (norm_first=False)", "pre-LN")
    k = check_int("norm_index", norm_index, minimum=0, maximum=cfg.n_norms - 1)
    layer, second = divmod(k, 2)
    name = f"layers.{layer}." + ("linear2.bias" if second else "self_attn.out_proj.bias")
    start = 0
    for n, shape in param_shapes(cfg).items():
        size = int(np.prod(shape)) if shape else 1
        if n == name:
            return name, slice(start, start + size)
        start += size
    raise AssertionError(name)  # pragma: no cover - every post-LN config has the block


def recover_centred_input(
    params: Params, bits: np.ndarray, norm_index: int = 0, position: int = -1, h: float = 1.0
) -> np.ndarray:
    """The centred input P d of one layer norm at one position, from variances alone: var is
    quadratic in the bias b, var(d + h e_i) = var(d) + 2 h (P d)_i / D + h^2 (1 - 1/D) / D."""
    cfg = params.config
    name, _ = bias_block(params, norm_index)
    bits = np.asarray(bits, dtype=np.uint8).reshape(1, -1)
    d = cfg.d_model
    v0 = forward(params, bits, True).var[0, norm_index, position]
    out = np.empty(d)
    for i in range(d):
        b = params[name].copy()
        b[i] += h
        vi = forward(params.with_arrays({name: b}), bits, True).var[0, norm_index, position]
        out[i] = d * (vi - v0 - h * h * (1 - 1 / d) / d) / (2 * h)
    return out
