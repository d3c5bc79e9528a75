"""H&R Cor 5: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_hr_cor_5 = derivation_test("H&R Cor 5")
