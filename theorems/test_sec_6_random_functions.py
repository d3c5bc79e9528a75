"""Sec 6 random functions [note]: A uniformly random Boolean function has a zero-sensitivity string
w.p. -> 1 - 1/e.

Generated from the registry (checks: verify.statements.sec6_random_functions);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_sec_6_random_functions = theorem_test("Sec 6 random functions")
