"""Sec 6 random functions (unnumbered; id ours): P[K_0 >= 1] for a uniformly random Boolean
function, exact (N <= 5) against a seeded Monte Carlo estimate, and the limit 1 - 1/e within
the Chen-Stein radius at larger N."""

from verify.lemmas.functions import _LIMIT_CHECK


def test_exact_vs_monte_carlo(run_statement_check):
    run_statement_check("Sec 6 random functions", "exact P[K_0>=1] vs Monte Carlo")


def test_limit_one_minus_inverse_e(run_statement_check):
    run_statement_check("Sec 6 random functions", _LIMIT_CHECK)
