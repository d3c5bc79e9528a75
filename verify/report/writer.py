"""Run the statements and write report.md, report.json, rows.csv and figures/ into a directory
(each figure as a 300 dpi PNG, with ``pdf`` also a PDF, and a CSV of its data
``<name>.data.csv``).

With several jobs (``jobs`` > 1, the default on a machine with several cores) or a cluster
``executor``, the checks run in worker processes (verify.sweep.executors), the proof
obligations of the Derivation section run in a local worker at the same time, and the figures
are drawn by the local workers; the statuses and numbers are those of a serial run (``jobs=1``).

The report is built in a folder beside the target (``.<name>.partial-<pid>-...``) and moved
into place, complete, at the end (:func:`verify.outputs.replace_dir`): the target holds either
the previous report or the new one, never a mix. A run interrupted (Ctrl-C, SIGTERM; see
verify.interrupts) writes the report of the checks that finished, marked interrupted (exit code
130), drawing no further figure; a second interrupt abandons it, leaving the previous report.
Every phase is timed (``summary.phases``) and ``summary.runtime_s`` is their sum: the whole run.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify._forkserver import REPORT_PRELOAD, start_fork_server
from verify.kernel_cache.warmup import compile_kernels
from verify.outputs import check_replaceable, replace_dir, staging_dir
from verify.registry import Budget, FigureData
from verify.report import REPORT_FILES
from verify.report.document import INTERRUPTED_EXIT, build_document
from verify.report.drawing import (
    FIGURES_DIR,
    EarlyFigures,
    draw_figures,
)
from verify.report.environment import environment
from verify.report.export import write_rows_csv
from verify.report.markdown import render_markdown
from verify.report.overview import overview_figures
from verify.report.readme import EXAMPLE_DIR
from verify.report.runner import (
    REPO_ROOT,
    StatementOutcome,
    run_statements,
    select_statements,
)
from verify.report.schedule import DERIVATIONS, recorded_costs
from verify.sweep.executors import local_executor, open_executor, stop_executor
from verify.validation import check_choice, check_int

ROWS_CSV = "rows.csv"  # every check row, flat (verify.report.export)
# the committed example report: its checks' run times order a parallel run (longest first)
EXAMPLE_REPORT = EXAMPLE_DIR / "report.json"


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


@dataclass
class PendingDerivations:
    """The Derivation section computed in a worker process (:func:`start_derivations`): its
    future and the folder its blueprint figure is drawn into."""

    future: cf.Future
    folder: Path

    def discard(self) -> None:
        self.future.cancel()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_derivations(
    pool: Any, statements: Sequence[str], pdf: bool = False
) -> PendingDerivations:
    """Submit issue 28's Derivation section (verify.proofs.blueprint.report_derivations) to the
    local process ``pool``, its blueprint figure drawn into a temporary folder (PDF too with
    ``pdf``)."""
    from verify.proofs.blueprint import report_derivations

    folder = Path(tempfile.mkdtemp(prefix="verify-derivations-"))
    future = pool.submit(report_derivations, folder / FIGURES_DIR, list(statements), pdf=pdf)
    return PendingDerivations(future, folder)


def _derivations(
    outcomes: Sequence[StatementOutcome],
    fig_dir: Path,
    state: RunState,
    pending: PendingDerivations | None = None,
    pdf: bool = False,
) -> dict[str, Any]:
    """Issue 28's section: the proof obligations' "Derivation" entries and the blueprint figure
    drawn into ``fig_dir`` (verify.proofs.blueprint; the obligations are discharged once per
    process), as its own phase ``derivations`` of the run (before the files are written, so an
    interrupt there is not deferred). ``pending``: computed in a worker since the run began
    (waited for here, its figure moved into ``fig_dir``); when that worker failed or was
    stopped, computed here."""
    from verify.proofs.blueprint import not_discharged, report_derivations

    state.phase = "derivations"
    started = time.perf_counter()
    derivations = None
    if pending is None and state.interrupted_in:  # like the overview: not computed
        state.phases["derivations_s"] = 0.0
        return not_discharged("not computed: the run was interrupted")
    if pending is not None:
        try:
            derivations = pending.future.result()
            fig_dir.mkdir(parents=True, exist_ok=True)
            for f in (pending.folder / FIGURES_DIR).iterdir():
                shutil.move(str(f), fig_dir / f.name)
        except (Exception, cf.CancelledError):  # (a stopped pool) computed here instead
            derivations = None
    if derivations is None:
        derivations = report_derivations(fig_dir, [o.statement.id for o in outcomes], pdf=pdf)
    state.phases["derivations_s"] = time.perf_counter() - started
    return derivations


def _attach_derivations(doc: dict[str, Any], derivations: dict[str, Any]) -> None:
    from verify.proofs.blueprint import statement_entries

    doc["derivations"] = derivations
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
    progress: bool = False,
    state: RunState | None = None,
    guard: Any = None,
    started: float | None = None,
    pool: Any = None,
    pdf: bool = False,
    derivations: PendingDerivations | None = None,
    early: EarlyFigures | None = None,
) -> Report:
    """Write ``report.md``, ``report.json``, ``rows.csv`` and ``figures/`` for ``outcomes``
    (plus the ``overview`` figures, which belong to no statement) into a staging folder beside
    ``out_dir`` and move it into place whole. ``out_dir`` must be new, empty, or hold only a
    previous report (:data:`REPORT_FILES`). ``guard`` (verify.interrupts.InterruptGuard): a
    first interrupt while the files are written is deferred. ``started``: the run's start
    (``time.perf_counter()``), so that ``summary.runtime_s`` covers every phase. ``pool``: a
    local process pool drawing the figures; ``pdf``: a PDF of each figure too;
    ``derivations``: the Derivation section already under way (:func:`start_derivations`);
    ``early``: figures drawn while the checks ran (verify.report.drawing.EarlyFigures)."""
    out = Path(out_dir)
    check_replaceable("out_dir", out, REPORT_FILES)
    state = state or RunState(out_dir=out)
    started = time.perf_counter() if started is None else started
    stage = staging_dir(out)
    try:
        state.phase = "figures"
        drawing = time.perf_counter()
        figures, over, _ = draw_figures(
            outcomes,
            stage,
            overview,
            progress=progress,
            state=state,
            pool=pool,
            pdf=pdf,
            early=early,
        )
        state.phases["figures_s"] = time.perf_counter() - drawing
        derived = _derivations(outcomes, stage / FIGURES_DIR, state, derivations, pdf)
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
            _attach_derivations(doc, derived)
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
    paths += [out / f for f in derived["figure"]["files"][:1]]
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
    jobs: int | None = 1,
    executor: str | None = None,
    pdf: bool = False,
) -> Report:
    """Run the registered statements (all, or those in ``only``) at ``budget`` and write the
    report into ``out_dir``. ``report.exit_code`` is 0 when every statement holds, is vacuous,
    is undecided or was not run at this budget, 1 when one is violated or raised, 130 when the
    run was interrupted.

    First the Numba kernels are compiled or loaded from the cache, as a step of its own
    (:func:`verify.kernel_cache.warmup.compile_kernels`, its time in report.json's ``kernels``), so
    no check's run time includes compilation. ``log`` receives the steps' progress lines.
    ``guard``/``state``: see :func:`write_report` and :class:`RunState` (the command line
    passes them, so that Ctrl-C is answered at once and the report still written).

    ``jobs``/``executor``: where the checks run (verify.sweep.executors.open_executor: "local"
    with ``jobs`` processes, None meaning one per core; "dask", "dask://HOST:PORT", "ray",
    ...). ``jobs=1`` with the local executor runs everything in this process, one thing after
    another (so does a local run of one task: one check, and no derivation obligations);
    otherwise the checks run on the executor while a local process pool computes the
    Derivation section, then draws the figures. The checks are submitted longest first by the
    run times of the previous report in ``out_dir`` or of the committed example report
    (verify.report.schedule), the Derivation section at its cost's place among them when it
    shares their pool. ``pdf``: a PDF of each figure besides its PNG.
    """
    started = time.perf_counter()
    budget = check_choice("budget", budget, ("quick", "default", "full"))  # type: ignore[assignment]
    seed = check_int("seed", seed, minimum=0)
    out = Path(out_dir)
    check_replaceable("out_dir", out, REPORT_FILES)
    state = state or RunState(out_dir=out)
    spec = (executor or "local").strip()
    local = spec == "local"
    n_local = jobs or os.cpu_count() or 1
    if local and n_local > 1:  # its imports run while this process loads the kernels
        start_fork_server(REPORT_PRELOAD)
    state.phase = "kernels"
    kernels = compile_kernels(log)  # first: importing the statements imports kernels too
    state.phases["kernels_s"] = time.perf_counter() - started
    t = time.perf_counter()
    state.phase = "statements"
    if log:
        log("loading the statements ...")
    statements = select_statements(only)
    state.phases["statements_s"] = time.perf_counter() - t
    state.phase = "checks"
    if local and _tasks(statements, include_slow) <= 1:
        n_local = 1  # one check and no derivation: worker processes would add only start-up
    handle = pool = pending = early = None
    try:
        if not (local and n_local == 1):
            handle = open_executor(spec, jobs=jobs, preload=REPORT_PRELOAD)
            if log:
                log(f"checks on {handle.description}")
            pool = handle.executor if local else local_executor(n_local, REPORT_PRELOAD)
            if pool is handle.executor:  # a check's figures are drawn as soon as it is done
                early = EarlyFigures(pool, pdf)
        costs = recorded_costs([out / "report.json", REPO_ROOT / EXAMPLE_REPORT], budget)
        side: list[tuple[float, Callable[[], Any]]] = []
        if pool is not None:  # in the checks' order by its cost, when it shares their pool

            def derive() -> None:
                nonlocal pending
                pending = start_derivations(pool, [st.id for st in statements], pdf)

            side.append(
                (costs.get(DERIVATIONS, 0.0) if pool is handle.executor else math.inf, derive)
            )
        t = time.perf_counter()
        outcomes = run_statements(
            statements,
            budget=budget,
            include_slow=include_slow,
            seed=seed,
            progress=progress,
            on_done=lambda n, total: _count(state, n, total),
            executor=handle.executor if handle is not None else None,
            costs=costs,
            side_jobs=side,
            on_outcome=early.submit if early is not None else None,
        )
        state.phases["checks_s"] = time.perf_counter() - t
        if handle is not None and any(o.interrupted for o in outcomes):
            stop_executor(handle.executor)  # the running checks end now
            if pool is handle.executor:  # (the figures are drawn here, one after another)
                pool = None
                if pending is not None:  # its worker was stopped too: its future may never
                    pending.discard()  # complete (a broken pool may leave it running)
                    pending = None
        return _finish(
            outcomes,
            out,
            budget=budget,
            include_slow=include_slow,
            seed=seed,
            only=only,
            command=command,
            kernels=kernels.as_dict(),
            progress=progress,
            state=state,
            guard=guard,
            started=started,
            pool=pool,
            pdf=pdf,
            derivations=pending,
            early=early,
        )
    except BaseException:  # interrupted, abandoned or failed: the workers end now
        for ex in (pool, handle.executor if handle is not None else None):
            if ex is not None:
                stop_executor(ex)
        raise
    finally:
        if early is not None:
            early.discard()
        if pending is not None:
            pending.discard()
        if pool is not None and handle is not None and pool is not handle.executor:
            pool.shutdown(wait=True, cancel_futures=True)
        if handle is not None:
            handle.close()


def _tasks(statements: Sequence[Any], include_slow: bool) -> int:
    """How many tasks a run of ``statements`` has at most: the checks it runs, and the
    Derivation section when one of them has derivation obligations."""
    from verify.proofs.blueprint import has_obligations

    checks = sum(
        1 for st in statements for c in st.checks if not c.missing and (include_slow or not c.slow)
    )
    return checks + has_obligations([st.id for st in statements])


def _finish(
    outcomes: list[StatementOutcome],
    out: Path,
    *,
    budget: Budget,
    include_slow: bool,
    seed: int,
    only: Sequence[str] | None,
    **write: Any,
) -> Report:
    """After the checks: the overview figures, then :func:`write_report`."""
    state: RunState = write["state"]
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
        overview=overview,
        overview_notes=notes,
        **write,
    )


def _count(state: RunState, done: int, total: int) -> None:
    state.checks_done, state.checks_total = done, total
