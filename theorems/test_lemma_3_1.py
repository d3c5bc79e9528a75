"""Lemma 3.1 (arXiv 2606.08768, reconstruction): for eps > 0, T is Lipschitz in theta with an
explicit C_Lip independent of the input and of its length (Euclidean norm on theta)."""

import verify.lemmas.eps_positive  # noqa: F401  (registers the statements)


def test_random_parameter_pairs(run_statement_check):
    run_statement_check("Lemma 3.1", "random parameter pairs of the four init schemes")


def test_adversarial_search(run_statement_check):
    run_statement_check("Lemma 3.1", "adversarial search (Hypothesis, target = ratio)")


def test_local_lipschitz_constant_does_not_grow_with_n(run_statement_check):
    run_statement_check("Lemma 3.1", "local Lipschitz constant does not grow with N")
