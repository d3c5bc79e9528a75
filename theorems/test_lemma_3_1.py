"""Lemma 3.1 [note]: Uniform Lipschitzness in the parameters (eps > 0).

Generated from the registry (checks: verify.statements.lemma_3_1);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_lemma_3_1 = theorem_test("Lemma 3.1")
