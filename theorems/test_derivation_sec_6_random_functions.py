"""Sec 6 random functions: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_sec_6_random_functions = derivation_test("Sec 6 random functions")
