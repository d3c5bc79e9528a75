"""`report` with parallel checks (-j), on a dask LocalCluster (--executor dask), PNG by default
and PDF with --pdf: the statuses and numbers of a serial run for the same seed, row by row; a
check that raises on a worker is reported as an error, not lost."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from verify.json_values import jsonable
from verify.proofs.blueprint import NO_OBLIGATIONS, report_derivations
from verify.report.runner import StatementOutcome, run_statements, select_statements
from verify.report.writer import RunState, _derivations, _tasks, generate_report, start_derivations
from verify.sweep.executors import local_executor

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# cheap registered statements (well under a second each at budget quick)
CHEAP = ["Prop 3.5", "Cor 4.6", "Cor 5.1", "Sec 5 declared families"]


def _rows(outcomes: list[StatementOutcome]) -> list[tuple[Any, ...]]:
    """Every check of every statement: its status, error type, and its result's fields
    (rows, notes, parameters, figures' data, ...) without anything timed."""
    out = []
    for o in outcomes:
        out.append((o.statement.id, o.status, tuple(o.not_run), tuple(o.interrupted)))
        for c in o.checks:
            result = jsonable(dataclasses.asdict(c.result)) if c.result is not None else None
            if result is not None:
                assert result.pop("runtime_s") >= 0  # the one field that is timed
            err = c.error.type if c.error is not None else None
            out.append((o.statement.id, c.check_name, c.status, err, tuple(c.warnings), result))
    return out


def test_parallel_checks_give_the_serial_rows() -> None:
    statements = select_statements(CHEAP)
    serial = run_statements(statements, budget="quick", seed=3, progress=False)
    ex = local_executor(2)
    try:
        parallel = run_statements(statements, budget="quick", seed=3, progress=False, executor=ex)
    finally:
        ex.shutdown(wait=True)
    a, b = _rows(serial), _rows(parallel)
    assert len(a) == len(b) > len(CHEAP)
    for row_serial, row_parallel in zip(a, b, strict=True):
        assert row_parallel == row_serial
    assert all(c.status != "error" for o in parallel for c in o.checks)


def test_a_lost_worker_result_is_an_error_outcome() -> None:
    """A worker that fails outside the check (here: an executor whose futures raise) makes
    that check an error with the worker's traceback; the others are kept."""
    from concurrent.futures import Future, ThreadPoolExecutor

    class Flaky(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
            if args[1] == CHECK:
                fut: Future = Future()
                fut.set_exception(ConnectionError("worker lost"))
                return fut
            return super().submit(fn, *args, **kwargs)

    statements = select_statements(["Prop 3.5"])
    CHECK = statements[0].checks[0].name
    with Flaky(1) as ex:
        (o,) = run_statements(statements, budget="quick", seed=0, progress=False, executor=ex)
    assert [c.check_name for c in o.checks] == [c.name for c in statements[0].checks]
    lost = o.checks[0]
    assert lost.status == "error" and lost.error is not None
    assert lost.error.type == "ConnectionError" and "worker lost" in lost.error.traceback
    assert o.status == "error"
    assert all(c.status != "error" for c in o.checks[1:])


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The serial run (-j 1) both comparisons start from."""
    return _report(tmp_path_factory.mktemp("serial"), "serial", "-j", "1")


def _report(tmp_path: Path, name: str, *extra: str) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), env.get("PYTHONPATH", "")])
    out = tmp_path / name
    proc = subprocess.run(
        [sys.executable, "-m", "verify", "report", "--import", "_parallel_statements"]
        + ["--only", "Parallel 1", "--seed", "5", "--out", str(out), "--no-progress", *extra],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr  # the check that raises is a failure
    doc = json.loads((out / "report.json").read_text())
    doc["_out"] = out
    return doc


def _checks(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    (st,) = doc["statements"]
    return [
        (
            c["name"],
            c["status"],
            json.dumps(c["rows"], sort_keys=True),
            (c.get("error") or {}).get("type"),
            [f["data"] for f in c["figures"]],
        )
        for c in st["checks"]
    ]


def _assert_raised_check_reported(doc: dict[str, Any]) -> None:
    (st,) = doc["statements"]
    assert st["status"] == "error"
    (raised,) = [c for c in st["checks"] if c["name"] == "raises"]
    assert raised["status"] == "error"
    assert "deliberate failure of a check (seed 5)" in json.dumps(raised["error"])


def test_report_parallel_and_pdf_flag(tmp_path: Path, serial: dict[str, Any]) -> None:
    parallel = _report(tmp_path, "parallel", "-j", "2", "--pdf")
    assert _checks(parallel) == _checks(serial)
    _assert_raised_check_reported(parallel)
    figs = {c["name"]: c["figures"] for c in serial["statements"][0]["checks"]}
    assert figs["draws"][0]["files"] == [
        "figures/parallel_square.png",
        "figures/parallel_square.data.csv",
    ]
    assert not (serial["_out"] / "figures" / "parallel_square.pdf").exists()
    figs = {c["name"]: c["figures"] for c in parallel["statements"][0]["checks"]}
    assert figs["draws"][0]["files"] == [
        "figures/parallel_square.png",
        "figures/parallel_square.pdf",
        "figures/parallel_square.data.csv",
    ]
    for f in figs["draws"][0]["files"]:  # every file the report lists is there
        assert (parallel["_out"] / f).is_file(), f
    for doc in (serial, parallel):  # a plug-in statement has no derivation obligations
        assert doc["derivations"]["n_obligations"] == 0
        assert doc["derivations"]["figure"]["error"] == NO_OBLIGATIONS
        assert not (doc["_out"] / "figures" / "blueprint.png").exists()
    assert (parallel["_out"] / "figures" / "parallel_square.pdf").read_bytes()[:5] == b"%PDF-"
    # drawn while the checks ran (verify.report.drawing.EarlyFigures) and moved into place: the
    # serial run's names (in the report's order) and bytes; the failed drawing is recorded
    for doc in (serial, parallel):
        again = {c["name"]: c["figures"] for c in doc["statements"][0]["checks"]}[
            "draws again, and a figure that cannot be drawn"
        ]
        assert again[0]["file"] == "figures/parallel_square_2.png"
        assert again[1]["file"] is None and "nonsense" in again[1]["error"]
    for name in ("parallel_square", "parallel_square_2"):
        for suffix in (".png", ".data.csv"):
            a = (serial["_out"] / "figures" / (name + suffix)).read_bytes()
            assert (parallel["_out"] / "figures" / (name + suffix)).read_bytes() == a, name
    serial_files = {p.name for p in (serial["_out"] / "figures").iterdir()}
    pdfs = {n.removesuffix(".png") + ".pdf" for n in serial_files if n.endswith(".png")}
    assert {p.name for p in (parallel["_out"] / "figures").iterdir()} == serial_files | pdfs
    assert "parallel_square_2.png" in serial_files  # (no stray provisional names)


@pytest.mark.cluster
def test_report_on_a_dask_local_cluster(tmp_path: Path, serial: dict[str, Any]) -> None:
    pytest.importorskip("dask.distributed")
    dask = _report(tmp_path, "dask", "--executor", "dask", "-j", "2")
    assert _checks(dask) == _checks(serial)
    _assert_raised_check_reported(dask)


def test_derivations_on_a_worker_are_the_ones_computed_here(tmp_path: Path) -> None:
    """The Derivation section submitted to the report's pool (as ``report`` does with -j >= 2)
    equals a direct call's, and its blueprint figure is moved into the report's figures
    folder. (The direct call runs in a fresh process too: z3's refuting points depend on what
    the process asked z3 before, so only the same history gives the same twin points.)"""
    pool = local_executor(1)
    try:
        pending = start_derivations(pool, ["Lemma 4.2"])
        state = RunState(out_dir=tmp_path)
        got = _derivations([], tmp_path / "figures", state, pending)
    finally:
        pool.shutdown()
    assert got["figure"] == {
        "name": "blueprint",
        "file": "figures/blueprint.png",
        "files": ["figures/blueprint.png"],  # no PDF without --pdf
        "error": None,
    }
    assert (tmp_path / "figures" / "blueprint.png").is_file()
    pool = local_executor(1)
    try:
        here = pool.submit(report_derivations, tmp_path / "here" / "figures", ["Lemma 4.2"])
        here = here.result()
    finally:
        pool.shutdown()
    assert list(got["statements"]) == ["Trivial bounds", "Small-ball bound", "Lemma 4.2"]
    for d in (got, here):
        d.pop("seconds"), d.pop("task_s")
        for entry in d["statements"].values():
            for step in entry["steps"]:
                for ob in step["obligations"]:
                    ob.pop("seconds", None)
    assert got == here


def test_a_run_of_one_task_starts_no_worker(tmp_path: Path) -> None:
    """One check and no derivation obligations: the run stays in this process (a worker would
    add only its start-up); a statement with obligations adds the Derivation task."""
    assert _tasks(select_statements(["Sec 5 declared families"]), include_slow=False) == 1
    cor = select_statements(["Cor 4.6"])
    assert _tasks(cor, include_slow=False) == len(cor[0].checks) + 1
    lines: list[str] = []
    report = generate_report(
        tmp_path / "r",
        only=["Sec 5 declared families"],
        progress=False,
        log=lines.append,
        jobs=None,
    )
    assert report.exit_code == 0
    assert not any(line.startswith("checks on") for line in lines), lines
