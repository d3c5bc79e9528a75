"""The chain to the code for the trivial bounds, by branch and bound over their whole domains
(:mod:`verify.proofs.chain_boxes`): the [0, 1] check of probabilities over every float, the
count of Boolean functions at every N for which it returns a value. (The bounds on arrays are
proved on symbols: :mod:`verify.proofs.chain_arrays`.)
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

from verify.proofs import corollaries as co
from verify.proofs.box_arith import compile_num, on_box
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


# ---- log10 2^(2^N): 2^N is exact in Python's integers, and from N = 1024 on it exceeds the
# largest float, where the code's int * float raises OverflowError
_COUNT_RETURNS = 1023  # the largest N with 2^N < 2^1024 (float64's range)
_COUNT_TAIL = (1024, 1025, 4096, 2**20)


def _count_cases() -> list[BoxCase]:
    ob = "trivial_bounds.chain_all_functions"
    on_ints = on_box(code(ob))
    composed = compile_num(co.COUNT_LOG10)
    cases = [
        BoxCase(
            f"every integer N in [0, {_COUNT_RETURNS}]",
            (Var("N", 0, _COUNT_RETURNS, "int"),),
            lambda e: on_ints(e["N"]),
            composed,
        )  # fmt: skip
    ]
    for n in _COUNT_TAIL:  # the code itself: no float holds 2^N log10 2 there
        cases.append(
            BoxCase(f"N = {n}", (), lambda e, n=n: code(ob)(n), lambda e: Raises(OverflowError))
        )
    return cases


box_step(
    "trivial_bounds.chain_all_functions",
    "Trivial bounds",
    "Counting",
    co.DOC0,
    _count_cases,
    f"every N = 0..{_COUNT_RETURNS} (each N where 2^N log10 2 is a float64; the code raises"
    f" OverflowError past it, checked at N = {', '.join(map(str, _COUNT_TAIL))})",
    rtol=Fraction(1, 10**30),
    raises=(OverflowError,),
    facts=("trivial_bounds.count_log10",),
)
