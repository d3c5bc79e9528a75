"""A use inside an induction over positions (issue 42, facts checked, not cited): Lemma 4.4's
volume average applies Lemma 4.2's neighbourhood bound at each cube (a term hypothesis standing
for lemma_4_2.neighbourhood at the cube's own p_b, p_m, E, q), checked before the induction.
A weakened Lemma 4.2, a wrong instance, or a cube lacking one of its premises fails ``prove``."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.methods import Use, check_uses
from verify.proofs.positions import sum_induction

load()
OB = OBLIGATIONS["lemma_4_4.volume_average"]
FACT = "lemma_4_2.neighbourhood"


def test_the_per_cube_bound_is_a_checked_use() -> None:
    (use,) = OB.meta["uses"]
    assert use.fact == FACT and FACT in OB.facts and FACT in OB.claim
    assert use.hyp in OB.meta["spec"]["term_hyps"]
    assert check_uses(OB.meta["use_hyps"], OB.meta["uses"]) is None
    assert OB.prove().status == "proved"


def test_a_weakened_lemma_4_2_fails_the_volume_average() -> None:
    cited = OBLIGATIONS[FACT]
    concl = cited.meta["concl"]
    weak = dataclasses.replace(
        cited, meta={**cited.meta, "concl": concl.func(concl.lhs, 2 * concl.rhs)}
    )
    with scratch_registry():
        OBLIGATIONS[FACT] = weak
        v = OB.prove()
    assert v.status == "failed" and FACT in v.detail, v


@pytest.mark.parametrize(("key", "wrong"), [("p", lambda v: 2 * v), ("N", lambda v: v / 2)])
def test_a_wrong_instance_fails(key: str, wrong) -> None:
    (use,) = OB.meta["uses"]
    bad = Use(use.fact, {**use.subst, key: wrong(sp.sympify(use.subst[key]))}, use.hyp)
    v = check_uses(OB.meta["use_hyps"], [bad])
    assert v is not None and v.status == "failed" and FACT in v.detail, v


def test_a_cube_without_a_premise_of_lemma_4_2_fails() -> None:
    """q_j <= p_b + p_m (the union bound on the cube) dropped: Lemma 4.2 no longer applies."""
    spec = OB.meta["spec"]
    (use,) = OB.meta["uses"]
    dropped = [
        h
        for h in spec["term_hyps"]
        if h != (spec["terms"][1] <= use.subst["p_b"] + use.subst["p_m"])
    ]
    assert len(dropped) == len(spec["term_hyps"]) - 1
    with scratch_registry():
        ob = sum_induction(
            "scratch.volume_average",
            OB.statement,
            OB.step,
            OB.doc,
            terms=spec["terms"],
            term_hyps=dropped,
            sums=spec["sums"],
            invariant=spec["invariant"],
            final=spec["final"],
            concl=spec["concl"],
            twin=spec["twin"],
            uses=(use,),
        )
        v = ob.prove()
    assert v.status == "failed" and "premise" in v.detail and FACT in v.detail, v


def test_a_use_must_stand_for_a_hypothesis() -> None:
    spec = OB.meta["spec"]
    (use,) = OB.meta["uses"]
    with scratch_registry(), pytest.raises(ValueError, match="not a hypothesis"):
        sum_induction(
            "scratch.volume_average",
            OB.statement,
            OB.step,
            OB.doc,
            terms=spec["terms"],
            term_hyps=spec["term_hyps"],
            sums=spec["sums"],
            invariant=spec["invariant"],
            concl=spec["concl"],
            twin=spec["twin"],
            uses=(dataclasses.replace(use, hyp=spec["concl"]),),
        )
