"""Tests of the report generator (verify.report) and `python -m verify report`, against
statements registered here (the global registry is snapshotted and restored)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from verify.cli import main
from verify.json_values import jsonable
from verify.registry import (
    CheckContext,
    Counterexample,
    FigureData,
    Finding,
    Hypothesis,
    Outcome,
    Policy,
    Row,
    core,
    counterexamples,
    define_statement,
)
from verify.report import (
    aggregate_status,
    generate_report,
    validate_document,
    writer,
)
from verify.report.document import tightness, worst_row
from verify.report.overview import overview_figures

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """An empty statement registry for the test; the global one is restored afterwards."""
    saved = dict(core._STATEMENTS)
    core._STATEMENTS.clear()
    monkeypatch.setattr(core, "STATEMENT_PACKAGES", [])
    # the overview figures cost ~1 s per report; test_report_all_outcomes restores them
    monkeypatch.setattr(writer, "overview_figures", lambda budget: ([], []))
    try:
        yield core._STATEMENTS
    finally:
        core._STATEMENTS.clear()
        core._STATEMENTS.update(saved)


def _holds_statement(sid: str = "Lemma 1.1", *, slow_too: bool = False) -> None:
    stmt = define_statement(
        id=sid,
        title="Square bound",
        statement=r"For $x \in [0, 1]$, $x^2 \le x$.",
        confidence="[inferred]",
        hypotheses=(Hypothesis("x in [0,1]", "the argument lies in the unit interval"),),
        bound_formula="$x$",
        derivation="docs/architecture.md#conventions",
    )

    @stmt.check("grid")
    def _grid(ctx: CheckContext) -> Outcome:
        xs = [i / 10 for i in range(1, 11)]
        rows = [Row(f"x={x:.1f}", x * x, x) for x in xs]
        fig = FigureData(
            name="square",
            title="x^2 against x",
            kind="lines",
            data={
                "series": [
                    {"label": "x^2", "x": xs, "y": [x * x for x in xs]},
                    {"label": "bound x", "x": xs, "y": xs, "style": "--"},
                ],
                "xlabel": "x",
                "ylabel": "value",
                "logx": True,
                "logy": True,
            },
        )
        return Outcome(rows, figures=[fig], parameters={"budget": ctx.budget, "n": len(xs)})

    if slow_too:

        @stmt.check("slow grid", slow=True)
        def _slow(ctx: CheckContext) -> Outcome:
            raise AssertionError("a slow check ran outside --full")


def _mixed_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Statements that hold, are vacuous, are violated, undecided and raise."""
    _holds_statement("Lemma 1.1", slow_too=True)
    thm = define_statement(id="Thm 2.1", title="Vacuous at small N", statement="K_0 >= N^e.")

    @thm.check("exponent")
    def _vac(ctx: CheckContext) -> Outcome:
        e = (8 - 1) / 2 - 5
        return Outcome(
            [Row("K_0 vs N^e at N=8", 3.0, 8.0**e, ">=", trivial=1.0)],
            notes=[f"exponent e = {e} <= 0: the bound is trivial"],
            figures=[
                FigureData(
                    "bars_fig",
                    "P[K0>=1]",
                    "bars",
                    {
                        "series": [
                            {
                                "label": "uniform",
                                "x": ["a", "b"],
                                "y": [0.5, 0.6],
                                "yerr": [0.1, 0.1],
                            },
                            {"label": "gaussian", "x": ["a", "b"], "y": [0.4, 0.7]},
                        ],
                        "xlabel": "scheme",
                        "ylabel": "probability",
                    },
                )
            ],
        )

    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    cex = tmp_path / "cex.json"
    fails = define_statement(id="Lemma 3.1", title="A bound that fails", statement="x <= 1.")

    @fails.check("counterexample")
    def _viol(ctx: CheckContext) -> Outcome:
        return Outcome(
            [Row("x", 2.0, 1.0), Row("y", 0.5, 1.0)],
            counterexample=Counterexample(setting={"x": 2.0}, stem="cex"),
        )

    und = define_statement(id="Lemma 3.2", title="Undecided", statement="y >= 0.")

    @und.check("wide interval", policy=Policy.STATISTICAL)
    def _und(ctx: CheckContext) -> Outcome:
        return Outcome([Row("y", -0.5, 0.0, ">=", ci=(-1.0, 1.0), decisive=False)])

    raises = define_statement(id="Cor 5.1", title="Raises", statement="never computed.")

    @raises.check("boom")
    def _boom(ctx: CheckContext) -> Outcome:
        raise ZeroDivisionError("deliberate failure in a check")

    @raises.check("fine")
    def _fine(ctx: CheckContext) -> Outcome:
        return Outcome([Row("z", 1.0, math.inf)])

    return cex


