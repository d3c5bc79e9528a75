"""The one table of chain obligation -> coded function ("module:function"), and its lookup.

Apart from :mod:`verify.proofs.chain` so that the symbolic arithmetic
(:mod:`verify.proofs.symbolic`) and the interval compositions (:mod:`verify.proofs.compose`)
can look a function up without importing the chains that use them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["CODE", "code"]

# obligation id -> the coded function it checks (re-point here when the theory moves)
CODE: dict[str, str] = {
    "lemma_2_9.chain_c_infl": "verify.theory.bounds:c_infl_parts",
    "lemma_2_9.chain_bound": "verify.theory.bounds:lemma_2_9_bound",
    "lemma_3_1.chain_coefficients": "verify.theory.bounds:lipschitz_coefficients",
    "lemma_3_1.chain_c_lip": "verify.theory.bounds:c_lip",
    "lemma_3_2.chain_bound": "verify.theory.bounds:lemma_3_2_bound",
    "cor_3_3.chain_bound": "verify.theory.bounds:cor_3_3_bound",
    "cor_3_4.chain_n_star": "verify.theory.bounds:log10_n_star",
    "cor_3_4.chain_n_star_value": "verify.theory.bounds:n_star",
    "prop_3_5.chain_cap": "verify.theory.packing:log10_prop_3_5",
    "small_ball.chain_constant": "verify.theory.small_ball:small_ball_constant",
    "small_ball.chain_z_tail": "verify.theory.small_ball:z_tail_bound",
    "lemma_4_2.chain_union": "verify.theory.small_ball:blowup_tail_bound_union",
    "lemma_4_2.chain_sequential": "verify.theory.small_ball:blowup_tail_bound_sequential",
    "lemma_4_2.chain_neighbourhood": "verify.theory.small_ball:neighbourhood_blowup_bound",
    "lemma_4_4.chain_slice": "verify.theory.cube_covering:slice_small_ball_bound",
    "thm_4_5.chain_exponent": "verify.theory.zero_sensitivity:theorem_exponent",
    "thm_4_5.chain_exponent_exact": "verify.theory.zero_sensitivity:theorem_exponent_exact",
    "thm_4_5.chain_series": "verify.theory.zero_sensitivity:bad_event_series_term",
    "hr_cor_5.chain_bound": "verify.theory.hahn_rofin:cor_5_bound",
    "hr_cor_5.chain_omega": "verify.theory.hahn_rofin:cor_5_omega",
    "hr_cor_5.chain_edge_bound": "verify.theory.hahn_rofin:cor_5_edge_bound",
    "hr_cor_5.chain_as_bound": "verify.theory.hahn_rofin:cor_5_as_bound",
    "lemma_3_2.chain_beta_lower": "verify.theory.norms:beta_lower_bound",
    "lemma_3_2.chain_ln_inputs": "verify.theory.norms:ln_input_norm_bounds",
    "hr_thm_6.chain_variance": "verify.theory.hahn_rofin:noise_variance_probability",
    "hr_thm_6.chain_cap_probability": "verify.theory.hahn_rofin:noise_beta_cap_probability",
    "hr_thm_6.chain_cap_growth": "verify.theory.hahn_rofin:noise_cap_growth",
    # issue 26's named bounds
    "cor_3_3.chain_exponent": "verify.theory.bounds:cor_3_3_exponent",
    "lemma_3_1.chain_bound": "verify.theory.bounds:lemma_3_1_bound",
    "lemma_3_2.chain_per_layer_bound": "verify.theory.bounds:lemma_3_2_per_layer_bound",
    "lemma_2_9.chain_c_infl_value": "verify.theory.bounds:c_infl",
    "small_ball.chain_variance_bound": "verify.theory.small_ball:variance_small_ball_bound",
    "lemma_4_2.chain_tail": "verify.theory.small_ball:blowup_tail_bound",
    "lemma_4_2.chain_markov_factor": "verify.theory.small_ball:lemma_4_2_markov_factor",
    "cor_4_3.chain_good_event": "verify.theory.eps_zero_bounds:good_event_blowup",
    "cor_4_3.chain_flip_bound": "verify.theory.eps_zero_bounds:cor_4_3_flip_bound",
    "cor_4_3.chain_bound": "verify.theory.eps_zero_bounds:cor_4_3_bound",
    "cor_4_3.chain_threshold": "verify.theory.eps_zero_bounds:log10_cor_4_3_threshold",
    "cor_4_6.chain_bound": "verify.theory.eps_zero_bounds:cor_4_6_recognition_bound",
    "thm_4_5.chain_theorem_bound": "verify.theory.zero_sensitivity:theorem_bound",
    "thm_4_5.chain_bad_event_bound": "verify.theory.zero_sensitivity:bad_event_probability_bound",
    "trivial_bounds.chain_output_swing": "verify.theory.trivial:output_swing_bound",
    "trivial_bounds.chain_output_abs": "verify.theory.trivial:output_abs_bound",
    "trivial_bounds.chain_readout_swing": "verify.theory.trivial:readout_swing_bound",
    "trivial_bounds.chain_sensitivity_swing": "verify.theory.trivial:sensitivity_swing_bound",
    "trivial_bounds.chain_all_functions": "verify.theory.trivial:log10_all_functions",
    "trivial_bounds.chain_probability": "verify.theory.probability:checked_probability",
    # H&R's log10 forms, requirement and thresholds (chain_symbolic, chain_arrays, chain_quantiles)
    "hr_cor_5.chain_log10_bound": "verify.theory.hahn_rofin:log10_cor_5_bound",
    "hr_cor_5.chain_log10_as_bound": "verify.theory.hahn_rofin:log10_cor_5_as_bound",
    "hr_cor_5.chain_required_blowup": "verify.theory.hahn_rofin:cor_5_required_blowup",
    "hr_thm_6.chain_blowup_cap": "verify.theory.hahn_rofin:blowup_cap",
    "hr_thm_6.chain_variance_threshold": "verify.theory.hahn_rofin:noise_variance_threshold",
    "hr_thm_6.chain_cap_threshold": "verify.theory.hahn_rofin:noise_cap_threshold",
    # Sec 5 MAJORITY, Sec 6 random functions, Lemma 4.4's certified covering (coverage.py)
    "sec_5_majority.chain_k0": "verify.theory.majority:majority_k0_formula",
    "sec_5_majority.chain_predicate": "verify.theory.majority:majority_lower_bound_exceeds",
    "sec_5_majority.chain_threshold": "verify.theory.majority:majority_polynomial_threshold",
    "sec_6_random_functions.chain_radius": "verify.theory.random_functions:chen_stein_radius",
    "sec_6_random_functions.chain_biased_mean": "verify.theory.random_functions:biased_k0_mean",
    "lemma_4_4.chain_certified_cover": "verify.theory.cube_covering:certify_bad_measure",
    "lemma_4_4.chain_cube_verdict": "verify.theory.cube_covering:_cube_verdict",
    # Cor 5.1-5.4's premise: the families' sensitivity (coverage.py)
    "cor_5_1.chain_premise": "verify.boolean:sensitivity",
    "cor_5_2.chain_premise": "verify.boolean:sensitivity",
    "cor_5_3.chain_premise": "verify.boolean:sensitivity",
    "cor_5_4.chain_premise": "verify.boolean:sensitivity",
    # the norm summaries both sides of the eps > 0 chains read (verify.proofs.chain_norms)
    "lemma_2_9.chain_parameter_norms": "verify.theory.norms:parameter_norms",
    "prop_3_5.chain_box_norms": "verify.theory.norms:box_norms",
    # the searches and estimates (verify.proofs.chain_searches)
    "thm_4_5.chain_smallest_biting_n": "verify.theory.zero_sensitivity:smallest_biting_n",
    "thm_4_5.chain_series_order": "verify.theory.zero_sensitivity:bad_event_series_order",
    "lemma_4_4.chain_monte_carlo_cover": "verify.theory.cube_covering:monte_carlo_cover",
}


def code(ob_id: str) -> Callable[..., Any]:
    """The coded function of a chain obligation, looked up now (module attribute)."""
    mod, name = CODE[ob_id].split(":")
    return getattr(importlib.import_module(mod), name)
