"""H&R Cor 5 [inferred]: Sensitive functions force layer-norm blowup or large parameter norms.

Generated from the registry (checks: verify.statements.hr_cor_5);
regenerate with `python -m verify.registry.testing`."""

from verify.registry.testing import theorem_test

test_h_r_cor_5 = theorem_test("H&R Cor 5")
