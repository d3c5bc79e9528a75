"""Run the registered statements' checks within a budget, keeping every outcome.

A check that raises is not dropped: it becomes a :class:`CheckOutcome` with status ``"error"``
and its traceback, and counts as a failure. A check registered with ``expected_violation`` (a
documented finding, like a strict xfail) is ``"known_violation"`` when it returns VIOLATED
and ``"not_reproduced"`` (a failure) otherwise. Statement status aggregates its checks':

    violated > error > not_reproduced > undecided > known_violation > holds > vacuous
    > definitional

(the first present wins), ``"skipped"`` when every check is slow and slow checks were not run,
``"unchecked"`` when the statement has no check at all, and ``"interrupted"`` when the run was
stopped (Ctrl-C) before any of its checks finished; the checks that finished are kept.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from verify._threads import blas_on_one_thread
from verify.errors import ValidationError
from verify.registry import (
    Budget,
    Check,
    CheckContext,
    CheckResult,
    Statement,
    Status,
    all_statements,
)
from verify.report.schedule import plan_tasks
from verify.validation import check_choice, check_int

ERROR = "error"
KNOWN_VIOLATION = "known_violation"  # a documented finding (Check.expected_violation) reproduced
NOT_REPRODUCED = "not_reproduced"  # a documented finding that no longer reproduces
SKIPPED = "skipped"
UNCHECKED = "unchecked"
INTERRUPTED = "interrupted"

# what a check run can end as, in order of precedence for its statement
CHECK_STATUSES: tuple[str, ...] = (
    Status.VIOLATED.value,
    ERROR,
    NOT_REPRODUCED,
    Status.UNDECIDED.value,
    KNOWN_VIOLATION,
    Status.HOLDS.value,
    Status.VACUOUS.value,
    Status.DEFINITIONAL.value,
)
# every status a statement or check can have in a report
STATUS_ORDER: tuple[str, ...] = (*CHECK_STATUSES, SKIPPED, UNCHECKED, INTERRUPTED)
# statuses that make `python -m verify report` exit with 1. "undecided" is not among them: it
# means the arithmetic or the sample sizes could not settle a check (e.g. an asymptotic bound
# missed at a small N), which the report lists prominently but which refutes nothing.
FAILING: frozenset[str] = frozenset({Status.VIOLATED.value, ERROR, NOT_REPRODUCED, INTERRUPTED})

REPO_ROOT = Path(__file__).resolve().parents[2]
# a quick-budget check slower than this gets a warning in the report
QUICK_CHECK_SECONDS = 30.0


@dataclass
class ErrorInfo:
    """An exception raised by a check: its type, message and formatted traceback."""

    type: str
    message: str
    traceback: str


@dataclass
class CheckOutcome:
    """One check run: its result, or the error it raised, and consistency warnings."""

    statement_id: str
    check_name: str
    slow: bool
    result: CheckResult | None = None
    error: ErrorInfo | None = None
    runtime_s: float = 0.0
    warnings: list[str] = field(default_factory=list)
    expected_violation: str | None = None  # counterexample file of a documented finding

    @property
    def status(self) -> str:
        if self.error is not None or self.result is None:
            return ERROR
        violated = self.result.status is Status.VIOLATED
        if self.expected_violation:  # like a strict xfail
            return KNOWN_VIOLATION if violated else NOT_REPRODUCED
        return self.result.status.value


@dataclass
class StatementOutcome:
    """Every check outcome of one statement, plus the names of slow checks not run."""

    statement: Statement
    checks: list[CheckOutcome] = field(default_factory=list)
    # checks not run: slow at this budget, or needing an optional package that is missing
    not_run: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)  # not reached: Ctrl-C during the run

    @property
    def status(self) -> str:
        if self.interrupted and not self.checks:
            return INTERRUPTED
        return aggregate_status([c.status for c in self.checks], has_skipped=bool(self.not_run))

    @property
    def runtime_s(self) -> float:
        return sum(c.runtime_s for c in self.checks)

    @property
    def warnings(self) -> list[str]:
        return [f"[{c.check_name}] {w}" for c in self.checks for w in c.warnings]


def aggregate_status(statuses: Sequence[str], *, has_skipped: bool = False) -> str:
    """The statement status from its checks' statuses (see the module docstring)."""
    for s in CHECK_STATUSES:
        if s in statuses:
            return s
    return SKIPPED if has_skipped else UNCHECKED


