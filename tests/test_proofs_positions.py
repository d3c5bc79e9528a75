"""The softmax, attention and group steps for every number of positions (issue 42): proved for
every S (symbolic sums, or induction on S), not at three positions, and still able to fail:
each planted wrong factor, dropped term or off-by-one makes the obligation fail with a
counterexample at a concrete size, and a proof that does not go through without a
counterexample is ``unknown``, never ``failed`` or ``proved``."""

from __future__ import annotations

import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, discharge, scratch_registry
from verify.proofs.methods import sympy_identity
from verify.proofs.positions import SIZE, Instance, Part, induction, sum_induction, unroll
from verify.proofs.status import INSTANCE, obligation_class

load()

GENERAL = (
    "lemma_2_9.softmax_derivative",
    "lemma_2_9.softmax_dp_l1",
    "lemma_2_9.attention_split",
    "lemma_2_9.recursion_monomials",
    "lemma_3_1.covariance_identity",
    "lemma_3_1.variance_second_moment",
    "lemma_3_1.head_output",
    "lemma_3_1.group_combine",
)


@pytest.mark.parametrize("ob_id", GENERAL)
def test_the_position_steps_hold_for_every_size_and_their_twins_are_refuted(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    out = discharge(ob)
    assert out.ok, (out.verdict, out.twin)
    assert ob_id not in INSTANCE and obligation_class(ob) == "genuine"
    assert "every S" in ob.claim or "every K" in ob.claim
    if ob.method == "z3":
        assert "induction" in out.verdict.detail
        assert {p.name.split()[0] for p in ob.meta["parts"]} >= {"base", "step"}
    else:
        assert SIZE in (ob.meta["lhs"] - ob.meta["rhs"]).free_symbols


def _planted_sum(ob_id: str, **changes):
    """The registered sum induction ``ob_id`` rebuilt with ``changes`` and discharged."""
    ob = OBLIGATIONS[ob_id]
    with scratch_registry():
        bad = sum_induction(
            f"{ob_id}.planted", ob.statement, ob.step, ob.doc, **{**ob.meta["spec"], **changes}
        )
        return discharge(bad)


def _spec(ob_id: str, key: str):
    return OBLIGATIONS[ob_id].meta["spec"][key]


def _aggregates(ob_id: str) -> dict[str, sp.Symbol]:
    return {x.name: x for x in _spec(ob_id, "sums")}


def test_dropping_the_2_of_the_softmax_l1_bound_fails_with_a_counterexample() -> None:
    ag = _aggregates("lemma_2_9.softmax_dp_l1")
    out = _planted_sum("lemma_2_9.softmax_dp_l1", concl=sp.Le(ag["sum_dp"], ag["A"]))
    assert out.verdict.status == "failed"
    assert "close" in out.verdict.detail and "S = 3" in out.verdict.detail
    assert out.verdict.point is not None and "p1" in out.verdict.point


def test_a_halved_variance_bound_and_an_unnormalised_softmax_fail() -> None:
    ob_id = "lemma_3_1.variance_second_moment"
    ag, (dl,) = _aggregates(ob_id), _spec(ob_id, "global_hyps")[0].free_symbols
    assert _planted_sum(ob_id, concl=sp.Le(ag["Var_p"], dl**2 / 2)).verdict.status == "failed"
    # the weights need not sum to 1: sum_j p_j u_j <= V Y + b_v is false
    out = _planted_sum("lemma_3_1.head_output", final=())
    assert out.verdict.status == "failed"


def test_cauchy_schwarz_without_the_root_on_one_side_fails() -> None:
    ag = _aggregates("lemma_3_1.group_combine")
    out = _planted_sum("lemma_3_1.group_combine", concl=sp.Le(ag["X"], sp.sqrt(ag["A"]) * ag["B"]))
    assert out.verdict.status == "failed"


def test_a_proof_that_does_not_go_through_is_unknown_not_failed() -> None:
    """The invariant without |M| <= A cannot close the softmax bound, which is still true: no
    counterexample at S = 3, so the verdict is unknown (not proved, not a disproof)."""
    ob_id = "lemma_2_9.softmax_dp_l1"
    weak = tuple(r for r in _spec(ob_id, "invariant") if not r.has(sp.Abs(_aggregates(ob_id)["M"])))
    assert len(weak) == len(_spec(ob_id, "invariant")) - 1
    out = _planted_sum(ob_id, invariant=weak)
    assert out.verdict.status == "unknown" and "close" in out.verdict.detail


def test_a_wrongly_scaled_sum_is_caught() -> None:
    """sum_j p_j / 2 = 1 in place of sum_j p_j = 1 (weights summing to 2): the head's output
    is no longer bounded by V Y + b_v."""
    ob_id = "lemma_3_1.head_output"
    sums = dict(_spec(ob_id, "sums"))
    p = _spec(ob_id, "terms")[0]
    sums[_aggregates(ob_id)["P"]] = p / 2
    assert _planted_sum(ob_id, sums=sums).verdict.status == "failed"


def test_contradictory_final_hypotheses_are_vacuous() -> None:
    ag = _aggregates("lemma_3_1.head_output")
    out = _planted_sum("lemma_3_1.head_output", final=(sp.Eq(ag["P"], 1), sp.Eq(ag["P"], 2)))
    assert out.verdict.status == "vacuous"


def _planted_identity(ob_id: str, rhs: sp.Expr):
    ob = OBLIGATIONS[ob_id]
    with scratch_registry():
        bad = sympy_identity(
            f"{ob_id}.planted",
            ob.statement,
            ob.step,
            ob.doc,
            ob.meta["lhs"],
            rhs,
            rhs,
            positive=False,
            instance=ob.meta["instance"],
        )
        return discharge(bad)


def _sums(e: sp.Expr) -> list[sp.Sum]:
    return sorted(e.atoms(sp.Sum), key=str)


def test_the_softmax_derivative_without_its_outer_product_or_with_2m_fails() -> None:
    ob = OBLIGATIONS["lemma_2_9.softmax_derivative"]
    rhs = ob.meta["rhs"]
    (mean_sum,) = [s for s in _sums(rhs) if s.has(sp.IndexedBase("t", real=True))]
    for planted in (rhs.subs(mean_sum, 0), rhs.subs(mean_sum, 2 * mean_sum)):
        out = _planted_identity(ob.id, planted)
        assert out.verdict.status == "failed", planted
        assert "S = 3" in out.verdict.detail


def test_the_attention_split_with_an_off_by_one_sum_or_without_b_v_fails() -> None:
    ob = OBLIGATIONS["lemma_2_9.attention_split"]
    rhs = ob.meta["rhs"]
    split = [s for s in _sums(rhs) if s.has(sp.Symbol("b_v", real=True))]  # sum dp (v' - b_v)
    assert split
    (j, lo, hi) = split[0].limits[0]
    short = rhs.subs(split[0], sp.Sum(split[0].function, (j, lo, hi - 1)))  # S -> S - 1
    bv = sp.Symbol("b_v", real=True)
    (mass,) = [t for t in rhs.args if t.has(bv) and not isinstance(t, sp.Sum)]
    no_bv = rhs - mass  # the term b_v (sum p' - sum p) dropped
    for planted in (short, no_bv):
        assert _planted_identity(ob.id, planted).verdict.status == "failed", planted


def test_the_covariance_identity_with_a_doubled_mean_fails() -> None:
    ob = OBLIGATIONS["lemma_3_1.covariance_identity"]
    m = sp.Symbol("m", real=True)
    assert _planted_identity(ob.id, ob.meta["rhs"].subs(m, 2 * m)).verdict.status == "failed"


def test_the_recursion_step_without_the_new_norm_is_not_proved() -> None:
    """The step's product P in place of P rho_{K+1}: the invariant is not kept (the claim at
    K = 3 still holds, so the verdict is unknown); a claim without c0's share fails at K = 3."""
    ob = OBLIGATIONS["lemma_2_9.recursion_monomials"]
    base, step = ob.meta["parts"]
    rho = next(h.lhs for h in step.hyps if h == sp.Ge(h.lhs, 1) and h.lhs.name == "rho")
    p = sp.Symbol("P", real=True)
    wrong = Part(step.name, step.hyps, tuple(g.subs(p * rho, p) for g in step.goals))
    inst: Instance = ob.meta["instance"]
    with scratch_registry():
        args = (ob.statement, ob.step, ob.doc, (base, wrong))
        a = induction("planted.step", *args, inst, "")
        twin_as_claim = Instance(inst.size, inst.hyps, inst.twin, inst.twin, inst.name)
        b = induction("planted.claim", *args, twin_as_claim, "")
        va, vb = discharge(a).verdict, discharge(b).verdict
    assert va.status == "unknown" and "step" in va.detail
    assert vb.status == "failed" and "K = 3" in vb.detail


def test_unroll_writes_the_sums_out_at_a_size() -> None:
    j = sp.Symbol("j", integer=True, positive=True)
    x = sp.IndexedBase("x", real=True)
    x1, x2, x3 = sp.symbols("x1 x2 x3", real=True)
    assert unroll(sp.Sum(x[j] ** 2, (j, 1, SIZE)), 3) == x1**2 + x2**2 + x3**2
    assert unroll(sp.Sum(x[j], (j, 1, SIZE - 1)), 3) == x1 + x2


def test_a_step_can_cite_a_general_claim_through_its_schema() -> None:
    """``uses=`` instantiates the claim over the sums' symbols: the variance bound at
    Var_p = v gives v <= delta^2, not v <= delta^2 / 2; weights summing to 2 are refused."""
    from verify.proofs.methods import Use, check_uses

    v, dl, m = sp.symbols("v dl mu", real=True)
    ob_id = "lemma_3_1.variance_second_moment"
    at = {"Var_p": v, "delta": dl, "P": 1, "M": m, "m": m}
    assert check_uses([dl >= 0, v <= dl**2], [Use(ob_id, at, v <= dl**2)]) is None
    half = check_uses([dl >= 0, v <= dl**2 / 2], [Use(ob_id, at, v <= dl**2 / 2)])
    assert half is not None and half.status == "failed"
    two = check_uses([dl >= 0, v <= dl**2], [Use(ob_id, {**at, "P": 2}, v <= dl**2)])
    assert two is not None and "premise" in two.detail
    # a root's argument must be shown non-negative: the sums of squares are premises
    a, b, x = sp.symbols("a b x", real=True)
    cs = Use("lemma_3_1.group_combine", {"X": x, "A": a, "B": b}, x <= sp.sqrt(a) * sp.sqrt(b))
    assert check_uses([a >= 0, b >= 0, x <= sp.sqrt(a) * sp.sqrt(b)], [cs]) is None
    assert check_uses([x <= sp.sqrt(a) * sp.sqrt(b)], [cs]) is not None
