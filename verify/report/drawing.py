"""Draw a report's figures into its folder: one after another, or on a local process pool.

Each figure is a 300 dpi PNG, with ``pdf`` also a PDF, and a CSV of its data
(``<name>.data.csv``); the file names are chosen in the report's order before any is drawn,
so they do not depend on which drawing finishes first.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.registry import FigureData
from verify.report.document import jsonable
from verify.report.figures import draw_figure_files, figure_filename
from verify.report.runner import StatementOutcome

FIGURES_DIR = "figures"
FIGURE_FORMATS = (".png", ".pdf")  # the first is the one report.md shows; PDF with pdf=True
NOT_DRAWN = "not drawn: the run was interrupted (the data is in report.json)"


def figure_formats(pdf: bool = False) -> tuple[str, ...]:
    """The files each figure is drawn into: PNG, and PDF too with ``pdf``."""
    return FIGURE_FORMATS if pdf else FIGURE_FORMATS[:1]


def _entry(fig: FigureData) -> dict[str, Any]:
    """A figure's report entry before it is drawn (``error`` says it was not)."""
    return {
        "name": str(getattr(fig, "name", "")),
        "title": str(getattr(fig, "title", "")),
        "kind": str(getattr(fig, "kind", "")),
        "file": None,
        "files": [],
        "data": jsonable(getattr(fig, "data", None)),
        "error": NOT_DRAWN,
    }


def _drawn(entry: dict[str, Any], written: list[Path] | None, exc: BaseException | None) -> None:
    """Record in ``entry`` the files written, or the error that stopped the drawing."""
    if exc is not None or not written:
        entry["error"] = f"{type(exc).__name__}: {exc}"
        return
    entry["file"] = f"{FIGURES_DIR}/{written[0].name}"
    entry["files"] = [f"{FIGURES_DIR}/{p.name}" for p in written]
    entry["error"] = None


def draw_figures(
    outcomes: Sequence[StatementOutcome],
    out_dir: Path,
    overview: Sequence[FigureData] = (),
    *,
    progress: bool = False,
    state: Any = None,
    pool: Any = None,
    pdf: bool = False,
) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], list[dict[str, Any]], list[Path]]:
    """Draw every check's figures and the overview figures into ``out_dir/figures`` (PNG, and
    PDF with ``pdf``; each figure's data as CSV), with a progress bar (n of m) when
    ``progress``; on the local process ``pool`` when given, several at once (the file names are
    chosen first, in order, so they do not depend on which finishes first). A figure that
    cannot be drawn is recorded with its error. Interrupted (KeyboardInterrupt), the figures
    not yet drawn are recorded as not drawn (``state.interrupted_in = "figures"``, ``state``
    a verify.report.writer.RunState; the ones
    being drawn are waited for, a second or so) and the entries are returned all the same."""
    from tqdm.auto import tqdm

    fig_dir = out_dir / FIGURES_DIR
    if fig_dir.is_dir():  # (a staging folder is new: this only matters to direct callers)
        for old in fig_dir.iterdir():
            if old.suffix in (*FIGURE_FORMATS, ".csv") and old.is_file():
                old.unlink()
    figs: list[FigureData] = []
    entries: dict[tuple[str, str], list[dict[str, Any]]] = {}
    jobs: list[dict[str, Any]] = []
    for o in outcomes:
        for c in o.checks:
            if c.result is None:
                continue
            lst = entries.setdefault((c.statement_id, c.check_name), [])
            for fig in c.result.figures:
                lst.append(_entry(fig))
                jobs.append(lst[-1])
                figs.append(fig)
    over = [_entry(fig) for fig in overview]
    jobs += over
    figs += list(overview)
    from verify.proofs.blueprint import BLUEPRINT

    taken: set[str] = {BLUEPRINT}  # the Derivation section's figure joins these files
    targets = [fig_dir / figure_filename(str(e["name"] or "figure"), taken) for e in jobs]
    also = figure_formats(pdf)[1:]
    bar = tqdm(total=len(jobs), desc="figures", unit="fig", disable=not progress)
    results: dict[int, list[Path]] = {}
    try:
        if pool is None:
            for i, (fig, target) in enumerate(zip(figs, targets, strict=True)):
                try:
                    results[i] = draw_figure_files(fig, target, also=also)
                    _drawn(jobs[i], results[i], None)
                except Exception as exc:  # recorded in the report as a warning
                    _drawn(jobs[i], None, exc)
                bar.update(1)
        else:
            _draw_on_pool(pool, figs, targets, also, jobs, results, bar)
    except KeyboardInterrupt:  # the entries not drawn keep their NOT_DRAWN error
        if state is not None:
            state.interrupted_in = "figures"
    finally:
        bar.close()
    paths = [results[i][0] for i in sorted(results)]
    return entries, over, paths


def _draw_on_pool(
    pool: Any,
    figs: Sequence[FigureData],
    targets: Sequence[Path],
    also: Sequence[str],
    jobs: Sequence[dict[str, Any]],
    results: dict[int, list[Path]],
    bar: Any,
) -> None:
    futures = {
        pool.submit(draw_figure_files, f, t, also=also): i
        for i, (f, t) in enumerate(zip(figs, targets, strict=True))
    }

    def take(fut: cf.Future) -> None:
        i = futures[fut]
        try:
            results[i] = fut.result()
            _drawn(jobs[i], results[i], None)
        except Exception as exc:  # recorded in the report as a warning
            _drawn(jobs[i], None, exc)
        bar.update(1)

    pending = set(futures)
    try:
        for fut in cf.as_completed(futures):
            pending.discard(fut)
            take(fut)
    except KeyboardInterrupt:
        for fut in pending:
            fut.cancel()
        # figures being drawn write into the staging folder: wait for them before it moves
        cf.wait([f for f in pending if not f.cancelled()])
        for fut in pending:
            if not fut.cancelled() and fut.exception() is None:
                take(fut)
        raise
