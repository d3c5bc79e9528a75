"""Cor 4.6: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_cor_4_6 = derivation_test("Cor 4.6")
