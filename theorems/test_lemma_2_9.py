"""Lemma 2.9 (arXiv 2606.08768, reconstruction): the influence of one bit on the readout vector
is at most C_infl beta(x) beta(x^n) (1/N + delta_{r,n}); C_infl explicit (docs/derivations.md)."""

import verify.lemmas.eps_positive  # noqa: F401  (registers the statements)


def test_random_parameters_of_the_four_init_schemes(run_statement_check):
    run_statement_check("Lemma 2.9", "random parameters of the four init schemes")


def test_adversarial_search(run_statement_check):
    run_statement_check("Lemma 2.9", "adversarial search (Hypothesis, target = ratio)")
