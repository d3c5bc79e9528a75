"""Lemma 4.4's event measured directly: s_N(x, f_theta) <= N - k for theta ~ Unif[-1,1]^M, a
random string x, and f_theta = 1[T(theta, .) > 0] (eps = 0).

s_N(x) is read off the certified signs of T at x and its N one-bit neighbours (rigorous float64
midpoint-radius pass, readout row only, so N up to thousands is cheap for one layer); a string
whose sign is not certified counts as differing from x, so the measured s_N is an upper bound
and P[s_N(x) <= N - k] a lower bound (the count of such strings is reported).

The explicit bound of the toolkit's chain (docs/derivations_eps_zero.md section 4): off Lemma
4.2's bad event (beta <= t at x and at k neighbours), |T(x) - T(x^n)| <= ||w|| C_infl t^2 / N for
those k neighbours, which keep the sign of T(x) when |T(x)| exceeds that; the readout bias omega
is uniform on [-1, 1] given the rest and C_infl does not depend on it, so
P[|T(x)| < a] <= min(1, a). Hence

    P[s_N(x) > N - k] <= min(1, B_4.2(t, k) + min(1, ||w||_box C_infl(box) t^2 / N)),

minimised over t (:func:`lemma_4_4_bound`). C_infl of the box is astronomically large, so the
bound is 1 (vacuous) at every tractable N: the direct estimate is the content.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from verify.checks.neighbourhood import neighbourhood
from verify.model import ModelConfig, init_params
from verify.model.certified.truth_table import certified_float64
from verify.theory.bounds import c_infl_box
from verify.theory.small_ball import neighbourhood_blowup_bound

__all__ = ["k_values", "lemma_4_4_bound", "sensitivity_samples"]


def sensitivity_samples(
    cfg: ModelConfig, n_bits: int, draws: int, seed: int, box: float = 1.0
) -> tuple[np.ndarray, int]:
    """(s, uncertain): s_N(x) (upper bound) for ``draws`` pairs (theta ~ Unif[-box, box]^M,
    x uniform), and how many strings' signs were not certified (counted as differing)."""
    rng = np.random.default_rng([seed, n_bits])
    out = np.empty(draws, dtype=np.int64)
    uncertain = 0
    for i in range(draws):
        params = init_params(cfg, "uniform", int(rng.integers(2**31)), box)
        bits = neighbourhood(rng.integers(0, 2, n_bits).astype(np.uint8))
        mid, rad = certified_float64(params, bits, engine="numpy")
        with np.errstate(invalid="ignore"):
            pos, neg = mid - rad > 0, mid + rad <= 0
        sure = pos | neg
        uncertain += int(np.count_nonzero(~sure))
        if not sure[0]:
            out[i] = n_bits  # x's own sign unknown: every neighbour may differ
            continue
        same = pos[1:] if pos[0] else neg[1:]
        out[i] = int(np.count_nonzero(~same))
    return out, uncertain


def lemma_4_4_bound(cfg: ModelConfig, n_bits: int, k: int, box: float = 1.0) -> float:
    """The explicit bound on P[s_N(x) > N - k] of the module doc, minimised over a grid of t."""
    w_box = box * math.sqrt(cfg.d_model)  # ||w||_2 over the box
    c = w_box * c_infl_box(cfg, box)
    best = 1.0
    for t in np.exp(np.linspace(0.0, 30.0, 121))[1:]:
        b42 = neighbourhood_blowup_bound(float(t), cfg.d_model, 2.0 * box, cfg.n_norms, n_bits, k)
        best = min(best, b42 + min(1.0, c * t * t / n_bits))
    return min(1.0, best)


def k_values(n_bits: int) -> Sequence[int]:
    """k = 1 (not fully sensitive), N/2, N (zero-sensitive string)."""
    return sorted({1, max(1, n_bits // 2), n_bits})
