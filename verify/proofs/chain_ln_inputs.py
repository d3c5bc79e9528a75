"""Lemma 3.2's tightness bounds B_k on the layer norms' inputs, composed from their steps.

``lemma_3_2.chain_beta_lower`` composes the tightness bound prod_k (1 + (B_k^2/D + eps)^{-1/2})
from the coded ``ln_input_norm_bounds`` (the B_k), so a B_k weakened there (a term of the
residual stream dropped) passed it. Here the coded B_k run on a symbolic norm summary (every
norm a positive symbol, :func:`verify.proofs.chain_induction.symbolic_norms`) equal the
composition of the derivation's bounds (docs/derivations.md#lemma-32, tightness): a layer
norm's output has norm <= ||gamma||_inf sqrt(D) + ||beta||; attention's output <= ||W_o||
sqrt(sum_h (||W_v^h|| Y + ||b_v^h||)^2) + ||b_o|| (a convex combination of values, Y the
bound on its input); the MLP's <= ||W_2|| (||W_1|| Y + ||b_1||) + ||b_2||; the residual stream
adds (triangle inequality); the first input is an embedding row (<= emb_max). Post-LN: the
inputs are r + att(r) and y_1 + mlp(y_1), then r = y_2; pre-LN: r and r + att(y_1), then
r += mlp(y_2), and the final norm's input r. L, H in {1, 2} (the sizes enumerated).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import sympy as sp

from verify.proofs.chain_code import CODE
from verify.proofs.chain_induction import LIP_HEADS, LIP_LAYERS, _fn, symbolic_norms
from verify.proofs.symbolic import SymCase, symbolic, symbolic_step


def _ln_out(gain: sp.Expr, bias: sp.Expr, d: sp.Expr) -> sp.Expr:
    return gain * sp.sqrt(d) + bias


def _att(lay: Any, y: sp.Expr) -> sp.Expr:
    return lay.wo * sp.sqrt(sum((h.wv * y + h.bv) ** 2 for h in lay.heads)) + lay.bo


def _mlp(lay: Any, y: sp.Expr) -> sp.Expr:
    return lay.w2 * (lay.w1 * y + lay.b1) + lay.b2


def composed_bounds(nm: Any) -> tuple[sp.Expr, ...]:
    """B_k in path order, composed from the steps (module doc)."""
    pre, d = nm.config.norm_first, nm.config.d_model
    out, r = [], nm.emb_max
    for lay in nm.layers:
        y1, y2 = _ln_out(lay.g1, lay.n1, d), _ln_out(lay.g2, lay.n2, d)
        if pre:
            out += [r, r + _att(lay, y1)]
            r = r + _att(lay, y1) + _mlp(lay, y2)
        else:
            out += [r + _att(lay, r), y1 + _mlp(lay, y1)]
            r = y2
    return tuple(out + [r]) if pre else tuple(out)


def _cases() -> Iterator[SymCase]:
    ob_id = "lemma_3_2.chain_ln_inputs"
    for n_layers in LIP_LAYERS:
        for h in LIP_HEADS:
            for pre in (False, True):
                nm = symbolic_norms(h, pre, n_layers)
                fn = _fn(ob_id, CODE[ob_id].split(":")[1])
                dom = {"L": str(n_layers), "H": str(h), "norm_first": str(pre)}
                yield (
                    dom,
                    lambda nm=nm, fn=fn: tuple(symbolic(fn)(nm)),
                    lambda nm=nm: composed_bounds(nm),
                )


symbolic_step(
    "lemma_3_2.chain_ln_inputs",
    "Lemma 3.2",
    "Tightness: var <= B_k^2 / D",
    "docs/derivations.md#lemma-32",
    _cases,
    f"every norm >= 0, D, post-LN and pre-LN, L in {LIP_LAYERS}, H in {LIP_HEADS}",
    facts=("lemma_3_2.variance_le_norm", "axiom.triangle"),
    evidence="sizes",
)
