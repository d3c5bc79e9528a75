"""Prop 3.5 (arXiv 2606.08768, reconstruction): for eps > 0 and every N,
|F_N| <= (1 + C_Lip diam(Theta) / xi)^M (reported as log10)."""

import verify.lemmas.eps_positive  # noqa: F401  (registers the statements)


def test_cap(run_statement_check):
    run_statement_check("Prop 3.5", "cap vs distinct recognised functions and 2^(2^N)")
