"""Cor 3.4 (arXiv 2606.08768, reconstruction): for eps > 0 (eos readout) no theta recognises a
non-constant function with margin xi beyond an explicit N*."""

import verify.lemmas.eps_positive  # noqa: F401  (registers the statements)


def test_in_action(run_statement_check):
    run_statement_check("Cor 3.4", "in action: recognisers of non-constant functions vanish")


def test_box_n_star_bounds_sampled(run_statement_check):
    run_statement_check("Cor 3.4", "explicit N* over the box bounds N* of every sampled theta")