def exit_code(outcomes: Sequence[StatementOutcome]) -> int:
    """0 when every statement holds, is vacuous, is undecided, is a documented finding that
    reproduced, or was not run at this budget; else 1 (violated, in error, a documented finding
    that no longer reproduces, or interrupted)."""
    return 1 if any(o.status in FAILING for o in outcomes) else 0


def select_statements(only: Sequence[str] | None = None) -> list[Statement]:
    """Every registered statement in paper order, or those named in ``only`` (by id such as
    "Lemma 3.2", case-insensitive, or by slug such as "lemma_3_2")."""
    statements = all_statements()
    if not only:
        return statements
    by_key: dict[str, Statement] = {}
    for s in statements:
        by_key[s.id.lower()] = s
        by_key[s.slug] = s
    chosen: list[Statement] = []
    for name in only:
        stmt = by_key.get(str(name).strip().lower())
        if stmt is None:
            known = ", ".join(s.id for s in statements) or "none registered"
            raise ValidationError("--only", f"a registered statement id ({known})", name)
        if stmt not in chosen:
            chosen.append(stmt)
    return sorted(chosen, key=statements.index)


def consistency_warnings(result: CheckResult) -> list[str]:
    """Things a reader should know about a result that contradicts itself."""
    out: list[str] = []
    bad = [r.label for r in result.rows if not row_ok(r)]
    if result.status is Status.HOLDS and bad:
        out.append(f"status 'holds' but {len(bad)} row(s) fall outside their bound: {bad[:5]}")
    if result.status is Status.VIOLATED:
        if not result.counterexample:
            out.append("status 'violated' without a counterexample file")
        elif (
            not (REPO_ROOT / result.counterexample).exists()
            and not Path(result.counterexample).exists()
        ):
            out.append(f"counterexample file {result.counterexample} does not exist")
    return out


def row_ok(row: Any) -> bool:
    """``row.ok``; False when the comparison itself fails (e.g. a non-numeric value)."""
    try:
        return bool(row.ok)
    except Exception:  # a row whose comparison itself fails is not ok
        return False


def run_check_outcome(stmt: Statement, check: Check, ctx: CheckContext) -> CheckOutcome:
    """Run one check; an exception becomes an ``error`` outcome with its traceback. BLAS runs on
    one thread during the check, wherever it runs: a product's rounding depends on how BLAS
    splits it over threads, and a dask worker has one (measured: Lemma 2.9's bounds differed in
    the last digit between a serial run with 2 BLAS threads and a dask run)."""
    outcome = CheckOutcome(
        statement_id=stmt.id,
        check_name=check.name,
        slow=check.slow,
        expected_violation=getattr(check, "expected_violation", None),
    )
    start = time.perf_counter()
    try:
        with blas_on_one_thread():  # the same sums in every process (a dask worker has 1)
            result = check.run(ctx, stmt)
        if not isinstance(result, CheckResult):
            raise TypeError(f"check returned {type(result).__name__}, expected CheckResult")
        outcome.result = result
        outcome.warnings = consistency_warnings(result)
        exp = outcome.expected_violation
        if exp and result.status is Status.VIOLATED and result.counterexample:
            if Path(result.counterexample).name != Path(exp).name:
                outcome.warnings.append(
                    f"documented counterexample {exp} but the check saved {result.counterexample}"
                )
        elif exp:
            outcome.warnings.append(f"documented finding {exp} did not reproduce")
    except Exception as exc:  # reported, counted as failure; KeyboardInterrupt propagates
        outcome.error = ErrorInfo(
            type=type(exc).__name__, message=str(exc), traceback=traceback.format_exc()
        )
    outcome.runtime_s = time.perf_counter() - start
    return outcome


