"""Sec 5 declared families [inferred]: Declared facts of every registered family hold; K_0 = 0
families flagged by Cor 4.6.

Generated from the registry (checks: verify.statements.sec5_declared_families);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_sec_5_declared_families = theorem_test("Sec 5 declared families")
