"""Thm 4.5 [note]: Random transformers have many zero-sensitivity strings (eps = 0).

Generated from the registry (checks: verify.statements.thm_4_5);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_thm_4_5 = theorem_test("Thm 4.5")
