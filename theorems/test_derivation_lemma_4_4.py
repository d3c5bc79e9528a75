"""Lemma 4.4: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_lemma_4_4 = derivation_test("Lemma 4.4")
