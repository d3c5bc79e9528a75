"""The chain to the code for the trivial bounds, proved over their whole domains: the [0, 1]
check of probabilities by branch and bound over every float (:mod:`verify.proofs.chain_boxes`).
"""

from __future__ import annotations

import math
import sys
from typing import Any

from verify.proofs import corollaries as co
from verify.proofs.box_arith import on_box
from verify.proofs.chain_boxes import BoxCase, Raises, Var, box_step
from verify.proofs.chain_code import code
from verify.theory.probability import ProbabilityError

__all__: list[str] = []

_MAX = sys.float_info.max


# ---- probabilities are checked where computed: the code returns p for p in [0, 1] and raises
# ProbabilityError for every other value (NaN, the infinities included)
def _probability_composed(env: dict[str, Any]) -> Any:
    """axiom.probability_range: p itself where 0 <= p <= 1, an error everywhere else."""
    p = env["p"]
    return p if 0 <= p <= 1 else Raises(ProbabilityError)


def _probability_cases() -> list[BoxCase]:
    ob = "trivial_bounds.chain_probability"
    on_floats = on_box(code(ob))
    cases = [
        BoxCase(
            "every finite float p (bisected in float order: -0.0, the subnormals, the floats"
            " next to 0 and 1 are boxes of their own where a branch needs them)",
            (Var("p", -_MAX, _MAX, "float"),),
            lambda e: on_floats("p", e["p"]),
            _probability_composed,
        )
    ]
    for x in (math.nan, math.inf, -math.inf):  # the code itself at the non-finite floats
        cases.append(
            BoxCase(
                f"p = {x}", (), lambda e, x=x: code(ob)("p", x), lambda e: Raises(ProbabilityError)
            )  # fmt: skip
        )
    return cases


box_step(
    "trivial_bounds.chain_probability",
    "Trivial bounds",
    "Probabilities and fractions",
    co.DOC0,
    _probability_cases,
    "every float64 value: the finite ones in one box bisected in float order, NaN and +-inf",
    rtol=0,
    raises=(ProbabilityError,),
    facts=("axiom.probability_range",),
)
