"""Lemma 3.2 [note]: Deterministic blowup bound (eps > 0).

Generated from the registry (checks: verify.statements.lemma_3_2);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_lemma_3_2 = theorem_test("Lemma 3.2")
