"""Lemma 4.4 [note]: Global blowup bound by cube covering (eps = 0).

Generated from the registry (checks: verify.statements.lemma_4_4);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_lemma_4_4 = theorem_test("Lemma 4.4")
