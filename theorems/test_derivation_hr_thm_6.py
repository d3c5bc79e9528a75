"""H&R Thm 6: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_hr_thm_6 = derivation_test("H&R Thm 6")
