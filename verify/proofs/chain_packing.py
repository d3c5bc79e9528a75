"""The chain to the code for Prop 3.5's cap, on symbols: ``log10_prop_3_5(config, box, xi)``
run with the box's half-widths, xi and the box's C_Lip symbols equals
log10 (1 + diam / r)^M (``prop_3_5.volume_ratio``) with r = xi / C_Lip
(``prop_3_5.separation``) and diam = 2 sqrt(sum_name B_name^2 size_name), the Euclidean
diameter of prod_name [-B_name, B_name]^{size_name}.

``c_lip_box`` is bound to the hypothesis C (a positive symbol): its own chains are
``lemma_3_1.chain_c_lip`` (c_lip on every norm summary) and ``prop_3_5.chain_box_norms``
(box_norms), so this chain checks the cap's assembly (M, the diameter, the radius, the log).
The layout (which arrays, their sizes, M) is the model's (``param_shapes``, ``n_params``) and is
enumerated: every structure the spec has (post-/pre-LN, affine or not, each positional encoding
and embedding, eos or not) at L, H <= 2; one half-width for all arrays, or one per array."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.blowup import M as M_SYM
from verify.proofs.blowup import dmp, rp
from verify.proofs.symbolic import SymCase, symbolic, symbolic_step

__all__ = ["CAP_CONFIGS"]

B, XI, C = (sp.Symbol(n, positive=True) for n in ("B", "xi", "C_Lip"))
_VOLUME = (1 + dmp / rp) ** M_SYM  # prop_3_5.volume_ratio's right side


def _configs() -> list[Any]:
    """Every structure at L, H <= 2, D = 4 (a covering of the options, each pair of L, H with
    each layout)."""
    from verify.model import ModelConfig

    out = []
    options = itertools.product((False, True), (False, True), ("learned", "sinusoidal", "none"),
                                ("add", "concat"), (False, True))  # fmt: skip
    for i, (pre, affine, pos, emb, eos) in enumerate(options):
        n_layers, n_heads = 1 + i % 2, 1 + (i // 2) % 2
        out.append(ModelConfig(d_model=4, n_layers=n_layers, n_heads=n_heads, d_ff=8,
                               norm_first=pre, ln_affine=affine, pos_encoding=pos, embedding=emb,
                               eos=eos, max_len=8))  # fmt: skip
    return out


CAP_CONFIGS = _configs()


def _cases() -> Iterator[SymCase]:
    from verify.model import n_params, param_shapes
    from verify.proofs.chain_code import code

    cap = symbolic(code("prop_3_5.chain_cap"), {"c_lip_box": lambda config, box: C})
    for cfg in CAP_CONFIGS:
        shapes = param_shapes(cfg)
        per_array = {name: sp.Symbol(f"B[{name}]", positive=True) for name in shapes}
        for box in (B, per_array):
            halves = per_array if box is per_array else dict.fromkeys(shapes, B)
            diam = 2 * sp.sqrt(
                sp.Add(*(halves[k] ** 2 * int(np.prod(s)) for k, s in shapes.items()))
            )
            dom = {"config": str(cfg), "box": "B" if box is B else "B_name per array"}

            def composed(diam: sp.Expr = diam, m: int = n_params(cfg)) -> sp.Expr:
                return sp.log(_VOLUME.subs({dmp: diam, rp: XI / C, M_SYM: m})) / sp.log(10)

            yield dom, (lambda cfg=cfg, box=box: cap(cfg, box, XI)), composed


symbolic_step(
    "prop_3_5.chain_cap",
    "Prop 3.5",
    "Derivation, 3: at most (1 + diam/r)^M net points",
    "docs/derivations.md#prop-35",
    _cases,
    f"B > 0 (one, or one per array), xi > 0, the box's C_Lip > 0; {len(CAP_CONFIGS)} layouts"
    " (every structure at L, H <= 2)",
    facts=(
        "prop_3_5.chain_box_norms",
        "prop_3_5.separation",
        "prop_3_5.volume_ratio",
        "lemma_3_1.chain_c_lip",
    ),
    evidence="sizes",
)
