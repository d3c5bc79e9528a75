"""The eps = 0 corollaries' explicit bounds (arXiv 2606.08768, reconstruction; derivation
docs/derivations_eps_zero.md): Cor 4.3's bit-flip bounds, one named function per bound, each
built from Lemma 2.9's bound (:func:`verify.theory.bounds.lemma_2_9_bound`) as the corollary
itself is. Lemma 4.2's bound is :func:`verify.theory.small_ball.neighbourhood_blowup_bound`.
"""

from __future__ import annotations

import numpy as np

from verify.theory import bounds
from verify.validation import check_int, check_real

__all__ = ["cor_4_3_bound", "cor_4_3_flip_bound", "good_event_blowup"]


def good_event_blowup(n_bits: int, zeta: float) -> float:
    """Lemma 4.2's good event at scale zeta: every blowup on it is <= N^(zeta/2)."""
    n = check_int("n_bits", n_bits, minimum=1)
    return float(n ** (check_real("zeta", zeta, strictly_positive=True) / 2))


def cor_4_3_flip_bound(
    w_norm: float,
    c_infl: float,
    beta_x: np.ndarray | float,
    beta_xn: np.ndarray | float,
    n_bits: int,
) -> np.ndarray:
    """Cor 4.3, first step (Lemma 2.9 through the readout, eos readout off the flipped bit):
    |T(x) - T(x^n)| <= ||w|| C_infl beta(x) beta(x^n) / N. Arrays broadcast."""
    return w_norm * bounds.lemma_2_9_bound(c_infl, beta_x, beta_xn, n_bits, False)


def cor_4_3_bound(w_norm: float, c_infl: float, n_bits: int, zeta: float) -> float:
    """Cor 4.3: on Lemma 4.2's good event (both blowups <= N^(zeta/2), :func:`good_event_blowup`)
    a flip of a bit in S moves T by at most ||w|| C_infl N^(zeta/2) N^(zeta/2) / N
    = ||w|| C_infl N^(zeta - 1)."""
    t = good_event_blowup(n_bits, zeta)
    return float(cor_4_3_flip_bound(w_norm, c_infl, t, t, n_bits))
