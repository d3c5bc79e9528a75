"""Run the statements and write report.md, report.json, rows.csv and figures/ into a directory
(each figure as a 300 dpi PNG, a PDF and a CSV of its data)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verify.registry import Budget, FigureData
from verify.report.document import build_document, jsonable
from verify.report.environment import environment
from verify.report.export import write_rows_csv
from verify.report.figures import draw_figure_files, figure_filename
from verify.report.markdown import render_markdown
from verify.report.overview import overview_figures
from verify.report.runner import (
    REPO_ROOT,
    StatementOutcome,
    run_statements,
    select_statements,
)
from verify.report.warmup import compile_kernels
from verify.validation import check_choice, check_int

FIGURES_DIR = "figures"
ROWS_CSV = "rows.csv"  # every check row, flat (verify.report.export)
FIGURE_FORMATS = (".png", ".pdf")  # the first is the one report.md shows


@dataclass
class Report:
    """A written report: where its files are, its document and its exit code."""

    out_dir: Path
    markdown: Path
    json: Path
    figures: list[Path]
    document: dict[str, Any]
    outcomes: list[StatementOutcome]

    @property
    def exit_code(self) -> int:
        return int(self.document["summary"]["exit_code"])


def _draw_entry(fig: FigureData, fig_dir: Path, taken: set[str], paths: list[Path]) -> dict:
    """Draw one figure (PNG at 300 dpi, PDF, and its data as CSV); its report entry (``file``,
    ``files`` and ``data``, or, when it cannot be drawn, ``error``)."""
    fname = figure_filename(str(getattr(fig, "name", "figure")), taken)
    entry: dict[str, Any] = {
        "name": str(getattr(fig, "name", "")),
        "title": str(getattr(fig, "title", "")),
        "kind": str(getattr(fig, "kind", "")),
        "file": None,
        "files": [],
        "data": jsonable(getattr(fig, "data", None)),
        "error": None,
    }
    try:
        written = draw_figure_files(fig, fig_dir / fname, also=FIGURE_FORMATS[1:])
        paths.append(written[0])
        entry["file"] = f"{FIGURES_DIR}/{fname}"
        entry["files"] = [f"{FIGURES_DIR}/{p.name}" for p in written]
    except Exception as exc:  # recorded in the report as a warning
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def draw_figures(
    outcomes: Sequence[StatementOutcome], out_dir: Path, overview: Sequence[FigureData] = ()
) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], list[dict[str, Any]], list[Path]]:
    """Draw every check's figures and the overview figures into ``out_dir/figures`` (stale
    files there are removed). A figure that cannot be drawn is recorded with its error."""
    fig_dir = out_dir / FIGURES_DIR
    if fig_dir.is_dir():
        for old in fig_dir.iterdir():
            if old.suffix in (*FIGURE_FORMATS, ".csv") and old.is_file():
                old.unlink()
    taken: set[str] = set()
    entries: dict[tuple[str, str], list[dict[str, Any]]] = {}
    paths: list[Path] = []
    for o in outcomes:
        for c in o.checks:
            if c.result is None:
                continue
            lst = entries.setdefault((c.statement_id, c.check_name), [])
            lst.extend(_draw_entry(fig, fig_dir, taken, paths) for fig in c.result.figures)
    over = [_draw_entry(fig, fig_dir, taken, paths) for fig in overview]
    return entries, over, paths


def _derivations(doc: dict[str, Any], fig_dir: Path, paths: list[Path]) -> None:
    """Issue 28's hook: the proof obligations' "Derivation" entries and the blueprint figure
    (verify.proofs.blueprint; the obligations are discharged once per process)."""
    from verify.proofs.blueprint import report_derivations, statement_entries

    ids = [st["id"] for st in doc["statements"]]
    derivations = report_derivations(fig_dir, ids)
    doc["derivations"] = derivations
    paths.extend(fig_dir.parent / f for f in derivations["figure"]["files"][:1])
    for st in doc["statements"]:
        st["derivation_steps"] = statement_entries(derivations, st["id"])


def write_report(
    outcomes: Sequence[StatementOutcome],
    out_dir: str | Path,
    *,
    run: dict[str, Any],
    runtime_s: float | None = None,
    command: str = "",
    overview: Sequence[FigureData] = (),
    overview_notes: Sequence[str] = (),
    kernels: dict[str, Any] | None = None,
) -> Report:
    """Write ``report.md``, ``report.json``, ``rows.csv`` and ``figures/`` for ``outcomes``
    (plus the ``overview`` figures, which belong to no statement)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    drawing = time.perf_counter()
    figures, over, paths = draw_figures(outcomes, out, overview)
    drawing = time.perf_counter() - drawing
    doc = build_document(
        outcomes,
        run=run,
        environment=environment(),
        figures=figures,
        runtime_s=runtime_s,
        command=command,
        kernels=kernels,
    )
    doc["overview"] = {"figures": over, "notes": [str(n) for n in overview_notes]}
    _derivations(doc, out / FIGURES_DIR, paths)
    doc["summary"]["figures_s"] = drawing  # drawing and writing the figure files
    json_path = out / "report.json"
    json_path.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    write_rows_csv(doc, out / ROWS_CSV)
    md_path = out / "report.md"
    prefix = os.path.relpath(REPO_ROOT, out.resolve())
    md_path.write_text(render_markdown(doc, repo_prefix=prefix), encoding="utf-8")
    return Report(out, md_path, json_path, paths, doc, list(outcomes))


def generate_report(
    out_dir: str | Path,
    *,
    budget: Budget = "quick",
    include_slow: bool = False,
    seed: int = 0,
    only: Sequence[str] | None = None,
    progress: bool = True,
    command: str = "",
    log: Callable[[str], None] | None = None,
) -> Report:
    """Run the registered statements (all, or those in ``only``) at ``budget`` and write the
    report into ``out_dir``. ``report.exit_code`` is 0 when every statement holds, is vacuous,
    is undecided or was not run at this budget, 1 when one is violated or raised, 130 when the
    run was interrupted.

    First the Numba kernels are compiled or loaded from the cache, as a step of its own
    (:func:`verify.report.warmup.compile_kernels`, its time in report.json's ``kernels``), so
    no check's run time includes compilation. ``log`` receives the step's progress lines."""
    budget = check_choice("budget", budget, ("quick", "default", "full"))  # type: ignore[assignment]
    seed = check_int("seed", seed, minimum=0)
    kernels = compile_kernels(log)  # first: importing the statements imports kernels too
    statements = select_statements(only)
    start = time.perf_counter()
    outcomes = run_statements(
        statements, budget=budget, include_slow=include_slow, seed=seed, progress=progress
    )
    try:
        overview, notes = overview_figures(budget)
    except Exception as exc:  # the overview must not cost the report
        overview, notes = [], [f"overview figures failed: {type(exc).__name__}: {exc}"]
    runtime = time.perf_counter() - start
    run = {
        "budget": budget,
        "include_slow": bool(include_slow),
        "seed": seed,
        "only": list(only) if only else None,
    }
    return write_report(
        outcomes,
        out_dir,
        run=run,
        runtime_s=runtime,
        command=command,
        overview=overview,
        overview_notes=notes,
        kernels=kernels.as_dict(),
    )
