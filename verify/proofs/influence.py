"""Lemma 2.9's derivation steps as obligations (docs/derivations.md#lemma-29), and the step
expressions that compose to C_infl (used by :mod:`verify.proofs.compose`).

Symbols: Q, K, V the spectral norms of a head's query, key and value blocks, b_q, b_k their bias
norms, Y the bound on the attention inputs, sd = sqrt(d_h), q = Q Y + b_q, k = K Y + b_k,
v_c = V Y, G_q = Q k / sd, G_k = q K / sd; E = e^{2R} with R = q k / sd (substitution: the
polynomial steps are stated in E, the exp step proves E's role by arb).


The symbols and step expressions are :mod:`~verify.proofs.influence_terms` (re-exported here:
compose reads them through this module); the obligations live in
:mod:`~verify.proofs.influence_layer_norm` (section 0, step 2),
:mod:`~verify.proofs.influence_attention` (step 3) and :mod:`~verify.proofs.influence_recursion`
(steps 4-6), registered in this order.
"""

from __future__ import annotations

# isort: off
from verify.proofs.influence_terms import (
    ATT_N_A,
    ATT_N_B,
    ATT_OTHER_A,
    ATT_OTHER_B,
    E_SOFTMAX,
    FFN_FACTOR,
    LN_FACTOR,
    SYM,
)
from verify.proofs import influence_layer_norm, influence_attention, influence_recursion  # noqa: F401
# isort: on

__all__ = [
    "ATT_N_A",
    "ATT_N_B",
    "ATT_OTHER_A",
    "ATT_OTHER_B",
    "E_SOFTMAX",
    "FFN_FACTOR",
    "LN_FACTOR",
    "SYM",
]
