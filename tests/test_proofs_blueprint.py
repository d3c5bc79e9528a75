"""The blueprint graph and figure, and the report's "Derivation" section (verify.proofs.blueprint),
from outcomes built without discharging anything."""

from __future__ import annotations

from pathlib import Path

from verify.proofs import load
from verify.proofs.blueprint import (
    BLUEPRINT,
    NO_OBLIGATIONS,
    blueprint_graph,
    blueprint_markdown,
    derivation_markdown,
    derivation_scope,
    draw_blueprint,
    has_obligations,
    not_discharged,
    statement_entries,
)
from verify.proofs.core import PROSE, Outcome, Verdict
from verify.proofs.runner import STATEMENTS
from verify.proofs.status import statement_uses

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def outcomes(fail: str | None = None) -> list[Outcome]:
    out = []
    for ob in load():
        bad = ob.id == fail
        out.append(
            Outcome(
                ob,
                Verdict("failed" if bad else "proved", "x", {"x": "1"} if bad else None),
                Verdict("refuted", "y", {"x": "2"}),
                0.01,
            )
        )
    return out


def test_graph_colours_steps_by_how_they_are_checked() -> None:
    g = blueprint_graph(outcomes(), ["Conj 5.5"])
    by_id = {n["id"]: n for n in g["nodes"]}
    # earned: Lemma 2.9's constant on instances (its former arb boxes are proved over their
    # whole domains: tests/test_proofs_exp_substitution.py); Lemma 4.4's on a chain at seeded
    # points (the Monte Carlo cover); H&R Thm 6's reading is prose
    assert by_id["st:Lemma 2.9"]["status"] == "instance"
    assert by_id["st:Lemma 4.4"]["status"] == "sampled chain"
    assert by_id["st:H&R Thm 6"]["status"] == "prose"
    assert by_id["st:Conj 5.5"]["status"] == "no derivation"  # no obligations
    assert by_id["axiom.popoviciu"]["status"] == "axiom"
    assert all(by_id[p]["status"] == "prose" for p in PROSE)
    step = by_id["step:Lemma 2.9:Step 6: the constant"]
    # the chain to the code: symbolic, C_infl for every L by induction, H = 1..3 heads
    assert step["status"] == "instance"
    # every number of norms, by induction (verify.proofs.positions)
    assert by_id["step:Lemma 2.9:Step 5: recursion"]["status"] == "proved"
    assert by_id["step:Lemma 2.9:Step 4: residuals and MLP"]["status"] == "proved"
    assert ("axiom.popoviciu", "step:Lemma 2.9:Step 3: at position n") in g["edges"]
    assert ("st:Lemma 2.9", "st:Cor 3.3") in g["edges"]


def test_a_failed_obligation_turns_its_step_and_statement_red() -> None:
    g = blueprint_graph(outcomes(fail="lemma_2_9.hm_le_gm"))
    by_id = {n["id"]: n for n in g["nodes"]}
    assert by_id["st:Lemma 2.9"]["status"] == "failed"
    # and every statement that uses Lemma 2.9, transitively
    assert by_id["st:Cor 3.4"]["status"] == "failed"
    assert [n["label"] for n in g["nodes"] if n["status"] == "failed" and n["kind"] == "step"] == [
        "Step 2, remarks: H(z, z') <= sqrt(z z') (AM-GM)"
    ]


def test_figure_and_derivation_section(tmp_path: Path) -> None:
    paths = draw_blueprint(blueprint_graph(outcomes()), tmp_path / "blueprint")
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    assert paths[0].read_bytes()[:8] == PNG_MAGIC
    from verify.proofs.blueprint import _entry

    outs = outcomes()
    derivations = {
        "statements": {
            st: _entry(st, [o for o in outs if o.obligation.statement == st])
            for st in ("Lemma 4.2", "Small-ball bound")
        }
    }
    entries = statement_entries(derivations, "Lemma 4.2")
    assert [e["statement"] for e in entries] == ["Lemma 4.2", "Small-ball bound"]
    md = "\n".join(derivation_markdown(entries))
    assert "### Derivation (Lemma 4.2)" in md and "`lemma_4_2.sequential_exp` | z3" in md
    assert "`axiom.markov` (Markov's inequality" in md


def test_a_report_of_some_statements_discharges_what_their_derivations_use() -> None:
    """``report --only``: the selected statements' obligations and, transitively, those of the
    statements they use (declared, or a fact taken from another statement's obligation); a
    plug-in statement without obligations discharges none; the whole report all of them."""
    assert derivation_scope() == list(STATEMENTS)
    assert derivation_scope(["Fault 1"]) == [] and derivation_scope(["Conj 5.5"]) == []
    assert derivation_scope(["Sec 5 MAJORITY"]) == ["Trivial bounds", "Sec 5 MAJORITY"]
    for sel in (
        [],
        ["Fault 1"],
        ["Conj 5.5", "Cor 5.1"],
        ["Sec 5 MAJORITY"],
        ["Lemma 3.2"],
        ["Fault 1", "Cor 4.6"],
    ):
        assert has_obligations(sel) == bool(derivation_scope(sel)), sel  # the cheap test
    assert derivation_scope(["Lemma 3.2"]) == ["Lemma 3.2", "Trivial bounds", "Small-ball bound"]
    scope = derivation_scope(["Cor 4.6"])
    uses = statement_uses()
    for st in ("Cor 4.6", *uses["Cor 4.6"], *uses["Thm 4.5"]):
        assert st in scope
    assert "H&R Cor 5" not in scope and "Prop 3.5" not in scope
    owner = {ob.id: ob.statement for ob in load()}
    for ob in load():  # closed: every fact an obligation in the scope takes is in the scope
        if ob.statement in scope:
            assert all(owner[f] in scope for f in ob.facts if f in owner), ob.id
    graph = blueprint_graph([o for o in outcomes() if o.obligation.statement in scope], scope=scope)
    drawn = {n["statement"] for n in graph["nodes"] if n["kind"] != "axiom"}
    assert drawn == set(scope)
    none = not_discharged(NO_OBLIGATIONS)
    assert "no statement of this report has derivation obligations" in blueprint_markdown(none)[2]


def test_a_figure_named_blueprint_does_not_take_the_blueprints_file(tmp_path: Path) -> None:
    """The Derivation section's figure is figures/blueprint.png: a check's (or the overview's)
    figure of that name is drawn beside it, not over it."""
    from verify.registry import FigureData
    from verify.report.drawing import draw_figures

    xs = [0.25, 0.5, 0.75]
    fig = FigureData(
        name=BLUEPRINT,
        title="u against u",
        kind="lines",
        data={"series": [{"label": "u", "x": xs, "y": xs}]},
    )
    _, (entry,), _ = draw_figures([], tmp_path, [fig])
    assert entry["file"] == "figures/blueprint_2.png"
    assert (tmp_path / "figures" / "blueprint_2.png").is_file()
