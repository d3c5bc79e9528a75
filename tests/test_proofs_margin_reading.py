"""Thm 4.5's reading as a checked step (issue 42): thm_4_5.margin_reading chains Cor 4.3's
threshold, the logarithm's monotonicity, the flip bound on the good event and Cor 4.6's label
step by uses=. The axiom carries the chain: without it the label step's premise (the flip
moves T by less than 2 xi) does not follow, since the rest is polynomial and says nothing about
logarithms; the cited steps' premises are in the domain, so their conclusions are checked
instances there, and a wrong substitution into any use fails the step."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
import z3

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, PROSE
from verify.proofs.methods import _z3_check, check_uses

load()

OB = OBLIGATIONS["thm_4_5.margin_reading"]
USES = OB.meta["uses"]


def test_the_reading_is_a_step_not_prose() -> None:
    assert "prose.thm_4_5.margin_reading" not in PROSE
    assert OB.method == "z3" and OB.prove().status == "proved"
    assert {u.fact for u in USES} == {
        "cor_4_3.threshold",
        "axiom.log_monotone",
        "cor_4_3.good_event",
        "cor_4_3.per_flip",
        "lemma_2_9.constant_off_readout",
        "cor_4_6.label_kept",
    }


def test_the_logs_monotonicity_carries_the_chain() -> None:
    log = [u for u in USES if u.fact == "axiom.log_monotone"]
    assert len(log) == 2
    for dropped in log:
        hyps = [h for h in OB.meta["hyps"] if h != dropped.hyp]
        v = check_uses(hyps, [u for u in USES if u is not dropped])
        assert v is not None and "cor_4_6.label_kept" in v.detail and "premise" in v.detail
    # nor does the conclusion follow without them (from the domain and the other steps)
    hyps = [h for h in OB.meta["hyps"] if h not in {u.hyp for u in log} | {USES[-1].hyp}]
    assert _z3_check(hyps, OB.meta["concl"])[1] != z3.unsat


def _wrong(fact: str, key: str, value) -> list:
    k = next(i for i, u in enumerate(USES) if u.fact == fact)
    u = USES[k]
    return [*USES[:k], dataclasses.replace(u, subst={**u.subst, key: value}), *USES[k + 1 :]]


XI = sp.Symbol("xi", real=True)


@pytest.mark.parametrize(
    ("fact", "key", "value"),
    [
        ("cor_4_3.threshold", "n", sp.Symbol("n", real=True) / 2),  # the threshold at sqrt(N)
        ("axiom.log_monotone", "b", XI),  # the margin's 2 xi halved
        ("cor_4_3.good_event", "beta", sp.Symbol("t", real=True) ** 2),  # off the good event
        ("cor_4_6.label_kept", "xi", XI / 2),  # the label kept at half the margin
    ],
)
def test_a_wrong_substitution_fails(fact: str, key: str, value) -> None:
    v = check_uses(OB.meta["hyps"], _wrong(fact, key, value))
    assert v is not None and v.status == "failed" and fact in v.detail