def _strict_json(path: Path) -> dict:
    def bad(name: str) -> float:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(path.read_text(), parse_constant=bad)


def test_aggregate_status_precedence() -> None:
    assert aggregate_status(["holds", "vacuous"]) == "holds"
    assert aggregate_status(["vacuous", "vacuous"]) == "vacuous"
    assert aggregate_status(["holds", "undecided"]) == "undecided"
    assert aggregate_status(["holds", "error", "undecided"]) == "error"
    assert aggregate_status(["error", "violated"]) == "violated"
    assert aggregate_status([], has_skipped=True) == "skipped"
    assert aggregate_status([]) == "unchecked"


def test_report_all_outcomes(
    isolated_registry: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "overview_figures", overview_figures)
    cex = _mixed_registry(tmp_path, monkeypatch)
    out = tmp_path / "rep"
    rep = generate_report(out, budget="quick", seed=7, progress=False, command="test")
    assert rep.exit_code == 1
    doc = _strict_json(out / "report.json")
    assert validate_document(doc) == []
    by_id = {s["id"]: s for s in doc["statements"]}
    # paper order
    assert [s["id"] for s in doc["statements"]] == [
        "Lemma 1.1",
        "Thm 2.1",
        "Lemma 3.1",
        "Lemma 3.2",
        "Cor 5.1",
    ]
    assert {k: by_id[k]["status"] for k in by_id} == {
        "Lemma 1.1": "holds",
        "Thm 2.1": "vacuous",
        "Lemma 3.1": "violated",
        "Lemma 3.2": "undecided",
        "Cor 5.1": "error",
    }
    assert doc["summary"]["counts"]["error"] == 1
    assert doc["summary"]["n_errors"] == 1
    assert doc["summary"]["n_checks_not_run"] == 1
    assert by_id["Lemma 1.1"]["not_run"] == ["slow grid"]
    # the raising check is reported with its traceback, its sibling still ran
    boom, fine = by_id["Cor 5.1"]["checks"]
    assert boom["status"] == "error" and boom["error"]["type"] == "ZeroDivisionError"
    assert "deliberate failure in a check" in boom["error"]["traceback"]
    assert fine["status"] == "holds" and fine["rows"][0]["bound"] == "inf"
    # worst case is the row furthest past its bound, across checks
    w = by_id["Lemma 3.1"]["worst"]
    assert (w["label"], w["measured"], w["bound"], w["ratio"]) == ("x", 2.0, 1.0, 2.0)
    assert by_id["Lemma 3.1"]["checks"][0]["counterexample"] == str(cex)
    w11 = by_id["Lemma 1.1"]["worst"]
    assert w11["ratio"] == pytest.approx(1.0) and w11["label"] == "x=1.0"
    # seed, hypotheses, library versions
    grid = by_id["Lemma 1.1"]["checks"][0]
    assert grid["seed"] == 7 and grid["parameters"] == {"budget": "quick", "n": 10}
    assert by_id["Lemma 1.1"]["hypotheses"][0]["name"] == "x in [0,1]"
    libs = doc["environment"]["libraries"]
    for lib in ("numpy", "numba", "mpmath", "python-flint", "sympy"):
        assert libs[lib], lib
    # figures were drawn as PNGs and linked from the markdown
    files = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert files == ["bars_fig.png", "blueprint.png", "overview_family_profiles.png", "square.png"]
    assert doc["derivations"]["figure"]["file"] == "figures/blueprint.png"  # issue 28's hook
    (over,) = doc["overview"]["figures"]
    assert over["file"] == "figures/overview_family_profiles.png" and over["error"] is None
    for f in files:
        assert (out / "figures" / f).read_bytes()[:8] == PNG_MAGIC
    md = (out / "report.md").read_text()
    assert "## Summary" in md and md.index("## Summary") < md.index("## Lemma 1.1")
    assert "![x^2 against x](figures/square.png)" in md
    assert "ZeroDivisionError" in md and "deliberate failure in a check" in md
    assert "**VIOLATED**" in md and "| x | 2 | > | 1 | 2 |" in md  # the true relation
    assert "CI of measured" in md and "[-1, 1]" in md
    assert "numba" in md and "python-flint" in md
    assert "Reconstructed statement" in md
    rel = os.path.relpath(Path(__file__).resolve().parents[1], out.resolve())
    assert f"[docs/architecture.md#conventions]({rel}/docs/architecture.md#conventions)" in md
    assert f"Counterexample: `{cex}`" in md  # outside the repository: not linked
    assert "## Overview" in md and "(figures/overview_family_profiles.png)" in md


def test_report_exit_zero_and_slow_checks(isolated_registry: dict, tmp_path: Path) -> None:
    _holds_statement(slow_too=True)
    rep = generate_report(tmp_path, budget="quick", progress=False)
    assert rep.exit_code == 0
    assert rep.document["statements"][0]["status"] == "holds"
    assert rep.document["statements"][0]["not_run"] == ["slow grid"]


