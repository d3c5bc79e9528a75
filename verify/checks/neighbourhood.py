"""Bit-flip neighbourhoods and parameter perturbations (Lemma 4.2, Cor 4.3, the random-init
experiment): the string x with its N one-bit neighbours, theta + Delta with Delta uniform on an
l-infinity ball, and Lemma 4.2's bad event read off the blowups of a neighbourhood."""

from __future__ import annotations

import numpy as np

from verify.model import Params

__all__ = ["neighbourhood", "neighbourhood_bad_event", "perturbed_params"]


def neighbourhood(bits: np.ndarray) -> np.ndarray:
    """(N + 1, N) array: the string x (row 0) followed by x^{+n} for n = 1..N."""
    x = np.asarray(bits, dtype=np.uint8).reshape(-1)
    out = np.repeat(x[None, :], x.size + 1, axis=0)
    idx = np.arange(x.size)
    out[idx + 1, idx] ^= 1
    return out


def perturbed_params(params: Params, rho: float, rng: np.random.Generator) -> Params:
    """theta + Delta with Delta ~ Unif(B_inf^M(rho))."""
    theta = params.flatten()
    return Params.unflatten(params.config, theta + rng.uniform(-rho, rho, theta.size))


def neighbourhood_bad_event(beta: np.ndarray, t: float, k: int) -> bool:
    """Lemma 4.2's bad event from the blowups of (x, x^{+1}, .., x^{+N}): beta(x) > t or more
    than N - k neighbours have beta > t (NaN = an exactly constant LN input = infinite blowup)."""
    big = ~(beta <= t)  # NaN counts as big
    return bool(big[0] or int(np.count_nonzero(big[1:])) > beta.size - 1 - k)
