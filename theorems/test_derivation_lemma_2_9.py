"""Lemma 2.9: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_lemma_2_9 = derivation_test("Lemma 2.9")
