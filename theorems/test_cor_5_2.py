"""Cor 5.2 [note]: m-sparse PARITY is almost surely not recognisable for large N.

Generated from the registry (checks: verify.statements.cor_5_2);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_cor_5_2 = theorem_test("Cor 5.2")
