"""Cor 3.4 [note]+[inferred threshold]: Only constant functions are recognisable for large N (eps >
0).

Generated from the registry (checks: verify.statements.cor_3_4);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_cor_3_4 = theorem_test("Cor 3.4")