def test_include_slow_runs_slow_checks_and_reports_error(
    isolated_registry: dict, tmp_path: Path
) -> None:
    # the slow check raises AssertionError: reported as an error entry, not propagated
    _holds_statement(slow_too=True)
    rep = generate_report(tmp_path, budget="full", include_slow=True, progress=False)
    checks = rep.document["statements"][0]["checks"]
    assert [c["status"] for c in checks] == ["holds", "error"]
    assert rep.exit_code == 1


def test_bad_figure_is_reported_not_fatal(isolated_registry: dict, tmp_path: Path) -> None:
    stmt = define_statement(id="Lemma 9.9", title="t", statement="s")

    @stmt.check("c")
    def _c(ctx: CheckContext) -> Outcome:
        bad = FigureData("bad", "bad", "lines", {"series": [{"x": [1, 2], "y": [1]}]})
        return Outcome([Row("a", 1, 2)], figures=[bad])

    rep = generate_report(tmp_path, progress=False)
    st = rep.document["statements"][0]
    assert st["checks"][0]["figures"][0]["file"] is None
    assert "x and y of equal length" in st["checks"][0]["figures"][0]["error"]
    assert any("figure bad" in w for w in st["warnings"])
    assert "could not be drawn" in (tmp_path / "report.md").read_text()