def run_check_by_name(
    statement_id: str, check_name: str, budget: str, seed: int, imports: Sequence[str] = ()
) -> CheckOutcome:
    """:func:`run_check_outcome` of the check ``check_name`` of statement ``statement_id`` with
    ``CheckContext(budget, seed)``, looked up in this process's registry after importing the
    plugin modules ``imports`` (what a worker process runs: it gets names, not objects)."""
    if imports:
        from verify.plugins import import_modules

        import_modules(imports)
    stmt = select_statements([statement_id])[0]
    for check in stmt.checks:
        if check.name == check_name:
            ctx = CheckContext(budget=budget, seed=seed, progress=False)  # type: ignore[arg-type]
            return run_check_outcome(stmt, check, ctx)
    raise ValidationError("check", f"a check of {statement_id}", check_name)


def _lost_outcome(stmt: Statement, check: Check, exc: BaseException) -> CheckOutcome:
    """A check whose worker raised outside the check (it died, its result could not be sent
    back, the lookup failed): an ``error`` outcome with the (remote) traceback."""
    return CheckOutcome(
        statement_id=stmt.id,
        check_name=check.name,
        slow=check.slow,
        expected_violation=getattr(check, "expected_violation", None),
        error=ErrorInfo(
            type=type(exc).__name__,
            message=f"on a worker: {exc}",
            traceback="".join(traceback.format_exception(exc)),
        ),
    )


def run_checks_by_name(
    checks: Sequence[tuple[str, str]], budget: str, seed: int, imports: Sequence[str] = ()
) -> list[CheckOutcome]:
    """:func:`run_check_by_name` of each (statement id, check name) of ``checks``, one after
    another in this process (checks that share an in-process result: ``Check.shares``)."""
    return [run_check_by_name(sid, name, budget, seed, imports) for sid, name in checks]


def _run_on_executor(
    todo: Sequence[tuple[StatementOutcome, Check]],
    executor: Any,
    ctx: CheckContext,
    finished: Callable[[int, CheckOutcome], None],
    costs: Mapping[tuple[str, str], float] | None = None,
    side_jobs: Sequence[tuple[float, Callable[[], Any]]] = (),
) -> None:
    """Submit every check of ``todo`` to ``executor`` (concurrent.futures API: a process pool,
    a dask Client's executor, verify.sweep.executors.RayExecutor) and call ``finished(i,
    outcome)`` as each returns, in completion order. The checks go longest first by their
    recorded ``costs`` (verify.report.schedule), those sharing an in-process result as one
    task; each of ``side_jobs`` (cost, submit) is called at its cost's place in that order (it
    submits its own work, e.g. the Derivation section). Interrupted, the checks not yet
    started are cancelled and those already returned are still passed on before re-raising."""
    from verify.plugins import requested_modules

    imports = requested_modules()
    keys = [(o.statement.id, c.name) for o, c in todo]
    tasks = plan_tasks(keys, [c.shares for _, c in todo], costs or {})
    side = sorted(side_jobs, key=lambda job: -job[0])
    futures: dict[cf.Future, list[int]] = {}
    for cost, task in tasks:
        while side and side[0][0] >= cost:
            side.pop(0)[1]()
        if len(task) == 1:
            (i,) = task
            fut = executor.submit(run_check_by_name, *keys[i], ctx.budget, ctx.seed, imports)
        else:
            names = [keys[i] for i in task]
            fut = executor.submit(run_checks_by_name, names, ctx.budget, ctx.seed, imports)
        futures[fut] = task
    for _, submit in side:
        submit()
    seen: set[int] = set()

    def take(fut: cf.Future) -> None:
        task = futures[fut]
        seen.update(task)
        try:
            result = fut.result()
            outcomes = [result] if len(task) == 1 else list(result)
        except Exception as exc:  # the worker failed outside the check: reported, not lost
            outcomes = [_lost_outcome(todo[i][0].statement, todo[i][1], exc) for i in task]
        for i, outcome in zip(task, outcomes, strict=True):
            finished(i, outcome)

    try:
        for fut in cf.as_completed(futures):
            take(fut)
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        for fut, task in futures.items():  # returned before the interrupt was noticed
            if not seen.intersection(task) and fut.done() and not fut.cancelled():
                take(fut)
        raise


