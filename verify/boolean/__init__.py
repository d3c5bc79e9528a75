"""Boolean functions {0,1}^N -> {0,1}: truth tables, families, exact sensitivity and Fourier
analysis, sampled estimators for large N, closed-form profiles. See docs/boolean.md.

Bit order (docs/model-spec.md): string index i = sum_n x_n 2^(n-1), x_1 least significant.
"""

from verify.boolean.families import (
    Family,
    family_names,
    get_family,
    make_family,
    register_family,
)
from verify.boolean.function import (
    MAX_EXHAUSTIVE_N,
    BooleanFunction,
    all_bit_strings,
    as_table,
    bits_to_index,
)
from verify.boolean.sampling import SampledProfile, clopper_pearson, estimate_profile

_LAZY = {  # loaded on first use: sympy costs ~1 s to import, and the modules with Numba kernels
    # compile them (or load them from the cache) when imported, which importing any module of
    # this package (verify.boolean.function, say) should not do
    "closed_form_profile": "verify.boolean.closed_forms",
    "has_closed_form": "verify.boolean.closed_forms",
    "profile_expression": "verify.boolean.closed_forms",
    **dict.fromkeys(
        (
            "average_sensitivity", "average_sensitivity_exact", "max_sensitivity",
            "min_sensitivity", "normalized_average_sensitivity", "sensitivity",
            "sensitivity_profile", "zero_sensitivity_count",
        ),
        "verify.boolean.analysis",
    ),
    **dict.fromkeys(
        (
            "MAX_FOURIER_N", "fourier_coefficients", "fourier_degree", "influences",
            "total_influence", "total_influence_exact", "walsh_hadamard",
        ),
        "verify.boolean.fourier",
    ),
    **dict.fromkeys(
        (
            "MonteCarloEstimate", "count_no_zero_sensitive",
            "exact_probability_some_zero_sensitive",
            "monte_carlo_probability_some_zero_sensitive",
        ),
        "verify.boolean.random_functions",
    ),
}  # fmt: skip


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'verify.boolean' has no attribute {name!r}")


__all__ = [
    "MAX_EXHAUSTIVE_N",
    "MAX_FOURIER_N",
    "BooleanFunction",
    "Family",
    "MonteCarloEstimate",
    "SampledProfile",
    "all_bit_strings",
    "as_table",
    "average_sensitivity",
    "average_sensitivity_exact",
    "bits_to_index",
    "clopper_pearson",
    "closed_form_profile",
    "count_no_zero_sensitive",
    "estimate_profile",
    "exact_probability_some_zero_sensitive",
    "family_names",
    "fourier_coefficients",
    "fourier_degree",
    "get_family",
    "has_closed_form",
    "influences",
    "make_family",
    "max_sensitivity",
    "min_sensitivity",
    "monte_carlo_probability_some_zero_sensitive",
    "normalized_average_sensitivity",
    "profile_expression",
    "register_family",
    "sensitivity",
    "sensitivity_profile",
    "total_influence",
    "total_influence_exact",
    "walsh_hadamard",
    "zero_sensitivity_count",
]
