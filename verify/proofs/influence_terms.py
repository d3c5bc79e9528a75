"""Lemma 2.9's symbols and the step expressions that compose to C_infl (proved by the
obligations of :mod:`verify.proofs.influence`, composed by :mod:`verify.proofs.compose`).

Symbols: Q, K, V the spectral norms of a head's query, key and value blocks, b_q, b_k their bias
norms, Y the bound on the attention inputs, sd = sqrt(d_h), q = Q Y + b_q, k = K Y + b_k,
v_c = V Y, G_q = Q k / sd, G_k = q K / sd; E = e^{2R} with R = q k / sd (substitution: the
polynomial steps are stated in E, the exp step proves E's role by arb).
"""

from __future__ import annotations

import sympy as sp

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

SYM = dict(
    zip(
        "Q K V bq bk Y sd g W1 W2 a b S E".split(),
        sp.symbols("Q K V b_q b_k Y sd g W1 W2 a b S E", real=True),
        strict=True,
    )
)
Q, K, V, bq, bk, Y, sd, g, W1, W2, a, b, S, E = SYM.values()
q_bar, k_bar = Q * Y + bq, K * Y + bk
v_c = V * Y
G_q, G_k = Q * k_bar / sd, q_bar * K / sd

# the step expressions (per head, per unit of a and of bt) that the recursion composes
LN_FACTOR = g / 4  # step 2: each layer norm, per unit of rho = tau tau'
FFN_FACTOR = W2 * W1  # step 4
E_SOFTMAX = sp.exp(2 * q_bar * k_bar / sd)  # step 3: S max_j p_j <= e^{2R}
ATT_OTHER_B = V + 2 * v_c * (G_q + G_k)  # step 3, another position: coefficient of bt
ATT_OTHER_A = E * (V + 2 * v_c * G_k)  # ... of a (E = e^{2R})
ATT_N_A = V + v_c * (2 * G_q + G_k) / 2  # step 3, at the flipped position: coefficient of a
ATT_N_B = V + v_c * (2 * G_k) / 2  # ... of bt
