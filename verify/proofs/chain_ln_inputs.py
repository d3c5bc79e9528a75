"""Lemma 3.2's tightness bounds B_k on the layer norms' inputs, held against the model itself.

``lemma_3_2.chain_beta_lower`` composes the tightness bound prod_k (1 + (B_k^2/D + eps)^{-1/2})
from the coded ``ln_input_norm_bounds`` (the B_k), so a B_k weakened there (a term of the
residual stream dropped: the norm's output bound g sqrt(D) + ||beta|| without g sqrt(D)) passes
it. Here each B_k meets what it bounds: at seeded models (:func:`verify.proofs.chain.models`:
post- and pre-LN, L <= 2, affine or not, every positional encoding and embedding) and strings of
lengths 1..8, the float64 forward pass's variance of every layer-norm input at every position is
at most B_k^2 / D (var(d) = |P d|^2 / D <= |d|^2 / D: lemma_3_2.variance_le_norm), up to a
relative 1e-9 (the pass's rounding). A sampled check of an upper bound: it catches a B_k made
smaller than the inputs it must bound, not a looser one. Its twin: the B_k halved, which some
model's inputs must exceed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verify.proofs.chain import models
from verify.proofs.chain_code import code
from verify.proofs.chain_step import Comparison, chain_step

N_MODELS = 40
REL_TOL = 1e-9


def _strings(n_bits: int, rng: np.random.Generator) -> np.ndarray:
    if n_bits <= 4:  # every string
        return ((np.arange(2**n_bits)[:, None] >> np.arange(n_bits)) & 1).astype(np.uint8)
    return rng.integers(0, 2, size=(16, n_bits), dtype=np.uint8)


def _dominates(weaken: Any) -> tuple[int, dict | None, str]:
    """(cases compared, the first (model, norm) whose largest input variance exceeds
    (weaken B_k)^2 / D, why)."""
    from verify.model import forward

    rng = np.random.default_rng(32)
    n = 0
    for i, params in enumerate(models()[:N_MODELS]):
        cfg = params.config
        bounds = np.asarray(code("lemma_3_2.chain_ln_inputs")(params), dtype=float)
        caps = (float(weaken) * bounds) ** 2 / cfg.d_model
        for n_bits in (1, 3, 4, 8):
            var = forward(params, _strings(n_bits, rng), diagnostics=True).var
            worst = var.max(axis=(0, 2))  # (K,): the largest variance of each norm's input
            if worst.shape != caps.shape:
                return n, {"model": i}, f"{caps.size} bounds for {worst.size} layer norms"
            for k in range(caps.size):
                n += 1
                if not worst[k] <= caps[k] * (1 + REL_TOL):
                    pt = {"model": i, "norm": k, "N": n_bits, "norm_first": cfg.norm_first}
                    return n, pt, f"variance {worst[k]:.6g} > B_k^2/D = {caps[k]:.6g}"
    return n, None, ""


DOMINATES = Comparison(
    claim="bound every layer-norm input: var <= B_k^2 / D at {n}+ (model, length, norm) cases",
    proved="bound the inputs at {n} (model, length, norm) cases",
    passed_halved="the halved bounds still held",
    caught_halved="halved bounds exceeded",
    half=0.5,
    minimum=4 * N_MODELS,
)
chain_step(
    "lemma_3_2.chain_ln_inputs",
    "Lemma 3.2",
    "Tightness: var <= B_k^2 / D",
    "docs/derivations.md#lemma-32",
    _dominates,
    DOMINATES,
    facts=("lemma_3_2.variance_le_norm", "lemma_2_9.chain_parameter_norms"),
    evidence="points",
)
