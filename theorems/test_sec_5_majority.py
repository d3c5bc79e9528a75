"""Sec 5 MAJORITY [note]: MAJORITY has exponentially many zero-sensitivity strings (unnumbered).

Generated from the registry (checks: verify.statements.sec5_majority);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_sec_5_majority = theorem_test("Sec 5 MAJORITY")
