"""The named axioms: cited external facts the obligations rely on, never proved here but each
attacked (:class:`~verify.proofs.core.Axiom`).

Each has an id (``axiom.<name>``), a statement with every hypothesis it needs, a reference and
an *attack*: ``attack(rng, n)`` draws n instances of the statement as written (random sizes,
magnitudes from 1e-3 to 1e3, the equality cases among them) and returns their relative
violations (> 1e-9: a counterexample). tests/test_proofs_axioms.py runs >= 10^4 draws of each
under Hypothesis, and fails for an axiom without an attack. The docs link each derivation step
that uses one to its id, and the blueprint draws it as an axiom node.

The axioms live in :mod:`~verify.proofs.axioms_linear` (linear algebra, analysis, the model's
embedding), :mod:`~verify.proofs.axioms_probability` (probability, measure) and
:mod:`~verify.proofs.axioms_elementary` (integrals, packing, logarithms, counting), registered
in that order; each carries its scalar schema (:mod:`~verify.proofs.axiom_schemas`) or the
reason it has none; :mod:`~verify.proofs.axiom_draws` holds their shared draws.
"""

from __future__ import annotations

import math

import numpy as np

# importing registers the axioms, in this order
# isort: off
from verify.proofs import axioms_linear, axioms_probability, axioms_elementary  # noqa: F401

# isort: on
from verify.proofs.axiom_draws import violation

__all__ = ["attack_axiom", "violation"]


def attack_axiom(ax_id: str, draws: int = 1000, seed: int = 0) -> tuple[float, int]:
    """(the largest relative violation over ``draws`` draws of the axiom's attack, in batches
    of 100 with seeds seed, seed + 1, ...; the batch seed where it occurred)."""
    from verify.proofs.core import AXIOMS

    ax = AXIOMS[ax_id]
    if ax.attack is None:
        return math.inf, -1
    worst, where = -math.inf, seed
    for k in range(max(1, draws // 100)):
        v = float(np.max(ax.attack(np.random.default_rng(seed + k), 100)))
        if v > worst:
            worst, where = v, seed + k
    return worst, where
