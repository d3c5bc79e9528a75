"""Cor 5.4: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_cor_5_4 = derivation_test("Cor 5.4")
