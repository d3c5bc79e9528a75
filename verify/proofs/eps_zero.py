"""The eps = 0 suite's derivation steps as obligations (docs/derivations_eps_zero.md): the
small-ball constant (section 1), Lemma 4.2's union and sequential bounds (section 2), Lemma
4.4's cube covering (section 4) and Thm 4.5's exponent and Borel-Cantelli series (section 5).

The steps live in :mod:`~verify.proofs.eps_zero_small_ball`,
:mod:`~verify.proofs.eps_zero_lemma_4_2`, :mod:`~verify.proofs.eps_zero_lemma_4_4` and
:mod:`~verify.proofs.eps_zero_thm_4_5`; importing them registers their obligations, in this
order.
"""

from __future__ import annotations

# isort: off
from verify.proofs.eps_zero_small_ball import C_SB
from verify.proofs.eps_zero_lemma_4_2 import MARKOV
from verify.proofs import eps_zero_lemma_4_4, eps_zero_thm_4_5  # noqa: F401
# isort: on

__all__ = ["C_SB", "MARKOV"]
