"""Cor 4.6 [note]: Criterion for unlearnability (eps = 0).

Generated from the registry (checks: verify.statements.cor_4_6);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_cor_4_6 = theorem_test("Cor 4.6")
