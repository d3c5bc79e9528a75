"""Trivial bounds: the derivation steps as proof obligations (docs/proofs.md).

Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""

from verify.proofs.testing import derivation_test

test_derivation_trivial_bounds = derivation_test("Trivial bounds")
