"""``box_norms(config, B)`` on symbols: for every half-width B > 0 it equals the norm summary
(``parameter_norms``, run on symbols: :mod:`verify.proofs.chain_param_norms`) of the point of
[-B, B]^M that attains every norm at once (every entry +B, the token row 0 at -B): a norm of
the box is its supremum there, not less. The spectral norm of a constant block b J_{r x c} is
|b| sqrt(r c) (rank one); every other norm is its definition on the point's entries. The
layouts are enumerated (the same 24 as the summary's: class instance)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.chain_param_norms import (
    NORM_CONFIGS,
    _SymbolParams,
    norm_fields,
    summary_on_symbols,
)
from verify.proofs.symbolic import SymCase, symbolic_step

__all__: list[str] = []

B = sp.Symbol("B", positive=True)


def _attaining_point(config: Any) -> Any:
    """Every entry +B, the token row 0 at -B (object arrays of the symbol)."""
    from verify.model import param_shapes

    arrays = {n: np.full(s, B, dtype=object) for n, s in param_shapes(config).items()}
    arrays["token_embedding"][0] = -B
    return _SymbolParams.of(config, arrays)


def _evaluated(x: Any) -> Any:
    """A Max of the point's norms evaluated (the summary builds it unevaluated)."""
    return x.doit() if isinstance(x, sp.Basic) else x


def _cases() -> Iterator[SymCase]:
    summary = summary_on_symbols("lemma_2_9.chain_parameter_norms")
    box = summary_on_symbols("prop_3_5.chain_box_norms")
    for cfg in NORM_CONFIGS:
        want = {k: _evaluated(v) for k, v in norm_fields(summary(_attaining_point(cfg))).items()}

        def coded(cfg: Any = cfg, keys: tuple = tuple(want)) -> tuple:
            got = norm_fields(box(cfg, B))
            return tuple(got.get(k, sp.Symbol(f"missing {k}")) for k in keys)

        yield {"config": str(cfg)}, coded, (lambda want=want: tuple(want.values()))


symbolic_step(
    "prop_3_5.chain_box_norms",
    "Prop 3.5",
    "Derivation, 3: at most (1 + diam/r)^M net points",
    "docs/derivations.md#prop-35",
    _cases,
    f"every B > 0; {len(NORM_CONFIGS)} layouts (every structure at L, H <= 2)",
    facts=("lemma_2_9.chain_parameter_norms",),
    evidence="sizes",
)
