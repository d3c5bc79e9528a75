"""Cor 4.3 [note]: Bits in S are insensitive on the good event (eps = 0).

Generated from the registry (checks: verify.statements.cor_4_3);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_cor_4_3 = theorem_test("Cor 4.3")
