"""Prop 3.5 [note]: Length-independent cap on the number of recognisable functions (eps > 0).

Generated from the registry (checks: verify.statements.prop_3_5);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_prop_3_5 = theorem_test("Prop 3.5")
