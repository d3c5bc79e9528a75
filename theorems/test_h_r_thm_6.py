"""H&R Thm 6 [inferred]: Sensitive functions sit at sharp minima: parameter noise caps the blowup.

Generated from the registry (checks: verify.statements.hr_thm_6);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_h_r_thm_6 = theorem_test("H&R Thm 6")
