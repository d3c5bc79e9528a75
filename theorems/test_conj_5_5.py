"""Conj 5.5 [note]: MAJORITY is recognised on a set of positive measure.

Generated from the registry (checks: verify.statements.conj_5_5);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_conj_5_5 = theorem_test("Conj 5.5")
