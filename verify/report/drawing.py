"""Draw a report's figures into its folder: one after another, or on a local process pool.

Each figure is a 300 dpi PNG, with ``pdf`` also a PDF, and a CSV of its data
(``<name>.data.csv``); the file names are chosen in the report's order before any is drawn,
so they do not depend on which drawing finishes first. With a local pool, a check's figures
can be drawn while the other checks still run (:class:`EarlyFigures`): into a scratch folder
under provisional names, moved to their report names afterwards.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.json_values import jsonable
from verify.outputs import figure_paths
from verify.registry import FigureData
from verify.report.figures import draw_figure_files, figure_filename
from verify.report.runner import CheckOutcome, StatementOutcome

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


FigureKey = tuple[str, str, int]  # (statement id, check name, index among its figures)


class EarlyFigures:
    """A check's figures drawn on the local process ``pool`` as soon as its outcome arrives
    (:meth:`submit`), while the other checks run: the pool takes them after the checks already
    queued, so they fill the workers the last checks leave idle. Each is drawn into a scratch
    folder under a provisional name; :func:`draw_figures` moves it to its report name
    (:meth:`take`), names being chosen in the report's order as for every other figure. Files
    do not depend on their names: the same bytes as a figure drawn at the end."""

    def __init__(self, pool: Any, pdf: bool = False) -> None:
        self.pool = pool
        self.also = figure_formats(pdf)[1:]
        self.folder = Path(tempfile.mkdtemp(prefix="verify-figures-"))
        self.futures: dict[FigureKey, cf.Future] = {}
        self._names = itertools.count()  # provisional names, never reused

    def submit(self, outcome: CheckOutcome) -> None:
        """Submit the figures of a finished check. A pool that no longer takes work (a worker
        died, it was shut down) is not an error here: those figures are drawn at the end."""
        if outcome.result is None:
            return
        for k, fig in enumerate(outcome.result.figures):
            target = self.folder / f"{next(self._names)}.png"
            try:
                fut = self.pool.submit(draw_figure_files, fig, target, also=self.also)
            except (cf.BrokenExecutor, RuntimeError):  # (RuntimeError: after shutdown)
                return
            self.futures[outcome.statement_id, outcome.check_name, k] = fut

    def take(self, key: FigureKey, target: Path) -> list[Path] | None:
        """The files of figure ``key``, moved to ``target`` (its PDF and CSV beside it); None
        when it was not drawn here (never submitted, cancelled, or its pool was stopped):
        then it is drawn as usual. An error of the drawing itself is raised."""
        fut = self.futures.pop(key, None)
        if fut is None:
            return None
        try:
            written = fut.result()
        except (cf.CancelledError, cf.BrokenExecutor):
            return None
        final = figure_paths(target, also=self.also)
        target.parent.mkdir(parents=True, exist_ok=True)
        for src, dst in zip(written, final, strict=True):
            shutil.move(str(src), dst)
        return final

    def discard(self) -> None:
        """Cancel what has not started and remove the scratch folder."""
        for fut in self.futures.values():
            fut.cancel()
        self.futures.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


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
    early: EarlyFigures | None = None,
) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], list[dict[str, Any]], list[Path]]:
    """Draw every check's figures and the overview figures into ``out_dir/figures`` (PNG, and
    PDF with ``pdf``; each figure's data as CSV), with a progress bar (n of m) when
    ``progress``; on the local process ``pool`` when given, several at once (the file names are
    chosen first, in order, so they do not depend on which finishes first). A figure that
    cannot be drawn is recorded with its error. Interrupted (KeyboardInterrupt), the figures
    not yet drawn are recorded as not drawn (``state.interrupted_in = "figures"``, ``state``
    a verify.report.writer.RunState; the ones
    being drawn are waited for, a second or so) and the entries are returned all the same.
    ``early``: figures already drawn during the checks (:class:`EarlyFigures`), moved here."""
    from tqdm.auto import tqdm

    fig_dir = out_dir / FIGURES_DIR
    if fig_dir.is_dir():  # (a staging folder is new: this only matters to direct callers)
        for old in fig_dir.iterdir():
            if old.suffix in (*FIGURE_FORMATS, ".csv") and old.is_file():
                old.unlink()
    figs: list[FigureData] = []
    entries: dict[tuple[str, str], list[dict[str, Any]]] = {}
    jobs: list[dict[str, Any]] = []
    keys: list[FigureKey | None] = []
    for o in outcomes:
        for c in o.checks:
            if c.result is None:
                continue
            lst = entries.setdefault((c.statement_id, c.check_name), [])
            for k, fig in enumerate(c.result.figures):
                lst.append(_entry(fig))
                jobs.append(lst[-1])
                figs.append(fig)
                keys.append((c.statement_id, c.check_name, k))
    over = [_entry(fig) for fig in overview]
    jobs += over
    figs += list(overview)
    keys += [None] * len(over)
    from verify.proofs.blueprint import BLUEPRINT

    taken: set[str] = {BLUEPRINT}  # the Derivation section's figure joins these files
    targets = [fig_dir / figure_filename(str(e["name"] or "figure"), taken) for e in jobs]
    also = figure_formats(pdf)[1:]
    bar = tqdm(total=len(jobs), desc="figures", unit="fig", disable=not progress)
    results: dict[int, list[Path]] = {}
    try:
        todo = _take_early(early, keys, targets, jobs, results, bar)
        if pool is None:
            for i in todo:
                try:
                    results[i] = draw_figure_files(figs[i], targets[i], also=also)
                    _drawn(jobs[i], results[i], None)
                except Exception as exc:  # recorded in the report as a warning
                    _drawn(jobs[i], None, exc)
                bar.update(1)
        else:
            _draw_on_pool(pool, figs, targets, also, jobs, results, bar, todo)
    except KeyboardInterrupt:  # the entries not drawn keep their NOT_DRAWN error
        if state is not None:
            state.interrupted_in = "figures"
    finally:
        bar.close()
    paths = [results[i][0] for i in sorted(results)]
    return entries, over, paths


def _take_early(
    early: EarlyFigures | None,
    keys: Sequence[FigureKey | None],
    targets: Sequence[Path],
    jobs: Sequence[dict[str, Any]],
    results: dict[int, list[Path]],
    bar: Any,
) -> list[int]:
    """Move the figures ``early`` drew into place (recording them, or their drawing's error);
    the indices of those still to draw."""
    todo: list[int] = []
    for i, key in enumerate(keys):
        try:
            got = early.take(key, targets[i]) if early is not None and key is not None else None
        except Exception as exc:  # the drawing failed: recorded as a drawing here would be
            _drawn(jobs[i], None, exc)
            bar.update(1)
            continue
        if got is None:
            todo.append(i)
        else:
            results[i] = got
            _drawn(jobs[i], got, None)
            bar.update(1)
    return todo


def _draw_on_pool(
    pool: Any,
    figs: Sequence[FigureData],
    targets: Sequence[Path],
    also: Sequence[str],
    jobs: Sequence[dict[str, Any]],
    results: dict[int, list[Path]],
    bar: Any,
    todo: Sequence[int],
) -> None:
    futures = {pool.submit(draw_figure_files, figs[i], targets[i], also=also): i for i in todo}

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
