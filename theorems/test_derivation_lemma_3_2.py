"""Lemma 3.2: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_lemma_3_2 = derivation_test("Lemma 3.2")
