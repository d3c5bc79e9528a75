"""Facts checked, not cited (issue 42): every citation of one obligation by another in
``facts=`` is a checked ``Use`` (its substitution checked by ``check_uses`` on every ``prove``),
or it is listed below with the reason it remains a label. A chain's citations are compositions
(the steps whose expressions it evaluates), not hypotheses, and are not listed.

The planted tests: a linked step fails ``prove`` when its use's substitution is wrong, or when
the cited obligation's conclusion is weakened."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
import z3

from verify.proofs import load
from verify.proofs.citations import citation_counts, obligation_citations
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.methods import Use, _cited_claim, check_uses
from verify.proofs.z3_encoding import _z3_check, side_conditions

load()

# ---- the reasons a citation stays a label
_IDENTITY = (
    "the citing step has no hypotheses (a sympy identity, an arb box claim): the cited fact"
    " is the bound it rewrites, with nothing for a use to stand for"
)
_VECTOR = (
    "the cited claim is about coordinates, positions or heads (an identity of vectors or"
    " matrices, a per-coordinate ReLU bound, a Jacobian, a per-head or per-position bound)"
    " while the step's hypotheses are norms of sums of such terms (triangle, Minkowski); no"
    " substitution maps one to the other"
)
_STATEMENT = (
    "a statement-level dependency: the step's hypotheses define an event or count whose"
    " probability or cardinality the cited step bounds; no scalar conclusion of it enters"
)
_CHAIN = "the cited obligation is a chain (code = composition): it has no formal claim"
_EXPECTATION = (
    "the cited pointwise bound is integrated over x (an expectation or a sum over strings);"
    " a use instantiates, it does not integrate"
)
_LOG = (
    "the link is through exp, log or symbolic powers (e^{s_j}, E = e^{2R}, log N, N^zeta),"
    " which z3 (the use check) cannot encode"
)
_PROVENANCE = (
    "the cited step is where the compared expressions come from (its bound's terms); no"
    " hypothesis of this step is its conclusion"
)
_ENUMERATED = "the cited obligation is checked by enumeration (custom): no formal claim"
_INDUCTION = (
    "Lemma 3.2's product over K layer norms is proved by induction on K (parts, no scalar"
    " schema to instantiate); its factors are in [1, 1 + m] with m abstract, and the link"
    " tau <= 1 + z, z <= m = eps^{-1/2} is lemma_3_2.product_induction's (a checked use)"
)

ALLOWED: dict[tuple[str, str], str] = {
    ("lemma_2_9.ln_endpoint", "lemma_2_9.ln_unit_chord"): _IDENTITY,
    ("lemma_2_9.softmax_dp_l1", "lemma_2_9.softmax_derivative"): _LOG,
    ("lemma_2_9.softmax_dp_l1_any_s", "lemma_2_9.softmax_derivative"): _LOG,
    ("lemma_2_9.softmax_weight", "lemma_2_9.logit_bound"): _LOG,
    ("lemma_2_9.softmax_weight_simple", "lemma_2_9.softmax_weight"): _LOG,
    ("lemma_2_9.softmax_weight_simple_all_r", "lemma_2_9.softmax_weight_simple"): _LOG,
    ("lemma_2_9.logit_change", "lemma_3_1.logit_identity"): _VECTOR,
    ("lemma_2_9.other_position", "lemma_2_9.attention_split"): _VECTOR,
    ("lemma_2_9.other_position", "lemma_2_9.softmax_dp_l1"): _VECTOR,
    ("lemma_2_9.other_position", "lemma_2_9.softmax_weight_simple"): _LOG,
    ("lemma_2_9.other_position", "lemma_2_9.logit_change"): _VECTOR,
    ("lemma_2_9.flip_range", "lemma_2_9.logit_change"): _PROVENANCE,
    ("lemma_2_9.flip_position", "lemma_2_9.attention_split"): _VECTOR,
    ("lemma_2_9.flip_position", "lemma_3_1.covariance_identity"): _VECTOR,
    ("lemma_2_9.mlp_residual", "lemma_2_9.relu_lipschitz"): _VECTOR,
    ("lemma_3_1.ln_jacobian_norm", "lemma_3_1.ln_jacobian"): _VECTOR,
    ("lemma_3_1.ln_step", "lemma_3_1.ln_decomposition"): _VECTOR,
    ("lemma_3_1.value_term", "lemma_3_1.value_identity"): _VECTOR,
    ("lemma_3_1.reweighting", "lemma_3_1.covariance_identity"): _VECTOR,
    ("lemma_3_1.reweighting", "lemma_3_1.logit_identity"): _VECTOR,
    ("lemma_3_1.ffn_bound", "lemma_3_1.ffn_identity"): _VECTOR,
    ("lemma_3_1.ffn_bound", "lemma_2_9.relu_lipschitz"): _VECTOR,
    ("lemma_3_1.ffn_bound", "lemma_3_1.value_identity"): _VECTOR,
    ("lemma_3_1.readout_bound", "lemma_3_1.readout_identity"): _VECTOR,
    ("lemma_3_1.out_proj_bound", "lemma_3_1.out_proj_identity"): _VECTOR,
    ("lemma_3_1.out_proj_bound", "lemma_3_1.head_output"): _VECTOR,
    ("lemma_3_1.covariance_identity", "lemma_2_9.softmax_derivative"): _IDENTITY,
    ("lemma_3_1.ffn_identity", "lemma_2_9.relu_lipschitz"): _IDENTITY,
    ("lemma_3_1.ffn_identity", "lemma_3_1.value_identity"): _IDENTITY,
    ("trivial_bounds.count_log10", "trivial_bounds.function_count"): _ENUMERATED,
    ("cor_4_3.power", "cor_4_3.good_event"): _IDENTITY,
    ("cor_4_3.threshold", "cor_4_3.log_form"): _LOG,
    ("lemma_3_2.variance_le_norm", "small_ball.variance_projection"): _VECTOR,
    ("cor_3_3.compose", "lemma_3_2.product"): _INDUCTION,
    ("lemma_3_2.product", "lemma_3_2.z_max"): _INDUCTION,
    ("cor_4_3.good_event", "lemma_4_2.neighbourhood"): _STATEMENT,
    ("cor_4_6.family_zero_sensitive", "cor_4_6.label_kept"): _STATEMENT,
    ("cor_4_6.family_zero_sensitive", "cor_4_3.good_event"): _STATEMENT,
    ("cor_4_6.bound", "cor_4_6.family_zero_sensitive"): _STATEMENT,
    ("cor_4_6.bound", "thm_4_5.chain_series"): _CHAIN,
    ("cor_4_6.label_kept", "cor_4_3.threshold"): _LOG,
    ("thm_4_5.margin_reading", "cor_4_3.log_form"): _LOG,
    ("thm_4_5.margin_reading", "cor_4_3.power"): _LOG,
    ("hr_cor_5.required_blowup", "hr_cor_5.omega_le_cr"): _EXPECTATION,
}

# ---- the eps = 0, Hahn & Rofin and coverage steps (eps_zero*, hahn_rofin, coverage*): every
# citation of an obligation there that is still a label, with its reason (none of them is a
# hypothesis a use could stand for with the current forms)
_READING = (
    "not a premise of the claim: the cited step is what the citing step's conclusion is then"
    " used for (z3 proves the citing step from its domain alone; no hypothesis stands for it)"
)
_GAMMA = (
    "the cited identity is in Gamma functions of a symbolic h (binomial coefficients), which"
    " z3 (the use check) cannot encode; the citing step carries its instance as a relation"
    " between opaque counts (B = C odd N, B <= 2 C even N)"
)
_CASES = (
    "a case split by parity: the hypothesis B^2 pi N <= 8 P^2 is tie_count_odd's conclusion"
    " for odd N and tie_count_even's for even N; a use instantiates one fact on the whole"
    " domain (each case's premises, 2h = N + 1 or 2h = N, hold on half of it)"
)
_CUSTOM_CITING = (
    "the citing step is a custom check at fixed sizes (no hypotheses): the cited steps are the"
    " derivation of the series it evaluates, with nothing for a use to stand for"
)
_CUSTOM = (
    "both steps are custom procedures (sympy counts): neither has hypotheses and a conclusion"
    " for a use to instantiate"
)
_REPROVED = (
    "the citing step proves the cited inequality's instance itself (the exp form through E ="
    " e^v, for every c > 0, v >= 0): z3 proves it from the domain alone, no hypothesis stands"
    " for the cited step (and exp_substitution.exp_step takes no uses=)"
)
_POWER = (
    "the citing step is a custom sympy check (no hypotheses): x -> x^m increasing for every"
    " m > 0 applied to the cited bound b <= e^{-v}, with a symbolic exponent z3 cannot encode"
)
ALLOWED_EPS_ZERO_HR_COVERAGE: dict[tuple[str, str], str] = {
    ("small_ball.compose", "small_ball.density"): _IDENTITY,
    ("small_ball.compose", "small_ball.variance_projection"): _IDENTITY,
    ("small_ball.z_tail", "small_ball.compose"): _READING,
    # beta > t forces some z_kn > s (the event the union bound covers)
    ("lemma_4_2.union", "lemma_4_2.union_threshold"): _STATEMENT,
    # {z > s} inside {var < s^-2}: the inclusion under axiom.probability_range's (checked) use
    ("lemma_4_2.union", "small_ball.z_tail"): _STATEMENT,
    # p_var <= C T is the small-ball bound at delta = s^-2: delta^{(D-1)/2}, Gamma((D+1)/2)
    ("lemma_4_2.union", "small_ball.compose"): _LOG,
    ("lemma_4_2.sequential_exp", "lemma_4_2.sequential_shift"): _REPROVED,
    ("lemma_4_2.sequential_power", "lemma_4_2.sequential_exp"): _POWER,
    ("lemma_4_4.slice_quadratic", "lemma_4_4.gram_det"): _IDENTITY,
    **{
        ("thm_4_5.series_order", cited): _CUSTOM_CITING
        for cited in (
            "lemma_4_2.gamma_tail",
            "thm_4_5.power_mean",
            "lemma_4_2.sequential_shift",
            "cor_4_3.good_event",
        )
    },
    ("thm_4_5.series_convergence", "thm_4_5.series_order"): _CUSTOM_CITING,
    ("thm_4_5.series_convergence", "thm_4_5.summable_iff"): _CUSTOM_CITING,
    # the margin, the per-edge flip bound (Lemma 2.9's constants) and am-gm hold per sensitive
    # edge and are summed over the edges: 2 xi as_N 2^N <= L <= ||w|| C 2^N B
    ("hr_cor_5.average", "hr_cor_5.margin"): _EXPECTATION,
    ("hr_cor_5.average", "hr_cor_5.am_gm"): _EXPECTATION,
    ("hr_cor_5.average", "lemma_2_9.constant_off_readout"): _EXPECTATION,
    ("hr_cor_5.average", "lemma_2_9.constant_at_readout"): _EXPECTATION,
    ("hr_cor_5.average", "hr_cor_5.edge_symmetry"): _ENUMERATED,
    ("hr_thm_6.chi2_power", "hr_thm_6.chi2_integrand"): _IDENTITY,
    ("hr_thm_6.union", "small_ball.variance_projection"): _VECTOR,
    # the cap's threshold is read against the blowup Cor 5 requires (prose.hr_thm_6.reading)
    ("hr_thm_6.cap_threshold", "hr_cor_5.required_blowup"): _READING,
    ("hr_thm_6.cap_growth", "hr_thm_6.chi2_power"): _IDENTITY,
    ("hr_thm_6.cap_growth", "hr_thm_6.union"): _IDENTITY,
    ("sec_6_random_functions.b2_term", "sec_6_random_functions.neighbourhoods"): _IDENTITY,
    # h'(x) > 0 for the derivative h' of h = x ln 2 - c ln x + ln(1 - s) (a log identity)
    ("sec_5_majority.tail_increasing", "sec_5_majority.tail_derivative"): _LOG,
    # both custom sympy counts for every N (by flipped coordinates): no formal claim either way
    ("sec_6_random_functions.biased_mean", "sec_6_random_functions.neighbourhoods"): _CUSTOM,
    ("sec_5_majority.tie_count_odd", "sec_5_majority.pascal"): _GAMMA,
    ("sec_5_majority.tie_count_even", "sec_5_majority.ratio"): _GAMMA,
    ("sec_5_majority.lower_bound", "sec_5_majority.tie_count_odd"): _CASES,
    ("sec_5_majority.lower_bound", "sec_5_majority.tie_count_even"): _CASES,
    # K_0 = 2^N - B: the strings off the tie weights (tie_strings) among all 2^N (weight_classes)
    ("sec_5_majority.lower_bound", "sec_5_majority.tie_strings"): _STATEMENT,
    ("sec_5_majority.lower_bound", "sec_5_majority.weight_classes"): _STATEMENT,
    # K_0(N) = 0 < N^e is Cor 4.6's premise (the chain checks K_0 = 0); Cor 4.6's bound and the
    # series' convergence are what the premise is then used for
    **{
        (f"cor_5_{k}.from_cor_4_6", cited): reason
        for k in (1, 2, 3, 4)
        for cited, reason in (
            (f"cor_5_{k}.chain_premise", _CHAIN),
            ("cor_4_6.bound", _READING),
            ("thm_4_5.series_convergence", _ENUMERATED),
        )
    },
}
ALLOWED.update(ALLOWED_EPS_ZERO_HR_COVERAGE)


def test_every_label_is_listed_with_its_reason() -> None:
    labels = {(c.citing, c.cited) for c in obligation_citations() if c.kind == "label"}
    unlisted = sorted(labels - set(ALLOWED))
    assert not unlisted, f"citations that are neither a checked use nor listed: {unlisted}"
    # a listed citation that is now a checked use (or gone) leaves the list
    stale = sorted(set(ALLOWED) - labels)
    assert not stale, f"listed but no longer a label: {stale}"


def test_the_counts_add_up() -> None:
    counts = citation_counts()
    cites = obligation_citations()
    assert sum(counts.values()) == len(cites)
    assert counts["checked"] == sum(
        len({u.fact for u in ob.meta.get("uses", ()) if u.fact in OBLIGATIONS})
        for ob in OBLIGATIONS.values()
    )
    assert counts["checked"] >= 20  # 11 before the links of issue 42


def _hyps(ob) -> tuple:
    """The hypotheses a step's uses are checked against: a z3 step's, or for an induction on
    the size (verify.proofs.positions) its global and per-position ones."""
    return ob.meta["hyps"] if "hyps" in ob.meta else ob.meta["use_hyps"]


def _linked() -> list[tuple[str, int]]:
    """(citing obligation, index of its use) for every use citing an obligation (the axiom
    schemas' uses: tests/test_proofs_axiom_schemas.py)."""
    return [
        (k, i)
        for k, ob in OBLIGATIONS.items()
        for i, u in enumerate(ob.meta.get("uses", ()))
        if u.fact in OBLIGATIONS
    ]


def _weaker(rel: sp.Basic) -> sp.Basic:
    """A strictly weaker conclusion: the bound moved by 1 (an equality becomes <=)."""
    if isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan)):
        return rel.func(rel.lhs, rel.rhs - 1)
    if isinstance(rel, sp.Equality):
        return sp.Le(rel.lhs, rel.rhs + 1)
    return rel.func(rel.lhs, rel.rhs + 1)


