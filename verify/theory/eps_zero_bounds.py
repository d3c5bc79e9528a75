"""The eps = 0 corollaries' explicit bounds (arXiv 2606.08768, reconstruction; derivation
docs/derivations_eps_zero.md): Cor 4.3's bit-flip bounds, one named function per bound, each
built from Lemma 2.9's bound (:func:`verify.theory.bounds.lemma_2_9_bound`) as the corollary
itself is; Cor 4.6's finite-N bound on the chance of recognising a low-K_0 function, from Thm
4.5's bad event. Lemma 4.2's bound is :func:`verify.theory.small_ball.neighbourhood_blowup_bound`.
"""

from __future__ import annotations

import math

import numpy as np

from verify.theory import bounds
from verify.theory.probability import checked_probability
from verify.validation import check_int, check_real

__all__ = [
    "cor_4_3_bound",
    "cor_4_3_flip_bound",
    "cor_4_6_recognition_bound",
    "good_event_blowup",
    "log10_cor_4_3_threshold",
]


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


def log10_cor_4_3_threshold(log10_w_c_infl: float, xi: float, zeta: float) -> float:
    """log10 N_0, where N_0 = (||w|| C_infl / (2 xi))^(1 / (1 - zeta)): for N > N_0 Cor 4.3's
    bound ||w|| C_infl N^(zeta - 1) is below 2 xi, so on the good event no flip of a bit in S
    changes a label recognised with margin xi. ``log10_w_c_infl``: log10(||w|| C_infl) (a box's
    C_infl exceeds float64); zeta in (0, 1)."""
    xi = check_real("xi", xi, strictly_positive=True)
    zeta = check_real("zeta", zeta, strictly_positive=True)
    if zeta >= 1:
        raise ValueError(f"zeta: expected a value in (0, 1), got {zeta}")
    return max(0.0, (float(log10_w_c_infl) - math.log10(2 * xi)) / (1 - zeta))


def cor_4_6_recognition_bound(n_bits: int, log10_threshold: float, bad_event_bound: float) -> float:
    """Cor 4.6 at a finite N: for every f with K_0(f) < N^e, P[theta recognises f with margin
    xi] <= P[E_N] <= a_N once N > N_0 (:func:`log10_cor_4_3_threshold`), and 1 below N_0.

    Why: off Thm 4.5's bad event E_N every string of its family of ceil(N^e) strings and their
    neighbours have beta <= N^(zeta/2), so each flip moves T by at most ||w|| C_infl N^(zeta-1)
    < 2 xi (Cor 4.3); a function recognised with margin xi (|T| >= xi everywhere) then keeps
    its label on every flip of a family string: K_0(f) >= ceil(N^e). ``bad_event_bound``: a_N
    (:func:`verify.theory.zero_sensitivity.bad_event_probability_bound`)."""
    n = check_int("n_bits", n_bits, minimum=1)
    if math.log10(n) <= log10_threshold:
        return 1.0
    return checked_probability("Cor 4.6 bound", min(1.0, float(bad_event_bound)))
