"""Status earned (issue 42): obligations by class, each statement's status the weakest
evidence on its path (its own steps and every statement it uses), `prove --focus`."""

from __future__ import annotations

from pathlib import Path

from verify.cli import main
from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, Outcome, Verdict
from verify.proofs.runner import STATEMENTS
from verify.proofs.status import (
    INSTANCE,
    RANKS,
    earned_statuses,
    obligation_class,
    statement_uses,
    trust_base,
    weakest,
)

load()


def _outcomes(fail: str | None = None) -> list[Outcome]:
    return [
        Outcome(ob, Verdict("failed" if ob.id == fail else "proved"), Verdict("refuted"), 0.0)
        for ob in load()
    ]


def test_every_instance_names_a_registered_obligation() -> None:
    assert sorted(set(INSTANCE) - set(OBLIGATIONS)) == []


def test_classes_and_the_scale(monkeypatch) -> None:
    # exp over the whole domain by E = e^{2R} >= 1 (tests/test_proofs_exp_substitution.py has
    # the class of an arb step on a box)
    assert obligation_class(OBLIGATIONS["lemma_2_9.softmax_weight_simple"]) == "genuine"
    monkeypatch.setitem(INSTANCE, "lemma_2_9.hm_le_gm", "a size named for the test")
    assert obligation_class(OBLIGATIONS["lemma_2_9.hm_le_gm"]) == "instance"
    monkeypatch.delitem(INSTANCE, "lemma_2_9.hm_le_gm")
    assert obligation_class(OBLIGATIONS["thm_4_5.power_mean"]) == "genuine"  # every a >= 1
    assert obligation_class(OBLIGATIONS["lemma_4_4.chain_monte_carlo_cover"]) == "chain sampled"
    assert obligation_class(OBLIGATIONS["prop_3_5.chain_box_norms"]) == "instance"
    # on symbols for every D (vectors of symbolic length), by branch and bound over every float
    assert obligation_class(OBLIGATIONS["trivial_bounds.chain_output_swing"]) == "chain proved"
    assert obligation_class(OBLIGATIONS["trivial_bounds.chain_probability"]) == "chain proved"
    assert obligation_class(OBLIGATIONS["small_ball.chain_constant"]) == "chain proved"
    # symbolic, every L by induction, with the heads enumerated: an instance
    assert obligation_class(OBLIGATIONS["lemma_2_9.chain_c_infl"]) == "instance"
    assert obligation_class(OBLIGATIONS["lemma_2_9.hm_le_gm"]) == "genuine"
    assert weakest(["proved", "box", "instance"]) == "box"
    assert RANKS[0] == "proved" and RANKS[-1] == "failed"


def test_a_statement_earns_the_weakest_evidence_on_its_path() -> None:
    earned = earned_statuses(_outcomes(), STATEMENTS)
    assert earned["H&R Thm 6"]["status"] == "prose"  # its reading is a prose step
    # Thm 4.5's reading is a checked step (thm_4_5.margin_reading), no longer prose
    assert earned["Thm 4.5"]["own"] != "prose" and earned["Cor 5.1"]["status"] != "prose"
    for st, e in earned.items():  # no statement is stronger than one it uses
        for u in e["uses"]:
            assert RANKS.index(e["status"]) >= RANKS.index(earned[u]["status"]), (st, u)
    assert earned["Sec 5 MAJORITY"]["derivation"] == "proved"  # every step genuine
    assert earned["Lemma 3.2"]["derivation"] == "proved"  # lemma_3_2.product: every K
    # a failed step anywhere below fails everything above it
    failed = earned_statuses(_outcomes("small_ball.variance_projection"), STATEMENTS)
    for st in ("Small-ball bound", "Lemma 4.2", "Cor 4.3", "Thm 4.5", "Cor 4.6"):
        assert failed[st]["status"] == "failed", st


def test_statement_edges_come_from_the_uses() -> None:
    uses = statement_uses()
    assert "Thm 4.5" in uses["Cor 4.6"] and "Lemma 2.9" in uses["Cor 3.3"]
    owner = {ob.id: ob.statement for ob in OBLIGATIONS.values()}
    for ob in OBLIGATIONS.values():
        for f in ob.facts:
            if f in owner and owner[f] != ob.statement:
                assert owner[f] in uses[ob.statement]


def test_prove_focus_draws_one_statements_ancestors(tmp_path: Path, capsys) -> None:
    fig = tmp_path / "focus.png"
    assert main(["prove", "--focus", "lemma_3_2.z_max", "--figure", str(fig)]) == 0
    out = capsys.readouterr()
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Lemma 3.2" in out.err and "Small-ball bound" in out.err
    assert "obligations by class:" in out.out and "earned" in out.out
    assert main(["prove", "--focus", "no such statement"]) == 2
    assert main(["prove", "--figure", str(fig)]) == 2


def test_the_trust_base_lists_axioms_solvers_and_what_is_sampled() -> None:
    t = trust_base("Cor 4.6")
    assert {"Thm 4.5", "Cor 4.3", "Lemma 4.2"} <= set(t["statements"])
    assert "axiom.borel_cantelli" in t["axioms"] and "z3" in t["solvers"]
    assert "lemma_2_9.chain_parameter_norms" in t["instances"]  # on symbols, layouts enumerated
    assert {"thm_4_5.chain_series_order", "thm_4_5.chain_series"} <= set(t["instances"])
    assert "lemma_4_2.chain_neighbourhood" not in t["sampled"]  # proved on symbols
    assert t["prose"] == []  # Thm 4.5's reading: thm_4_5.margin_reading
    assert "axiom.borel_cantelli" in t["axioms_no_schema"]
    assert "axiom.borel_cantelli" in t["axioms_cited_only"]
    assert "axiom.log_monotone" in t["axioms"]
    assert "cor_4_6.chain_bound" not in t["sampled"]  # proved on symbols
    below = set(t["statements"])
    assert t["instances"] == sorted(
        i
        for i, ob in OBLIGATIONS.items()
        if ob.statement in below and obligation_class(ob) == "instance"
    )
    assert trust_base("Sec 5 MAJORITY")["axioms"] == ["axiom.central_binomial", "axiom.mean_value"]


def test_a_partial_run_is_not_discharged_not_failed() -> None:
    """report --only "Lemma 3.2" discharges the trivial bounds but not Lemma 2.9, which they
    use: their status says so instead of failing."""
    part = [o for o in _outcomes() if o.obligation.statement != "Lemma 2.9"]
    earned = earned_statuses(part, ["Trivial bounds", "Lemma 3.2"])
    assert earned["Trivial bounds"]["status"] == "not discharged"
    assert earned["Lemma 3.2"]["status"] == "instance"  # its chains proved on symbols
