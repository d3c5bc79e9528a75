"""Run the statements and write report.md, report.json, rows.csv and figures/ into a directory
(each figure as a 300 dpi PNG, a PDF and a CSV of its data ``<name>.data.csv``).

The report is built in a folder beside the target (``.<name>.partial-<pid>-...``) and moved
into place, complete, at the end (:func:`verify.outputs.replace_dir`): the target holds either
the previous report or the new one, never a mix. A run interrupted (Ctrl-C, SIGTERM; see
verify.interrupts) writes the report of the checks that finished, marked interrupted (exit code
130), drawing no further figure; a second interrupt abandons it, leaving the previous report.
Every phase is timed (``summary.phases``) and ``summary.runtime_s`` is their sum: the whole run.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.outputs import check_replaceable, replace_dir, staging_dir
from verify.registry import Budget, FigureData
from verify.report import REPORT_FILES
from verify.report.document import INTERRUPTED_EXIT, build_document, jsonable
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
NOT_DRAWN = "not drawn: the run was interrupted (the data is in report.json)"


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


@dataclass
class RunState:
    """Where a report run is (read by the Ctrl-C announcement) and how long each phase took."""

    out_dir: Path
    phase: str = "starting"
    checks_done: int = 0
    checks_total: int = 0
    interrupted_in: str | None = None
    phases: dict[str, float] = field(default_factory=dict)

    def announce(self) -> str:
        """What happens after a first Ctrl-C, said at once."""
        if self.phase == "writing":
            return f"the report is being written to {self.out_dir}; it completes in a moment"
        if self.phase in ("starting", "kernels", "statements"):
            return (
                f"stopping before any check ran ({self.phase}); nothing is written,"
                f" {self.out_dir} stays as it was"
            )
        what = {
            "checks": "stopping the running check",
            "figures": "drawing no further figure (their data stays in report.json)",
        }.get(self.phase, f"stopping ({self.phase})")
        return (
            f"{what}; writing the report of the {self.checks_done} finished check(s) to"
            f" {self.out_dir}, marked interrupted (exit code 130); the previous report there"
            " stays until the new one is complete"
        )


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
    outcomes: Sequence[StatementOutcome],
    out_dir: Path,
    overview: Sequence[FigureData] = (),
    *,
    progress: bool = False,
    state: RunState | None = None,
) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], list[dict[str, Any]], list[Path]]:
    """Draw every check's figures and the overview figures into ``out_dir/figures``, with a
    progress bar (n of m) when ``progress``. A figure that cannot be drawn is recorded with its
    error. Interrupted (KeyboardInterrupt), the figures not yet drawn are recorded as not drawn
    (``state.interrupted_in = "figures"``) and the entries are returned all the same."""
    from tqdm.auto import tqdm

    fig_dir = out_dir / FIGURES_DIR
    if fig_dir.is_dir():  # (a staging folder is new: this only matters to direct callers)
        for old in fig_dir.iterdir():
            if old.suffix in (*FIGURE_FORMATS, ".csv") and old.is_file():
                old.unlink()
    jobs: list[tuple[list[dict[str, Any]], FigureData]] = []
    entries: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for o in outcomes:
        for c in o.checks:
            if c.result is None:
                continue
            lst = entries.setdefault((c.statement_id, c.check_name), [])
            jobs += [(lst, fig) for fig in c.result.figures]
    over: list[dict[str, Any]] = []
    jobs += [(over, fig) for fig in overview]
    taken: set[str] = set()
    paths: list[Path] = []
    bar = tqdm(total=len(jobs), desc="figures", unit="fig", disable=not progress)
    done = 0
    try:
        for lst, fig in jobs:
            lst.append(_draw_entry(fig, fig_dir, taken, paths))
            done += 1
            bar.update(1)
    except KeyboardInterrupt:
        for lst, fig in jobs[done:]:
            entry = _draw_entry_not_drawn(fig)
            lst.append(entry)
        if state is not None:
            state.interrupted_in = "figures"
    finally:
        bar.close()
    return entries, over, paths


def _derivations(
    outcomes: Sequence[StatementOutcome], fig_dir: Path, state: RunState
) -> dict[str, Any]:
    """Issue 28's section: the proof obligations' "Derivation" entries and the blueprint figure
    drawn into ``fig_dir`` (verify.proofs.blueprint; the obligations are discharged once per
    process), as its own phase ``derivations`` of the run (before the files are written, so an
    interrupt there is not deferred)."""
    from verify.proofs.blueprint import report_derivations

    state.phase = "derivations"
    started = time.perf_counter()
    derivations = report_derivations(fig_dir, [o.statement.id for o in outcomes])
    state.phases["derivations_s"] = time.perf_counter() - started
    return derivations


def _attach_derivations(doc: dict[str, Any], derivations: dict[str, Any]) -> None:
    from verify.proofs.blueprint import statement_entries

    doc["derivations"] = derivations
    for st in doc["statements"]:
        st["derivation_steps"] = statement_entries(derivations, st["id"])


def _draw_entry_not_drawn(fig: FigureData) -> dict[str, Any]:
    return {
        "name": str(getattr(fig, "name", "")),
        "title": str(getattr(fig, "title", "")),
        "kind": str(getattr(fig, "kind", "")),
        "file": None,
        "files": [],
        "data": jsonable(getattr(fig, "data", None)),
        "error": NOT_DRAWN,
    }


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
    progress: bool = False,
    state: RunState | None = None,
    guard: Any = None,
    started: float | None = None,
) -> Report:
    """Write ``report.md``, ``report.json``, ``rows.csv`` and ``figures/`` for ``outcomes``
    (plus the ``overview`` figures, which belong to no statement) into a staging folder beside
    ``out_dir`` and move it into place whole. ``out_dir`` must be new, empty, or hold only a
    previous report (:data:`REPORT_FILES`). ``guard`` (verify.interrupts.InterruptGuard): a
    first interrupt while the files are written is deferred. ``started``: the run's start
    (``time.perf_counter()``), so that ``summary.runtime_s`` covers every phase."""
    out = Path(out_dir)
    check_replaceable("out_dir", out, REPORT_FILES)
    state = state or RunState(out_dir=out)
    started = time.perf_counter() if started is None else started
    stage = staging_dir(out)
    try:
        state.phase = "figures"
        drawing = time.perf_counter()
        figures, over, _ = draw_figures(outcomes, stage, overview, progress=progress, state=state)
        state.phases["figures_s"] = time.perf_counter() - drawing
        derivations = _derivations(outcomes, stage / FIGURES_DIR, state)
        state.phase = "writing"
        with guard.deferred() if guard is not None else nullcontext():
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
            _attach_derivations(doc, derivations)
            summ = doc["summary"]
            summ["figures_s"] = state.phases["figures_s"]  # drawing and writing the figures
            summ["phases"] = dict(state.phases)
            summ["runtime_s"] = time.perf_counter() - started  # every phase, this one too
            summ["interrupted_in"] = state.interrupted_in
            if state.interrupted_in:
                summ["exit_code"] = INTERRUPTED_EXIT
                summ["all_hold"] = False
            (stage / "report.json").write_text(
                json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8"
            )
            write_rows_csv(doc, stage / ROWS_CSV)
            prefix = os.path.relpath(REPO_ROOT, out.resolve())
            (stage / "report.md").write_text(
                render_markdown(doc, repo_prefix=prefix), encoding="utf-8"
            )
            replace_dir(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    paths = [out / f["file"] for f in _all_figure_entries(doc) if f.get("file")]
    paths += [out / f for f in derivations["figure"]["files"][:1]]
    return Report(out, out / "report.md", out / "report.json", paths, doc, list(outcomes))


def _all_figure_entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    entries = [f for st in doc["statements"] for c in st["checks"] for f in c["figures"]]
    return entries + list((doc.get("overview") or {}).get("figures", []))


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
    guard: Any = None,
    state: RunState | None = None,
) -> Report:
    """Run the registered statements (all, or those in ``only``) at ``budget`` and write the
    report into ``out_dir``. ``report.exit_code`` is 0 when every statement holds, is vacuous,
    is undecided or was not run at this budget, 1 when one is violated or raised, 130 when the
    run was interrupted.

    First the Numba kernels are compiled or loaded from the cache, as a step of its own
    (:func:`verify.report.warmup.compile_kernels`, its time in report.json's ``kernels``), so
    no check's run time includes compilation. ``log`` receives the steps' progress lines.
    ``guard``/``state``: see :func:`write_report` and :class:`RunState` (the command line
    passes them, so that Ctrl-C is answered at once and the report still written)."""
    started = time.perf_counter()
    budget = check_choice("budget", budget, ("quick", "default", "full"))  # type: ignore[assignment]
    seed = check_int("seed", seed, minimum=0)
    out = Path(out_dir)
    check_replaceable("out_dir", out, REPORT_FILES)
    state = state or RunState(out_dir=out)
    state.phase = "kernels"
    kernels = compile_kernels(log)  # first: importing the statements imports kernels too
    state.phases["kernels_s"] = time.perf_counter() - started
    t = time.perf_counter()
    state.phase = "statements"
    if log:
        log("loading the statements ...")
    statements = select_statements(only)
    state.phases["statements_s"] = time.perf_counter() - t
    t = time.perf_counter()
    state.phase = "checks"
    outcomes = run_statements(
        statements,
        budget=budget,
        include_slow=include_slow,
        seed=seed,
        progress=progress,
        on_done=lambda n, total: _count(state, n, total),
    )
    state.phases["checks_s"] = time.perf_counter() - t
    t = time.perf_counter()
    overview: list[FigureData] = []
    notes: list[str] = []
    if any(o.interrupted for o in outcomes):
        state.interrupted_in = "checks"
        notes = ["overview figures not computed: the run was interrupted"]
    else:
        state.phase = "overview"
        try:
            overview, notes = overview_figures(budget)
        except KeyboardInterrupt:
            state.interrupted_in = "overview"
            notes = ["overview figures not computed: the run was interrupted"]
        except Exception as exc:  # the overview must not cost the report
            notes = [f"overview figures failed: {type(exc).__name__}: {exc}"]
    state.phases["overview_s"] = time.perf_counter() - t
    run = {
        "budget": budget,
        "include_slow": bool(include_slow),
        "seed": seed,
        "only": list(only) if only else None,
    }
    return write_report(
        outcomes,
        out,
        run=run,
        runtime_s=state.phases["checks_s"],
        command=command,
        overview=overview,
        overview_notes=notes,
        kernels=kernels.as_dict(),
        progress=progress,
        state=state,
        guard=guard,
        started=started,
    )


def _count(state: RunState, done: int, total: int) -> None:
    state.checks_done, state.checks_total = done, total
