"""Lemma 2.9 [note]: Influence of one bit bounded by the blowup.

Generated from the registry (checks: verify.statements.lemma_2_9);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_lemma_2_9 = theorem_test("Lemma 2.9")
