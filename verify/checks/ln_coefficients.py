"""Samplers of the layer-norm coefficient z at the readout position for theta ~ Unif(box), eps = 0
(Lemma 4.2's tail checks): one forward pass per theta, or, for deep tails, exact conditional
redraws of each norm's own bias block (the block that drives the small-ball bound, see
``verify.theory.small_ball``)."""

from __future__ import annotations

import numpy as np

from verify.errors import ValidationError
from verify.model import ModelConfig, forward, init_params
from verify.theory.small_ball import bias_block, check_bias_structure, recover_centred_input
from verify.validation import check_int, check_real

__all__ = ["sample_conditional_z", "sample_readout_z"]


def sample_readout_z(
    config: ModelConfig, bits: np.ndarray, n_samples: int, *, box: float, seed: int
) -> np.ndarray:
    """(n_samples, K) layer-norm coefficients z at the readout position for theta ~ Unif of the
    box [-box, box]^M, one theta per sample (seed -> init seeds seed*n_samples + i)."""
    check_bias_structure(config)
    n_samples = check_int("n_samples", n_samples, minimum=1)
    bits = np.asarray(bits, dtype=np.uint8).reshape(1, -1)
    out = np.empty((n_samples, config.n_norms))
    base = check_int("seed", seed, minimum=0) * n_samples
    for i in range(n_samples):
        params = init_params(config, "uniform", base + i, scale=box)
        out[i] = forward(params, bits, diagnostics=True).z[0, :, -1]
    return out


def sample_conditional_z(
    config: ModelConfig,
    bits: np.ndarray,
    n_theta: int,
    n_bias: int,
    *,
    box: float,
    seed: int,
) -> np.ndarray:
    """(n_theta, n_bias, K) readout-position layer-norm coefficients for theta ~ Unif of the box,
    drawn conditionally: for each of n_theta draws of theta and each norm k, the centred input
    u = P d_k is recovered exactly (:func:`recover_centred_input`) and the norm's own bias block
    is redrawn n_bias times, d' = d + (b' - b), so var(d') = |u + P(b' - b)|^2 / D. Each row is
    an exact draw of (theta without b_k, b_k'): the same law as :func:`sample_readout_z`, with
    n_bias draws of the coordinate block that drives the tail per forward pass (deep tails)."""
    check_bias_structure(config)
    if config.norm_first:
        raise ValidationError("config", "a post-LN model (norm_first=False)", "pre-LN")
    n_theta = check_int("n_theta", n_theta, minimum=1)
    n_bias = check_int("n_bias", n_bias, minimum=1)
    box = check_real("box", box, strictly_positive=True)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    bits = np.asarray(bits, dtype=np.uint8).reshape(1, -1)
    out = np.empty((n_theta, n_bias, config.n_norms))
    for i in range(n_theta):
        params = init_params(config, "uniform", seed * n_theta + i, scale=box)
        for k in range(config.n_norms):
            name, _ = bias_block(params, k)
            u = recover_centred_input(params, bits, k)
            shift = rng.uniform(-box, box, (n_bias, config.d_model)) - params[name]
            w = u + shift - shift.mean(axis=1, keepdims=True)
            with np.errstate(divide="ignore"):
                out[i, :, k] = 1.0 / np.sqrt(np.mean(w * w, axis=1))
    return out