def run_statements(
    statements: Sequence[Statement],
    *,
    budget: Budget = "quick",
    include_slow: bool = False,
    seed: int = 0,
    progress: bool = True,
    on_done: Callable[[int, int], None] | None = None,
    executor: Any = None,
    costs: Mapping[tuple[str, str], float] | None = None,
    side_jobs: Sequence[tuple[float, Callable[[], Any]]] = (),
    on_outcome: Callable[[CheckOutcome], None] | None = None,
) -> list[StatementOutcome]:
    """Run every (non-slow unless ``include_slow``) check of ``statements`` at ``budget`` with
    ``CheckContext(budget, seed)``, showing a tqdm progress bar over the checks. ``on_done(n,
    total)`` is called after each finished check (and once before the first). Interrupted
    (KeyboardInterrupt), the finished checks are kept and the rest listed as interrupted.

    ``executor`` (a concurrent.futures executor, see verify.sweep.executors.open_executor):
    the checks run there, several at once, each in a fresh context with the same seed, so the
    outcomes are those of a serial run; they are kept in the serial run's order. A worker that
    fails outside a check makes that check an ``error`` outcome. The caller owns (and, on an
    interrupt, stops) the executor. ``costs``/``side_jobs``: the order of submission (longest
    first, verify.report.schedule) and jobs submitted at their cost's place in it.
    ``on_outcome``: called with each check's outcome as it finishes (e.g. to draw its figures
    while the other checks run)."""
    budget = check_choice("budget", budget, ("quick", "default", "full"))  # type: ignore[assignment]
    seed = check_int("seed", seed, minimum=0)
    outcomes = [StatementOutcome(statement=s) for s in statements]
    todo: list[tuple[StatementOutcome, Check]] = []
    for o in outcomes:
        for c in o.statement.checks:
            if c.slow and not include_slow:
                o.not_run.append(c.name)
            elif c.missing:  # an optional extra is not installed: not run, and said so
                o.not_run.append(f"{c.name} (needs {', '.join(c.missing)})")
            else:
                todo.append((o, c))
    ctx = CheckContext(budget=budget, seed=seed, progress=False)
    bar = tqdm(
        total=len(todo), desc="checks", unit="check", disable=not progress, dynamic_ncols=True
    )
    results: dict[int, CheckOutcome] = {}
    if on_done:
        on_done(0, len(todo))

    def finished(i: int, outcome: CheckOutcome) -> None:
        if budget == "quick" and outcome.runtime_s > QUICK_CHECK_SECONDS:
            outcome.warnings.append(
                f"took {outcome.runtime_s:.0f} s at budget quick (> {QUICK_CHECK_SECONDS:.0f}"
                " s: `report --quick` should finish in 3 minutes on 2 cores)"
            )
        results[i] = outcome
        if on_outcome is not None:
            on_outcome(outcome)
        bar.update(1)
        if on_done:
            on_done(len(results), len(todo))

    try:
        if executor is None:
            for i, (o, c) in enumerate(todo):
                bar.set_postfix_str(f"{o.statement.id}: {c.name}"[:60])
                finished(i, run_check_outcome(o.statement, c, ctx))
        else:
            _run_on_executor(todo, executor, ctx, finished, costs, side_jobs)
    except KeyboardInterrupt:  # keep what finished; the rest is reported as interrupted
        pass
    finally:
        bar.close()
        for i, (o, c) in enumerate(todo):  # in the serial run's order, whatever finished first
            if i in results:
                o.checks.append(results[i])
            else:
                o.interrupted.append(c.name)
    return outcomes
