"""Cor 3.3 (arXiv 2606.08768, reconstruction): for eps > 0 and n off the readout position,
|T(x) - T(x^n)| <= ||w|| C_infl (1 + eps^{-1/2})^{2K} / N; the measured influence falls like 1/N."""

import verify.lemmas.eps_positive  # noqa: F401  (registers the statements)


def test_random_parameters_of_the_four_init_schemes(run_statement_check):
    run_statement_check("Cor 3.3", "random parameters of the four init schemes")


def test_length_independence(run_statement_check):
    run_statement_check("Cor 3.3", "length independence: N max influence stays bounded")
