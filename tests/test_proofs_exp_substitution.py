"""Steps with exp over their whole domain (verify/proofs/exp_substitution.py, issue 42): the
three former compact boxes are proved for every value by E = e^u >= 1, and a changed constant,
a domain that is not exactly u >= 0, or an exponent the substitution cannot absorb fail."""

from __future__ import annotations

import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.exp_substitution import _series_at_least_one, exp_step
from verify.proofs.methods import arb_step
from verify.proofs.status import obligation_class

load()
FORMER_BOXES = (
    "lemma_2_9.softmax_weight_simple",
    "lemma_4_2.sequential_exp",
    "hr_thm_6.chi2_integrand",
)
R, sig, c, v, t, E, W = sp.symbols("R sigma c v t E W", real=True)


@pytest.mark.parametrize("ob_id", FORMER_BOXES)
def test_the_former_boxes_hold_on_their_whole_domain(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    hyps, _, _, _ = ob.meta["exp_form"]
    # the stated domain is unbounded: no upper end on the exponent's variable
    assert not any(isinstance(h, sp.LessThan) and h.lhs in (R, v, t) for h in hyps)
    assert obligation_class(ob) == "genuine"
    assert ob.prove().status == "proved" and ob.refute_twin().status == "refuted"


def test_no_registered_step_is_a_box() -> None:
    assert [k for k, ob in OBLIGATIONS.items() if obligation_class(ob) == "box"] == []
    with scratch_registry():
        ob = arb_step(
            "scratch.box",
            "H&R Thm 6",
            "s",
            "",
            {t: (0, 64)},
            sp.exp(-t) <= 1,
            sp.exp(-t) <= sp.Rational(1, 2),
        )
    assert obligation_class(ob) == "box"


def test_the_exponential_series_gives_e_to_the_u_at_least_one() -> None:
    assert _series_at_least_one() is None


def _step(hyps, concl, subst):
    twin = concl.func(concl.lhs, concl.rhs / 2)
    with scratch_registry():
        return exp_step("scratch.exp", "Lemma 4.2", "s", "", hyps, concl, twin, subst)


def test_planted_constants_fail() -> None:
    seq = lambda k: sp.Le(c**2 / ((1 + k * c) * sp.exp(v) - 1) ** 2, sp.exp(-2 * v))  # noqa: E731
    assert _step([c > 0, v >= 0], seq(1), {W: (v, 1)}).prove().status == "proved"
    assert _step([c > 0, v >= 0], seq(sp.Rational(1, 2)), {W: (v, 1)}).prove().status == "failed"
    soft = lambda k: sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(k * R))  # noqa: E731
    dom = [R >= 0, sig >= 0, sig <= 1]
    assert _step(dom, soft(2), {E: (R, 2)}).prove().status == "proved"
    assert _step(dom, soft(1), {E: (R, 2)}).prove().status == "failed"
    assert _step([t >= 0], sp.Le(sp.exp(-t), sp.Rational(9, 10)), {E: (t, 1)}).prove().status == (
        "failed"
    )


def test_the_domain_must_be_exactly_the_exponent_nonnegative() -> None:
    concl = sp.Le(sp.exp(-t), 1)
    assert _step([t >= 0], concl, {E: (t, 1)}).prove().status == "proved"
    wider = _step([t >= -1], concl, {E: (t, 1)}).prove()  # false there: e^1 > 1
    assert wider.status == "failed" and "does not give t >= 0" in wider.detail
    narrower = _step([t >= 1], concl, {E: (t, 1)}).prove()  # E >= 1 would claim more than e^t
    assert narrower.status == "failed" and "E >= 1 is wider" in narrower.detail


def test_a_variable_outside_exp_is_not_substituted() -> None:
    with pytest.raises(ValueError, match="does not make it polynomial"):
        _step([t >= 0], sp.Le(t * sp.exp(-t), 1), {E: (t, 1)})


def test_the_sequential_bound_holds_at_every_exponent() -> None:
    """b = c/((1 + c) e^v - 1) <= e^{-v} for every c > 0, v >= 0 (no exponent fixed at D = 3),
    raised to every power m = D - 1 > 0; the twin fails at c = 1, v = 0, m = 1."""
    ob = OBLIGATIONS["lemma_4_2.sequential_exp"]
    _, concl, _, _ = ob.meta["exp_form"]
    assert not concl.has(sp.Pow) or all(p.exp in (-1, 1) for p in concl.atoms(sp.Pow))
    power = OBLIGATIONS["lemma_4_2.sequential_power"]
    assert obligation_class(power) == "genuine" and "every m > 0" in power.claim
    assert power.prove().status == "proved" and power.refute_twin().status == "refuted"
