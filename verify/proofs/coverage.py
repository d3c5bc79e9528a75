"""Sec 5 MAJORITY, Sec 6 random functions and Lemma 4.4's certified cube covering as
obligations (docs/derivations_eps_zero.md sections 4 and 9): the central binomial bound behind
K_0(MAJORITY) >= 2^N (1 - sqrt(8/(3N))) and the exact-integer test the code runs; the
Chen-Stein radius from its b_1, b_2 (the closed neighbourhoods of two strings at distance 1 or
2 cover 2N points); the biased E[K_0]; and the volume accounting of the certified covering.

The steps live in :mod:`~verify.proofs.coverage_majority` (the two axioms and Sec 5),
:mod:`~verify.proofs.coverage_random` (Sec 6), :mod:`~verify.proofs.coverage_cover` (Lemma
4.4), :mod:`~verify.proofs.coverage_threshold` (N*(c)) and
:mod:`~verify.proofs.coverage_corollaries` (Cor 5.1-5.4); importing them registers their
axioms and obligations, in this order.
"""

from __future__ import annotations

# isort: off
from verify.proofs.coverage_majority import MAJORITY_LOWER
from verify.proofs.coverage_random import CHEN_STEIN, biased_mean
from verify.proofs import coverage_cover, coverage_threshold, coverage_corollaries  # noqa: F401
# isort: on

__all__ = ["CHEN_STEIN", "MAJORITY_LOWER", "biased_mean"]