def test_cli_report(isolated_registry: dict, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _holds_statement("Lemma 1.1")
    _holds_statement("Lemma 1.2")
    out = tmp_path / "r"
    argv = ["report", "--quick", "--out", str(out), "--only", "lemma_1_2", "--seed", "3"]
    assert main([*argv, "-j", "1"]) == 0  # (statements of this process: not in workers)
    doc = _strict_json(out / "report.json")
    assert [s["id"] for s in doc["statements"]] == ["Lemma 1.2"]
    assert doc["run"] == {
        "budget": "quick",
        "include_slow": False,
        "seed": 3,
        "only": ["lemma_1_2"],
    }
    assert doc["command"].startswith("python -m verify report --quick --only lemma_1_2")
    err = capsys.readouterr().err
    assert "checks" in err  # the progress bar
    assert main(["report", "--quick", "--out", str(out), "--only", "Lemma 7.7"]) == 2
    assert "--only: expected a registered statement id" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad_seed:  # argparse: one line naming the flag, exit 2
        main(["report", "--out", str(out), "--seed", "-1"])
    assert bad_seed.value.code == 2
    assert "argument --seed: expected an integer >= 0" in capsys.readouterr().err
    assert main(["report", "--list", "--only", "Lemma 1.1"]) == 0
    listing = capsys.readouterr().out
    assert "Lemma 1.1  [lemma_1_1]  Square bound  [inferred]\n    - grid\n" in listing
    assert "Lemma 1.2" not in listing
    with pytest.raises(SystemExit) as exc:
        main(["report", "--quick", "--full"])
    assert exc.value.code == 2


def test_jsonable_and_tightness() -> None:
    assert jsonable({"a": (1.0, math.inf, -math.inf, math.nan)}) == {
        "a": [1.0, "inf", "-inf", "nan"]
    }
    assert tightness(Row("a", 2.0, 4.0)) == 0.5
    assert tightness(Row("a", 4.0, 2.0, ">=")) == 0.5
    assert tightness(Row("a", 1.0, 2.0, ">=")) == 2.0
    assert tightness(Row("a", 1.0, 1.0, "==")) == 0.0
    assert tightness(Row("a", 1.0, 2.0, "==")) == math.inf
    assert tightness(Row("a", -7.25, -1.0)) == 0.0  # holds; measured/bound = 7.25 means nothing
    assert tightness(Row("a", -0.5, -1.0)) == math.inf
    assert worst_row([Row("a", 1.0, 4.0), Row("b", 3.0, 4.0), Row("c", -9.0, -1.0)]).label == "b"


def test_validate_document_catches_mismatch() -> None:
    assert validate_document([]) == ["document: expected an object"]
    errs = validate_document({"schema": "x"})
    assert any("schema" in e for e in errs) and any("statements" in e for e in errs)


def test_overview_family_profiles_are_exact() -> None:
    from verify.boolean import family_names, make_family, sensitivity_profile
    from verify.report.overview import family_profiles_figure

    fig, notes = family_profiles_figure(6)
    drawn = {s["label"]: s["y"] for s in fig.data["series"]}
    assert set(drawn) | {n.split(":")[0] for n in notes} == set(family_names())
    assert drawn["parity"] == [0.0] * 6 + [1.0]  # K_N = 2^N
    maj = sensitivity_profile(make_family("majority", 6))
    assert drawn["majority"] == [k / 64 for k in maj]


def test_ctrl_c_writes_the_finished_checks(isolated_registry: dict, tmp_path: Path) -> None:
    _holds_statement("Lemma 1.1")
    stmt = define_statement(id="Lemma 2.2", title="t", statement="s")

    @stmt.check("user presses Ctrl-C here")
    def _stop(ctx: CheckContext) -> Outcome:
        raise KeyboardInterrupt

    _holds_statement("Lemma 3.3")
    out = tmp_path / "r"
    assert main(["report", "--quick", "--out", str(out), "--no-progress", "-j", "1"]) == 130
    doc = _strict_json(out / "report.json")
    assert validate_document(doc) == []
    assert [s["status"] for s in doc["statements"]] == ["holds", "interrupted", "interrupted"]
    assert doc["statements"][2]["interrupted"] == ["grid"]
    # the exit code written is the process's: 130, as for any program stopped by Ctrl-C
    assert doc["summary"]["n_checks_interrupted"] == 2 and doc["summary"]["exit_code"] == 130
    assert "The run was interrupted" in (out / "report.md").read_text()


@pytest.mark.slow
def test_real_registry_quick_report(tmp_path: Path) -> None:
    """`python -m verify report --quick` over every registered statement (about a minute)."""
    import subprocess
    import sys

    out = tmp_path / "rep"
    res = subprocess.run(
        [sys.executable, "-m", "verify", "report", "--quick", "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert res.returncode in (0, 1), res.stderr[-3000:]
    doc = _strict_json(out / "report.json")
    assert validate_document(doc) == []
    assert res.returncode == doc["summary"]["exit_code"]
    assert len(doc["statements"]) == len(core.all_statements())
    assert doc["summary"]["n_errors"] == 0, [
        (s["id"], c["name"], c["error"]["message"])
        for s in doc["statements"]
        for c in s["checks"]
        if c["error"]
    ]
    figures = list((out / "figures").glob("*.png"))
    assert figures and all(p.read_bytes()[:8] == PNG_MAGIC for p in figures)
    assert (out / "report.md").read_text().startswith("# Lemma report")


def test_slow_quick_check_warns(
    isolated_registry: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verify.report import runner

    monkeypatch.setattr(runner, "QUICK_CHECK_SECONDS", 0.0)
    _holds_statement()
    rep = generate_report(tmp_path, budget="quick", progress=False)
    assert any("at budget quick" in w for w in rep.document["statements"][0]["warnings"])
    rep = generate_report(tmp_path, budget="default", progress=False)
    assert rep.document["statements"][0]["warnings"] == []


def test_documented_finding_is_a_strict_xfail(
    isolated_registry: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    cex = tmp_path / "finding.json"
    measured = {"x": 2.0}

    stmt = define_statement(id="Lemma 7.1", title="A documented finding", statement="x <= 1.")

    @stmt.check("finding", finding=Finding(str(cex), "the bound fails on this case"))
    def _finding(ctx: CheckContext) -> Outcome:
        return Outcome(
            [Row("x", measured["x"], 1.0)],
            counterexample=Counterexample(setting=measured, stem="finding"),
        )

    _holds_statement("Lemma 7.2")
    rep = generate_report(tmp_path / "a", progress=False)
    st = rep.document["statements"][0]
    assert st["status"] == "known_violation" and rep.exit_code == 0
    assert st["checks"][0]["expected_violation"] == str(cex)
    assert validate_document(rep.document) == []
    md = (tmp_path / "a" / "report.md").read_text()
    assert "documented finding" in md and "Documented finding (expected to be violated" in md
    measured["x"] = 0.5  # the finding no longer reproduces: a failure
    rep = generate_report(tmp_path / "b", progress=False)
    st = rep.document["statements"][0]
    assert st["status"] == "not_reproduced" and rep.exit_code == 1
    assert any("did not reproduce" in w for w in st["warnings"])


def test_check_needing_a_missing_package_is_not_run(
    isolated_registry: dict, tmp_path: Path
) -> None:
    """A check whose optional package is absent is listed as not run (with the package), never
    run into an 'undecided'; the statement's other checks decide its status."""
    stmt = define_statement(id="Lemma 6.1", title="t", statement="s")
    stmt.check("needs an extra", requires=("no_such_package_here",))(lambda ctx: Outcome())
    stmt.check("plain")(lambda ctx: Outcome([Row("a", 1.0, 2.0)]))
    rep = generate_report(tmp_path, progress=False)
    (st,) = rep.document["statements"]
    assert st["not_run"] == ["needs an extra (needs no_such_package_here)"]
    assert [c["name"] for c in st["checks"]] == ["plain"] and st["status"] == "holds"
