"""A parallel report's schedule (verify.report.schedule): checks submitted longest first by
their recorded run times, checks sharing an in-process result (Check.shares) as one task in one
worker, the Derivation section at its cost's place; the outcomes stay in the serial order and
equal a serial run's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verify.registry import CheckContext, Outcome, Row, Statement, core, define_statement
from verify.report.runner import run_statements
from verify.report.schedule import DERIVATIONS, plan_tasks, recorded_costs


def _report(path: Path, budget: str, runtimes: dict[tuple[str, str], float], derive: float) -> Path:
    by_id: dict[str, list[dict[str, Any]]] = {}
    for (sid, name), t in runtimes.items():
        by_id.setdefault(sid, []).append({"name": name, "runtime_s": t})
    doc = {
        "run": {"budget": budget},
        "statements": [{"id": sid, "checks": checks} for sid, checks in by_id.items()],
        "derivations": {"seconds": derive},
    }
    path.write_text(json.dumps(doc))
    return path


def test_recorded_costs_of_the_budget_earlier_file_first(tmp_path: Path) -> None:
    a = _report(tmp_path / "a.json", "quick", {("S", "x"): 2.0}, 5.0)
    b = _report(tmp_path / "b.json", "quick", {("S", "x"): 9.0, ("S", "y"): 1.5}, 7.0)
    other = _report(tmp_path / "c.json", "full", {("S", "z"): 99.0}, 1.0)
    (tmp_path / "bad.json").write_text("{not json")
    costs = recorded_costs([tmp_path / "missing.json", tmp_path / "bad.json", a, b, other], "quick")
    assert costs == {("S", "x"): 2.0, DERIVATIONS: 5.0, ("S", "y"): 1.5}
    assert recorded_costs([a], "default") == {}


def test_the_derivation_task_costs_its_whole_time_when_recorded(tmp_path: Path) -> None:
    """derivations.task_s (loading, obligations and the figure) over .seconds (the obligations
    alone), which older reports hold only."""
    doc = tmp_path / "a.json"
    _report(doc, "quick", {("S", "x"): 2.0}, 5.0)
    data = json.loads(doc.read_text())
    data["derivations"]["task_s"] = 8.5
    doc.write_text(json.dumps(data))
    assert recorded_costs([doc], "quick")[DERIVATIONS] == 8.5


def test_plan_longest_first_shared_checks_one_task() -> None:
    keys = [("A", "a"), ("A", "b"), ("B", "c"), ("B", "d"), ("C", "e")]
    shares = ["", "t", "", "t", ""]
    costs = {("A", "a"): 1.0, ("A", "b"): 2.0, ("B", "c"): 5.0, ("B", "d"): 0.5}
    tasks = plan_tasks(keys, shares, costs)
    # ("C", "e") has no record: it costs the mean of the recorded ones, 2.125
    assert tasks == [(5.0, [2]), (2.5, [1, 3]), (2.125, [4]), (1.0, [0])]
    # no costs at all: each check costs 1, the two tagged ones together 2, then serial order
    assert [t for _, t in plan_tasks(keys, shares, {})] == [[1, 3], [0], [2], [4]]


class Recording(ThreadPoolExecutor):
    """A one-thread executor that records what is submitted, in order."""

    def __init__(self) -> None:
        super().__init__(1)
        self.submitted: list[Any] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        names = args[0] if fn.__name__ == "run_checks_by_name" else [args[:2]]
        self.submitted.append([tuple(n) for n in names])
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Statement]]:
    """A registry of two statements, five checks, two of which share a result (restored
    afterwards)."""
    saved = dict(core._STATEMENTS)
    core._STATEMENTS.clear()
    monkeypatch.setattr(core, "STATEMENT_PACKAGES", [])
    shared: dict[int, float] = {}

    def draw(ctx: CheckContext) -> Outcome:
        fresh = ctx.seed not in shared
        shared.setdefault(ctx.seed, float(np.random.default_rng(ctx.seed).random()))
        return Outcome([Row("drew it here", float(fresh), 1.0), Row("u", shared[ctx.seed], 1.0)])

    def plain(ctx: CheckContext) -> Outcome:
        return Outcome([Row("seed", float(ctx.seed), 1e9)])

    first = define_statement(id="Lemma 1.1", title="one", statement="one")
    second = define_statement(id="Lemma 1.2", title="two", statement="two")
    first.check("a")(plain)
    first.check("b", shares="u")(draw)
    second.check("c")(plain)
    second.check("d", shares="u")(draw)
    second.check("e")(plain)
    try:
        yield [first, second]
    finally:
        core._STATEMENTS.clear()
        core._STATEMENTS.update(saved)


def test_submission_order_and_groups(statements: list[Statement]) -> None:
    keys = [(s.id, c.name) for s in statements for c in s.checks]
    costs = dict(zip(keys, [1.0, 2.0, 5.0, 0.5, 3.0], strict=True))
    side: list[int] = []
    with Recording() as ex:
        derive = (4.0, lambda: side.append(len(ex.submitted)))
        outcomes = run_statements(
            statements, seed=2, progress=False, executor=ex, costs=costs, side_jobs=[derive]
        )
    c, b, d, e, a = ("Lemma 1.2", "c"), ("Lemma 1.1", "b"), ("Lemma 1.2", "d"), keys[4], keys[0]
    assert ex.submitted == [[c], [e], [b, d], [a]]  # 5, 3, 2.5 (b and d together), 1
    assert side == [1]  # the side job (cost 4) after c (5), before e (3)
    # the outcomes in the serial order, each check once, the shared result computed once
    assert [(o.statement.id, x.check_name) for o in outcomes for x in o.checks] == keys
    rows = {x.check_name: x.result.rows for o in outcomes for x in o.checks if x.result}
    assert [rows["b"][0].measured, rows["d"][0].measured] == [1.0, 0.0]
    assert rows["b"][1] == rows["d"][1]


def test_lost_group_is_an_error_for_each_of_its_checks(statements: list[Statement]) -> None:
    class Flaky(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
            if fn.__name__ == "run_checks_by_name":
                fut: Future = Future()
                fut.set_exception(ConnectionError("worker lost"))
                return fut
            return super().submit(fn, *args, **kwargs)

    with Flaky(1) as ex:
        outcomes = run_statements(statements, seed=0, progress=False, executor=ex)
    status = {x.check_name: x.status for o in outcomes for x in o.checks}
    assert status == {"a": "holds", "b": "error", "c": "holds", "d": "error", "e": "holds"}
