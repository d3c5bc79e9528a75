"""Sweeps on a cluster: a dask LocalCluster (``--executor dask``) and ray (``--executor ray``,
through verify.sweep.RayExecutor). Each runs a small grid and must give the records a local
run gives, with one Numba thread per cell. Skipped when the optional extra is not installed."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from verify.sweep import SweepGrid, execute_cell, executor_slots, load_results, run_sweep

pytestmark = pytest.mark.cluster


def _grid_cells() -> list[dict[str, Any]]:
    model = SweepGrid(d_model=(8,), n_layers=(1,), n_bits=(5,), seeds=(0, 1, 2)).cells()
    baseline = SweepGrid(kind="random_function", n_bits=(6,), seeds=(0, 1, 2)).cells()
    return model + baseline


def _local_results(cells: list[dict[str, Any]]) -> dict[str, Any]:
    from verify.sweep import RUNNERS

    return {
        json.dumps(c, sort_keys=True): execute_cell(RUNNERS[c["kind"]], c)["result"] for c in cells
    }


def _check(path: Path, cells: list[dict[str, Any]]) -> None:
    records = load_results(path)
    assert len(records) == len(cells)
    assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
    assert {r["numba_threads"] for r in records} == {1}  # one Numba thread per cell
    expected = _local_results(cells)
    for r in records:
        assert r["result"] == expected[json.dumps(r["cell"], sort_keys=True)]


def test_executor_slots() -> None:
    class FakeClient:
        def nthreads(self) -> dict[str, int]:
            return {"tcp://a:1": 4, "tcp://b:1": 2}

        def get_executor(self) -> None:
            return None

    class FakeClientExecutor:
        _client = FakeClient()

    assert executor_slots(FakeClient()) == 6
    assert executor_slots(FakeClientExecutor()) == 6
    with ThreadPoolExecutor(3) as ex:
        assert executor_slots(ex) == 3


def test_sweep_on_a_dask_local_cluster(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("dask.distributed")
    from verify.cli import main

    out = tmp_path / "dask.jsonl"
    argv = ["sweep", "--out", str(out), "--executor", "dask", "-j", "2", "--no-progress"]
    argv += ["-D", "8", "-L", "1", "-N", "5", "--seeds", "0:3"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "on dask LocalCluster, 2 worker(s), 2 slot(s)" in err
    assert (
        main(
            [
                "sweep",
                "--out",
                str(out),
                "--executor",
                "dask",
                "-j",
                "1",
                "--no-progress",
                "--kind",
                "random_function",
                "-N",
                "6",
                "--seeds",
                "0:3",
            ]
        )
        == 0
    )
    _check(out, _grid_cells())


def test_sweep_through_the_ray_adapter(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from verify.sweep import open_executor

    cells = _grid_cells()
    out = tmp_path / "ray.jsonl"
    with open_executor("ray", jobs=2) as handle:
        assert handle.slots == 2 and handle.description == "ray, 2 CPU(s)"
        s = run_sweep(cells, out, executor=handle, progress=False)
    assert s.n_run == len(cells) and s.n_errors == 0
    _check(out, cells)
