"""The blueprint: every derivation step of the explicit constants as a machine-checked proof
obligation (docs/proofs.md).

- :mod:`~verify.proofs.core`: :class:`Obligation`, :class:`Axiom`, the registry;
- :mod:`~verify.proofs.methods`: z3 (:mod:`~verify.proofs.z3_encoding`), the arb branch and bound
  (:mod:`~verify.proofs.interval`), sympy; weakened twins refuted by checked points;
- the steps: :mod:`~verify.proofs.influence` (Lemma 2.9), :mod:`~verify.proofs.lipschitz`
  (Lemma 3.1), :mod:`~verify.proofs.blowup` (Lemma 3.2, Cor 3.3, 3.4, Prop 3.5),
  :mod:`~verify.proofs.eps_zero` (the small-ball constant, Lemma 4.2, 4.4, Thm 4.5),
  :mod:`~verify.proofs.hahn_rofin` (H&R Cor 5, Thm 6), :mod:`~verify.proofs.axioms`,
  :mod:`~verify.proofs.coverage` (Sec 5, Sec 6, Cor 5.1-5.4), :mod:`~verify.proofs.prose`;
  influence, eps_zero, axioms and coverage import their parts (``influence_*.py``, ...) in
  registration order and re-export their names;
- the chain to the code: :mod:`~verify.proofs.chain` (the one table ``CODE``) and
  :mod:`~verify.proofs.chain_tails`;
- :mod:`~verify.proofs.runner` (``python -m verify prove``), :mod:`~verify.proofs.coq` (the
  claims as Coq lemmas: :mod:`~verify.proofs.coq_terms`, :mod:`~verify.proofs.coq_scripts`),
  :mod:`~verify.proofs.blueprint` (the report's section and figure),
  :mod:`~verify.proofs.testing` (the generated theorems/test_derivation_*.py).
"""

from __future__ import annotations

from verify.proofs.runner import load, run, select

__all__ = ["load", "run", "select"]
