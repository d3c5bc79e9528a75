"""Lemma 2.9's derivation steps as obligations (docs/derivations.md#lemma-29), and the step
expressions that compose to C_infl (used by :mod:`verify.proofs.compose`).

The symbols and step expressions are :mod:`~verify.proofs.influence_terms` (re-exported here,
its ``__all__`` as this module's: compose reads them through this module); the obligations live
in :mod:`~verify.proofs.influence_layer_norm` (section 0, step 2),
:mod:`~verify.proofs.influence_attention` (step 3) and :mod:`~verify.proofs.influence_recursion`
(steps 4-6), registered in this order.
"""

from __future__ import annotations

# isort: off
from verify.proofs import influence_terms
from verify.proofs.influence_terms import *  # noqa: F403
from verify.proofs import influence_layer_norm, influence_attention, influence_recursion  # noqa: F401
# isort: on

__all__ = list(influence_terms.__all__)
