"""Cor 3.3 [note]+[inferred]: O(1/N) effect of one bit flip (eps > 0).

Generated from the registry (checks: verify.statements.cor_3_3);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_cor_3_3 = theorem_test("Cor 3.3")
