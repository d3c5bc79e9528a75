"""`python -m verify report` as a user meets it: output paths checked before any work, the
kernels step, --only's own folder, --json, rows.csv and the figure files; and the command line
as a whole: fast --help, one-line errors, no argparse below the command layer."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from verify.registry import CheckContext, FigureData, Outcome, Row, core, define_statement
from verify.report import writer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def one_statement(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A registry holding one statement with one check and one figure (restored afterwards)."""
    saved = dict(core._STATEMENTS)
    core._STATEMENTS.clear()
    monkeypatch.setattr(core, "STATEMENT_PACKAGES", [])
    monkeypatch.setattr(writer, "overview_figures", lambda budget: ([], []))
    stmt = define_statement(id="Lemma 1.1", title="Square bound", statement="x^2 <= x on [0, 1]")

    @stmt.check("grid")
    def _grid(ctx: CheckContext) -> Outcome:
        xs = [1, 2, 3, 4]
        fig = FigureData(
            name="square",
            title="K_0 against N",
            kind="lines",
            data={
                "series": [
                    {"label": "mean", "x": xs, "y": [0.5, 0.4, 0.3, 0.2]},
                    {"label": "mean CI low", "x": xs, "y": [0.4, 0.3, 0.2, 0.1]},
                    {"label": "mean CI high", "x": xs, "y": [0.6, 0.5, 0.4, 0.3]},
                ],
                "xlabel": "N",
                "ylabel": "P[K_0 >= 1]",
            },
        )
        return Outcome([Row("x=0.5", 0.25, 0.5, ci=(0.2, 0.3))], figures=[fig])

    try:
        yield
    finally:
        core._STATEMENTS.clear()
        core._STATEMENTS.update(saved)


_cli = run_cli


def test_bad_output_paths_exit_2_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*a: object, **k: object) -> None:
        raise AssertionError("work started before the output path was checked")

    monkeypatch.setattr("verify.report.generate_report", no_work)
    existing = tmp_path / "existing_file"
    existing.write_text("x")
    for out, needle in [
        ("/proc/x", "--out: expected a writable directory, got '/proc/x'"),
        (str(existing), "--out: expected a directory, got"),
    ]:
        code, err, _ = _cli(["report", "--quick", "--out", out], capsys)
        assert code == 2 and needle in err and err.count("\n") == 1, err
    assert existing.read_text() == "x"