def _holds_alone(hyp: sp.Basic) -> bool:
    """The hypothesis holds wherever it is defined (no fact is needed for it)."""
    return _z3_check(side_conditions(hyp), hyp)[1] == z3.unsat


@pytest.mark.parametrize(("oid", "i"), _linked())
def test_a_weakened_cited_conclusion_fails_the_citing_step(oid: str, i: int) -> None:
    """The cited conclusion moved by 1 fails the step, naming the fact; unless the hypothesis
    holds wherever it is defined, as the cited conclusion then does (an identity,
    H(z, z') <= sqrt(z z')): no weakening of a fact that holds everywhere can matter."""
    ob = OBLIGATIONS[oid]
    assert check_uses(_hyps(ob), ob.meta["uses"]) is None
    fact = ob.meta["uses"][i].fact
    if _holds_alone(ob.meta["uses"][i].hyp):
        assert _holds_alone(_cited_claim(fact)[1]), (oid, fact)
        return
    cited = OBLIGATIONS[fact]
    if "schema" in cited.meta:  # an induction on the size: its scalar schema
        schema = cited.meta["schema"]
        weak_schema = dataclasses.replace(schema, concl=_weaker(schema.concl))
        weak = dataclasses.replace(cited, meta={**cited.meta, "schema": weak_schema})
    elif "concl" in cited.meta:
        weak = dataclasses.replace(
            cited, meta={**cited.meta, "concl": _weaker(cited.meta["concl"])}
        )
    else:  # a sympy identity lhs = rhs, weakened to lhs <= rhs + 1 (a z3 claim)
        eq = sp.Eq(cited.meta["lhs"], cited.meta["rhs"])
        weak = dataclasses.replace(cited, method="z3", meta={"hyps": (), "concl": _weaker(eq)})
    with scratch_registry():
        OBLIGATIONS[fact] = weak
        v = ob.prove()
    assert v.status == "failed" and fact in v.detail, (oid, fact, v)


@pytest.mark.parametrize(("oid", "i"), _linked())
def test_a_wrong_substitution_fails_the_citing_step(oid: str, i: int) -> None:
    """Each use's instance with one variable moved (x -> 2x + 1): some such move no longer
    gives its hypothesis (or meets its premises); a fact that holds everywhere (an identity)
    is true at every instance, so there is nothing to catch."""
    ob = OBLIGATIONS[oid]
    uses = list(ob.meta["uses"])
    u = uses[i]
    assert check_uses(_hyps(ob), uses) is None
    if _holds_alone(_cited_claim(u.fact)[1]):  # an identity: every instance of it is true
        return
    failed = []
    for name, value in u.subst.items():
        bad = dict(u.subst)
        bad[name] = 2 * sp.sympify(value) + 1
        uses[i] = Use(u.fact, bad, u.hyp)
        failed.append(check_uses(_hyps(ob), uses) is not None)
    assert any(failed), f"{oid}: no wrong substitution of {u.fact} is caught"
