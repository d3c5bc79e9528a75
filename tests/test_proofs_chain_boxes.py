"""Chains proved by interval branch and bound (verify/proofs/chain_boxes.py): the code run in
interval arithmetic over the whole stated domain, compared with a composition; planted
weakenings caught, empty and degenerate boxes rejected, the evidence classes."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from verify.proofs import load
from verify.proofs.box_arith import compile_num, on_box
from verify.proofs.chain_boxes import (
    BoxCase,
    Raises,
    Var,
    box_step,
    float_key,
    key_float,
    prove_case,
)
from verify.proofs.core import OBLIGATIONS, discharge, scratch_registry
from verify.proofs.status import obligation_class
from verify.theory.probability import ProbabilityError, checked_probability
from verify.validation import check_int, check_real

load()

X = sp.Symbol("x", positive=True)
RTOL = Fraction(1, 10**4)


def bump(x: float) -> float:
    """A coded formula: 2 sqrt(x) e^{-x}."""
    return 2.0 * math.sqrt(x) * math.exp(-x)


def bump_halved(x: float) -> float:
    """The planted weakening: its constant halved."""
    return 1.0 * math.sqrt(x) * math.exp(-x)


def bump_nudged(x: float) -> float:
    """A weakening of 1e-3 relative, far below what sampled points at 1e-2 would see."""
    return 2.002 * math.sqrt(x) * math.exp(-x)


def kink(x: float) -> float:
    """A coded branch: max(x, 2x - 1) written as an if."""
    if x <= 1.0:
        return x
    return 2.0 * x - 1.0


def kink_shifted(x: float) -> float:
    if x <= 1.0:
        return x
    return 2.0 * x - 1.5


def _bump_case(fn, lo=Fraction(1, 10), hi=Fraction(10), fixed=False) -> BoxCase:
    coded, composed = on_box(fn), compile_num(2 * sp.sqrt(X) * sp.exp(-X))
    return BoxCase(
        "x in [1/10, 10]", (Var("x", lo, hi, fixed=fixed),), lambda e: coded(e["x"]), composed
    )


def test_the_code_equal_to_its_composition_is_proved_on_the_whole_box() -> None:
    out = prove_case(_bump_case(bump), RTOL)
    assert out.status == "proved" and out.boxes > 1


@pytest.mark.parametrize("weakened", [bump_halved, bump_nudged])
def test_a_planted_weakening_is_caught_with_its_point(weakened) -> None:
    out = prove_case(_bump_case(weakened), RTOL)
    assert out.status == "failed" and "x" in out.point
    x = Fraction(out.point["x"])
    assert Fraction(1, 10) <= x <= 10


def test_the_twin_weakening_is_caught() -> None:
    assert prove_case(_bump_case(bump), RTOL, weaken=Fraction(1, 2)).status == "failed"


def test_a_reversed_box_is_vacuous_and_a_collapsed_one_degenerate() -> None:
    out = prove_case(_bump_case(bump_halved, Fraction(10), Fraction(1, 10)), RTOL)
    assert out.status == "vacuous" and "lo > hi" in out.detail
    out = prove_case(_bump_case(bump_halved, Fraction(2), Fraction(2)), RTOL)
    assert out.status == "degenerate"
    # declared as one value it is a point instance, compared exactly there
    assert prove_case(_bump_case(bump, Fraction(2), Fraction(2), fixed=True), RTOL).status == (
        "proved"
    )
    assert prove_case(_bump_case(bump_halved, 2, 2, fixed=True), RTOL).status == "failed"


def test_an_unbounded_real_side_is_refused() -> None:
    with pytest.raises(ValueError, match="not finite"):
        Var("x", 0.0, math.inf)
    with pytest.raises(ValueError, match="int bounds"):
        Var("n", 0, 1.5, "int")


def _kink_case(fn, kind: str) -> BoxCase:
    coded, comp = on_box(fn), compile_num(sp.Max(X, 2 * X - 1))
    lo, hi = (0.0, 3.0) if kind == "float" else (Fraction(0), Fraction(3))
    return BoxCase("x in [0, 3]", (Var("x", lo, hi, kind),), lambda e: coded(e["x"]), comp)


def test_a_branch_is_decided_by_splitting_at_it_in_float_order() -> None:
    out = prove_case(_kink_case(kink, "float"), Fraction(0))  # exact: linear pieces
    assert out.status == "proved"
    assert prove_case(_kink_case(kink_shifted, "float"), RTOL).status == "failed"
    # on a real side the boxes around x = 1 straddle the branch for ever: never proved
    out = prove_case(_kink_case(kink, "real"), Fraction(0), max_boxes=500)
    assert out.status == "unknown" and abs(float(out.point["x"]) - 1) < 1e-3


def test_an_integer_side_is_enumerated_where_the_code_needs_an_int() -> None:
    def coded(e):
        return 1 << e["n"]

    case = BoxCase("integer n in [0, 200]", (Var("n", 0, 200, "int"),), coded,
                   lambda e: Fraction(2) ** e["n"])  # fmt: skip
    out = prove_case(case, Fraction(0))
    assert out.status == "proved" and out.boxes >= 201

    def off_at_137(e):
        return Fraction(2) ** e["n"] * (1 + Fraction(e["n"] == 137, 10**6))

    case = BoxCase("integer n in [0, 200]", (Var("n", 0, 200, "int"),), coded, off_at_137)
    out = prove_case(case, Fraction(0))
    assert out.status == "failed" and out.point == {"n": 137}


def test_float_order_round_trips() -> None:
    for x in (0.0, -0.0, 1.0, math.nextafter(1.0, 2.0), -5e-324, 5e-324, 1e308, -2.5):
        assert key_float(float_key(x)) == x and math.copysign(1, key_float(float_key(x))) == (
            math.copysign(1, x)
        )
    assert float_key(-0.0) + 1 == float_key(0.0)
    assert float_key(1.0) + 1 == float_key(math.nextafter(1.0, 2.0))


def _probability_cases(fn) -> list[BoxCase]:
    coded = on_box(fn)
    out = []
    for lo, hi, inside in ((-1e308, -5e-324, False), (-0.0, 1.0, True),
                           (math.nextafter(1.0, 2.0), 1e308, False)):  # fmt: skip
        out.append(BoxCase(
            f"p in [{lo}, {hi}] (floats)", (Var("p", lo, hi, "float"),),
            lambda e, coded=coded: coded("p", e["p"]),
            (lambda e: e["p"]) if inside else (lambda e: Raises(ProbabilityError)),
        ))  # fmt: skip
    return out


def test_every_float_decides_a_probability_check() -> None:
    for case in _probability_cases(checked_probability):
        assert prove_case(case, Fraction(0), raises=(ProbabilityError,)).status == "proved"

    def lenient(name: str, value: float) -> float:  # issue 42: accepts up to 1 + 1e-6
        v = float(value)
        if math.isnan(v) or not 0.0 <= v <= 1.000001:
            raise ProbabilityError(name)
        return v

    outs = [prove_case(c, Fraction(0), raises=(ProbabilityError,))
            for c in _probability_cases(lenient)]  # fmt: skip
    bad = [o for o in outs if o.status == "failed"]
    assert len(bad) == 1 and 1.0 < bad[0].point["p"] <= 1.000001


@pytest.mark.parametrize(("sub_box", "cls"), [("", "chain proved"), ("x <= 10 only", "box")])
def test_the_obligation_and_its_class(sub_box: str, cls: str) -> None:
    with scratch_registry():
        case = _bump_case(bump)
        case = BoxCase(case.domain, case.box, case.coded, case.composed, sub_box)
        box_step("attempt.bump", "Lemma 2.9", "attempt", "", lambda: [case], "x in [1/10, 10]",
                 rtol=RTOL)  # fmt: skip
        ob = OBLIGATIONS["attempt.bump"]
        assert obligation_class(ob) == cls
        out = discharge(ob)
        assert out.verdict.status == "proved" and out.twin.status == "refuted"
        assert ("sub-box" in out.verdict.detail) == bool(sub_box)


def unchecked_threshold(d_model: int, sigma: float, probability: float) -> float:
    """noise_variance_threshold as it was: q >= 0 checked, q <= 1 not."""
    d = check_int("d_model", d_model, minimum=2)
    sigma = check_real("sigma", sigma, strictly_positive=True)
    q = check_real("probability", probability, minimum=0.0)
    return float(stats.chi2.ppf(q, d - 1) * sigma**2 / d)


def test_a_threshold_accepting_a_probability_above_one_fails_its_chain(monkeypatch) -> None:
    """The edge "probabilities near 1": noise_variance_threshold used to check only q >= 0 and
    returned NaN from scipy for q > 1; the chain's edge boxes run the code's own checks on every
    float above 1 (and the code itself at the midpoints) and fail there."""
    from verify.theory import hahn_rofin

    ob = OBLIGATIONS["hr_thm_6.chain_variance_threshold"]
    assert ob.prove().status == "proved"
    monkeypatch.setattr(hahn_rofin, "noise_variance_threshold", unchecked_threshold)
    verdict = ob.prove()
    assert verdict.status == "failed" and verdict.point["q"] > 1 and "nan" in verdict.detail


def _first_layers_norm(params):
    """last_norm_affine reading norm2 of the first layer (not the last): a layout slip."""
    name = "final_norm" if params.config.norm_first else "layers.0.norm2"
    g, b = params[f"{name}.weight"], params[f"{name}.bias"]
    if not params.config.ln_affine:
        return np.ones(params.config.d_model), np.zeros(params.config.d_model)
    return np.asarray(g, float), np.asarray(b, float)


def test_the_trivial_bounds_read_the_readouts_layer_norm(monkeypatch) -> None:
    """On symbols for every D and L: a gain read from another layer is another symbol."""
    from verify.theory import trivial

    ob = OBLIGATIONS["trivial_bounds.chain_output_swing"]
    assert ob.prove().status == "proved"
    monkeypatch.setattr(trivial, "last_norm_affine", _first_layers_norm)
    verdict = ob.prove()
    assert verdict.status == "failed" and verdict.point["norm_first"] == "False"


MINE = {  # issue 42's sampled chains of this scope, and how each is proved now
    "trivial_bounds.chain_output_swing": "chain proved",
    "trivial_bounds.chain_output_abs": "chain proved",
    "trivial_bounds.chain_readout_swing": "chain proved",
    "trivial_bounds.chain_sensitivity_swing": "chain proved",
    "trivial_bounds.chain_all_functions": "chain proved",
    "trivial_bounds.chain_probability": "chain proved",
    "hr_cor_5.chain_bound": "chain proved",
    "hr_cor_5.chain_omega": "chain proved",
    "hr_cor_5.chain_log10_bound": "chain proved",
    "hr_thm_6.chain_variance_threshold": "chain proved",
    "hr_thm_6.chain_cap_threshold": "chain proved",
    "prop_3_5.chain_cap": "instance",  # the layout enumerated
    "prop_3_5.chain_box_norms": "instance",  # every B, the layout enumerated
    "lemma_2_9.chain_parameter_norms": "instance",  # every entry, the layout enumerated
}


def test_the_chains_of_this_scope_and_their_classes() -> None:
    for ob_id, cls in MINE.items():
        ob = OBLIGATIONS[ob_id]
        assert obligation_class(ob) == cls, ob_id
        out = discharge(ob)
        assert out.verdict.status == "proved" and out.twin.status == "refuted", ob_id
