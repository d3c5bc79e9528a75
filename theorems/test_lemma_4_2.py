"""Lemma 4.2 [note]: Local high-probability blowup bound (eps = 0).

Generated from the registry (checks: verify.statements.lemma_4_2);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_lemma_4_2 = theorem_test("Lemma 4.2")
