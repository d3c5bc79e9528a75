"""Sec 5 MAJORITY: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_sec_5_majority = derivation_test("Sec 5 MAJORITY")
