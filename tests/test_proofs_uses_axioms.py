"""Facts checked, not cited, in the eps = 0, Hahn & Rofin and coverage steps (issue 42): the
hypotheses that stand for an axiom (through its scalar schema) or for another step's conclusion
name it with uses=, and each is a checked instance: weakening the cited fact in the
substitution (the bound doubled, the threshold halved, a premise moved) fails the step."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS
from verify.proofs.methods import check_uses

load()

LINKED = {
    "small_ball.density": {"small_ball.line_segment", "axiom.fubini_density"},
    "lemma_4_2.union": {"axiom.union_bound", "axiom.probability_range"},
    "lemma_4_2.neighbourhood": {"axiom.union_bound", "axiom.markov"},
    "lemma_4_4.sign_kept": {
        "cor_4_3.good_event",
        "cor_4_3.per_flip",
        "lemma_2_9.constant_off_readout",
    },
    "hr_thm_6.union": {"axiom.union_bound", "axiom.anderson"},
    "sec_5_majority.tie_count_odd": {"axiom.central_binomial"},
    "sec_5_majority.tie_count_even": {"axiom.central_binomial"},
    "sec_5_majority.exact_test": {"sec_5_majority.lower_bound"},
    "thm_4_5.margin_reading": {
        "cor_4_3.threshold",
        "axiom.log_monotone",
        "cor_4_3.good_event",
        "cor_4_3.per_flip",
        "lemma_2_9.constant_off_readout",
        "cor_4_6.label_kept",
    },
}


@pytest.mark.parametrize("ob_id", sorted(LINKED))
def test_the_linked_steps_hold_and_name_their_facts(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    assert {u.fact for u in ob.meta["uses"]} == LINKED[ob_id]
    assert check_uses(ob.meta["hyps"], ob.meta["uses"]) is None
    for u in ob.meta["uses"]:
        assert u.fact in ob.facts and u.fact in ob.claim


# (obligation, fact, the symbol whose instance is changed, its wrong value)
WRONG = [
    ("small_ball.density", "axiom.fubini_density", "lint", lambda v: 2 * v),
    ("small_ball.density", "small_ball.line_segment", "a", lambda v: v / 2),
    ("lemma_4_2.union", "axiom.union_bound", "s", lambda v: 2 * v),
    ("lemma_4_2.union", "axiom.probability_range", "pb", lambda v: 2 * v),
    ("lemma_4_2.neighbourhood", "axiom.union_bound", "s", lambda v: 2 * v),
    ("lemma_4_2.neighbourhood", "axiom.markov", "a", lambda v: v / 2),
    ("lemma_4_4.sign_kept", "cor_4_3.good_event", "t", lambda v: v / 2),
    ("hr_thm_6.union", "axiom.union_bound", "s", lambda v: 2 * v),
    ("hr_thm_6.union", "axiom.anderson", "p0", lambda v: 2 * v),
    ("sec_5_majority.tie_count_odd", "axiom.central_binomial", "f", lambda v: 2 * v),
    ("sec_5_majority.tie_count_even", "axiom.central_binomial", "pi", lambda v: v / 4),
    ("sec_5_majority.exact_test", "sec_5_majority.lower_bound", "pi", lambda v: v / 2),
]


@pytest.mark.parametrize(("ob_id", "fact", "key", "wrong"), WRONG, ids=lambda x: str(x))
def test_a_weakened_instance_fails(ob_id: str, fact: str, key: str, wrong) -> None:
    ob = OBLIGATIONS[ob_id]
    uses = [
        dataclasses.replace(u, subst={**u.subst, key: wrong(sp.sympify(u.subst[key]))})
        if u.fact == fact
        else u
        for u in ob.meta["uses"]
    ]
    v = check_uses(ob.meta["hyps"], uses)
    assert v is not None and v.status == "failed" and fact in v.detail, v


def test_an_axiom_hypothesis_stays_a_premise_of_the_step_that_took_it() -> None:
    """tie_count_odd takes C^2 pi h <= F^2 from the central binomial bound at C = C(2h, h):
    true only for that C. Citing tie_count_odd at C = B for an arbitrary B >= 0 must still
    supply the bound (a use of another obligation's hypothesis is derived, an axiom's is not)."""
    from verify.proofs.methods import Use, _cited_claim

    n, p, pi, b = sp.symbols("N P pi B", real=True)
    hyps, _ = _cited_claim("sec_5_majority.tie_count_odd")
    assert any("C**2" in str(h) for h in hyps)
    use = Use(
        "sec_5_majority.tie_count_odd",
        {"N": n, "P": p, "pi": pi, "h": (n + 1) / 2, "F": 2 * p, "C": b, "B": b},
        b**2 * pi * n <= 8 * p**2,
    )
    v = check_uses([n >= 1, p > 0, pi >= 3, b >= 0, b**2 * pi * n <= 8 * p**2], [use])
    assert v is not None and "premise" in v.detail
    # a hypothesis standing for another obligation is derived: not a premise
    hyps, _ = _cited_claim("thm_4_5.margin_reading")
    assert not any(str(h) == "T1*T2 > 0" for h in hyps)
    assert any("q" in {s.name for s in h.free_symbols} for h in hyps)  # the log's, kept


def test_prove_counts_the_checked_citations(capsys) -> None:
    from verify.cli import main
    from verify.proofs.status import citation_counts

    counts = citation_counts([OBLIGATIONS[k] for k in LINKED])
    assert counts["axiom"][0] == 10 and counts["obligation"][0] == 10
    assert main(["prove", "--only", "lemma_4_2.neighbourhood"]) == 0
    out = capsys.readouterr().out
    assert "citations checked by uses=: obligation 0 of 0, axiom 2 of 2" in out