def test_report_files_kernels_json_and_rows(
    one_statement: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    code, err, stdout = _cli(
        ["report", "--quick", "--out", str(out), "--json", "-j", "1", "--pdf"], capsys
    )
    assert code == 0, err
    assert "compiling kernels (first run only)" in err
    summary = json.loads(stdout)
    assert summary["exit_code"] == 0 and summary["statements"][0]["status"] == "holds"
    doc = json.loads((out / "report.json").read_text())
    k = doc["kernels"]
    assert k["kernels"] >= 10 and k["compiled"] + k["from_cache"] >= k["kernels"]
    assert k["seconds"] >= 0 and not k["errors"]
    assert "to compile the kernels" in (out / "report.md").read_text()
    # the figure: PNG (300 dpi), PDF (--pdf) and its data as CSV; the data in report.json too
    (fig,) = doc["statements"][0]["checks"][0]["figures"]
    assert fig["files"] == ["figures/square.png", "figures/square.pdf", "figures/square.data.csv"]
    assert (out / "figures" / "square.pdf").read_bytes()[:5] == b"%PDF-"
    assert fig["data"]["series"][1]["label"] == "mean CI low"
    rows = list(csv.DictReader((out / "figures" / "square.data.csv").open()))
    assert len(rows) == 12 and rows[4] == {
        "series": "1",
        "label": "mean CI low",
        "x": "1",
        "y": "0.4",
        "y_low": "",
        "y_high": "",
        "n": "",
        "y_err_below": "",
        "y_err_above": "",
    }
    from PIL import Image

    with Image.open(out / "figures" / "square.png") as im:
        assert round(im.info["dpi"][0]) == 300
    # rows.csv and the DataFrame
    (row,) = csv.DictReader((out / "rows.csv").open())
    assert row["statement"] == "Lemma 1.1" and row["check"] == "grid"
    assert float(row["measured"]) == 0.25 and float(row["ci_high"]) == 0.3
    pd = pytest.importorskip("pandas")
    from verify.report import report_frame

    frame = report_frame(out)
    assert isinstance(frame, pd.DataFrame) and frame.loc[0, "bound"] == 0.5
    # redrawn from report.json alone
    from verify.report import redraw_report_figures

    redrawn = redraw_report_figures(out / "report.json", tmp_path / "again")
    assert sorted(p.name for p in redrawn) == ["square.pdf", "square.png"]


def test_only_writes_its_own_folder(
    one_statement: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, err, _ = _cli(
        ["report", "--quick", "--only", "Lemma 1.1", "--no-progress", "-j", "1"], capsys
    )
    assert code == 0, err
    assert (tmp_path / "docs/reports/only/lemma_1_1/report.json").is_file()
    assert not (tmp_path / "docs/reports/latest").exists()


def test_list_json(one_statement: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, out = _cli(["report", "--list", "--json"], capsys)
    assert code == 0
    assert json.loads(out) == [
        {
            "id": "Lemma 1.1",
            "slug": "lemma_1_1",
            "title": "Square bound",
            "confidence": "[note]",
            "checks": [{"name": "grid", "slow": False}],
        }
    ]


def test_help_and_usage_errors_answer_fast() -> None:
    """Registering the commands imports no numerical package: --help and usage errors answer
    at once (the numerical packages load when a command runs)."""
    code = (
        "import sys, time; t = time.perf_counter(); from verify.cli import build_parser;"
        " build_parser(); print(time.perf_counter() - t);"
        " print(sorted(m for m in ('numpy', 'numba', 'matplotlib', 'verify.model', 'scipy')"
        " if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, loaded = res.stdout.splitlines()
    assert loaded == "[]"
    assert float(seconds) < 0.5
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "verify", "sweep", "--out", "x.jsonl", "-j", "0"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "-j/--jobs" in res.stderr
    assert time.perf_counter() - start < 5  # generous: the interpreter's own start on a busy box


def test_no_argparse_below_the_command_layer() -> None:
    """verify.model and verify.boolean import neither argparse nor the command layer."""
    for pkg in ("model", "boolean"):
        for path in (ROOT / "verify" / pkg).rglob("*.py"):
            text = path.read_text()
            assert "argparse" not in text, path
            assert "verify.commands" not in text and "verify.cli" not in text, path


def test_figures_import_changes_no_global_matplotlib_state(tmp_path: Path) -> None:
    """Importing the figure code and drawing a figure neither picks a backend nor loads pyplot
    (so a notebook's inline backend survives)."""
    code = (
        "import matplotlib, sys; before = matplotlib.rcParams._get_backend_or_none();"
        " import verify.report.figures as f, verify.report.writer;"
        " from types import SimpleNamespace as N;"
        " fig = N(name='a', title='t', kind='lines', data={'series': [{'x': [1], 'y': [1]}]});"
        f" f.draw_figure(fig, {str(tmp_path / 'a.png')!r});"
        " print(matplotlib.rcParams._get_backend_or_none() == before,"
        " 'matplotlib.pyplot' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["True", "False"]


def test_math_labels_bands_and_colours() -> None:
    from verify.report.figures import math_label, plan_lines

    assert math_label("K_n / 2^N") == "$K_{n}$ / $2^{N}$"
    assert math_label("P[K_0 >= 1]") == r"P[$K_{0}$ $\geq$ 1]"
    assert math_label("N^((D-1)/(2L)-5)") == "$N^{(D-1)/(2L)-5}$"
    assert math_label("sparse_parity") == "sparse_parity"  # a name, not a formula
    assert math_label("already $x$") == "already $x$"
    series = [
        {"label": "D=3 empirical", "x": [1, 2], "y": [1, 2]},
        {"label": "D=3 fit", "x": [1, 2], "y": [1, 2]},
        {"label": "box CI low", "x": [1, 2], "y": [0, 1]},
        {"label": "box", "x": [1, 2], "y": [1, 2]},
        {"label": "box CI high", "x": [1, 2], "y": [2, 3]},
    ]
    items = plan_lines(series)
    assert [(it["kind"], it["group"]) for it in items] == [
        ("line", "D=3"),
        ("line", "D=3"),
        ("band", "box"),
        ("line", "box"),
    ]
    assert items[2]["owner"] == id(series[3])


def test_config_fields_match_model_config() -> None:
    """sweep --config keys are checked against a list kept in the command layer (so a usage
    error loads no model); it must equal ModelConfig's fields minus the grid axes."""
    from dataclasses import fields

    from verify.commands._options import CONFIG_FIELDS
    from verify.model import ModelConfig

    axes = {"d_model", "n_layers", "n_heads", "ln_eps"}
    assert set(CONFIG_FIELDS) == {f.name for f in fields(ModelConfig)} - axes


def test_ctrl_c_anywhere_exits_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C outside the checks (e.g. while the kernels compile) ends with 130 and one line."""

    def interrupted(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("verify.report.generate_report", interrupted)
    code, err, _ = _cli(["report", "--quick", "--out", str(tmp_path / "r")], capsys)
    assert code == 130 and err.splitlines() == [
        f"interrupted before any check ran: nothing written, {tmp_path / 'r'} as it was"
    ]
