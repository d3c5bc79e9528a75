"""Tests of resumable sweeps (verify.sweep, `python -m verify sweep`), with the local
ProcessPoolExecutor; the kill test really SIGKILLs a sweep subprocess and restarts it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from verify.errors import ValidationError
from verify.sweep import (
    ResultsFile,
    SweepGrid,
    cell_key,
    load_results,
    random_function_cell,
    run_sweep,
    summarize,
)

REPO = Path(__file__).resolve().parents[1]


def flaky_runner(cell: dict[str, Any]) -> dict[str, Any]:
    """Module-level (picklable) runner that fails on odd seeds."""
    if cell["seed"] % 2:
        raise RuntimeError(f"odd seed {cell['seed']}")
    return random_function_cell(cell)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_grid_cells_and_validation() -> None:
    g = SweepGrid(
        schemes=("uniform", "gaussian"),
        d_model=(8, 16),
        n_layers=(1, 2),
        ln_eps=(0.0, 1e-5),
        n_bits=(6,),
        seeds=(0, 1, 2),
    )
    cells = g.cells()
    assert len(cells) == 2 * 2 * 2 * 2 * 1 * 3
    assert len({cell_key(c) for c in cells}) == len(cells)
    assert cells[0] == {
        "kind": "transformer",
        "scheme": "uniform",
        "d_model": 8,
        "n_layers": 1,
        "ln_eps": 0.0,
        "n_bits": 6,
        "seed": 0,
        "n_heads": 2,
        "scale": 1.0,
    }
    rf = SweepGrid(kind="random_function", n_bits=(4, 5), seeds=(0, 1)).cells()
    assert rf == [
        {"kind": "random_function", "n_bits": n, "seed": s} for n in (4, 5) for s in (0, 1)
    ]
    with pytest.raises(ValidationError, match="schemes"):
        SweepGrid(schemes=("bogus",))
    with pytest.raises(ValidationError, match="d_model"):
        SweepGrid(d_model=(9,), n_heads=2)
    with pytest.raises(ValidationError, match="seeds"):
        SweepGrid(seeds=(-1,))
    with pytest.raises(ValidationError, match="n_bits"):
        SweepGrid(n_bits=())


def test_random_function_cell_profile() -> None:
    r = random_function_cell({"kind": "random_function", "n_bits": 6, "seed": 3})
    assert sum(r["profile"]) == 2**6 and r["K0"] == r["profile"][0]
    assert r["avg_sensitivity"] == pytest.approx(
        sum(k * c for k, c in enumerate(r["profile"])) / 2**6
    )
    assert r == random_function_cell({"kind": "random_function", "n_bits": 6, "seed": 3})


def test_resume_retry_torn_line_and_lock(tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    cells = SweepGrid(kind="random_function", n_bits=(5,), seeds=tuple(range(8))).cells()
    with ThreadPoolExecutor(2) as ex:  # processes: see the kill test
        s1 = run_sweep(cells, out, runner=flaky_runner, executor=ex, progress=False)
    assert (s1.n_run, s1.n_errors, s1.n_skipped) == (8, 4, 0)
    errs = [r for r in _lines(out) if r["status"] == "error"]
    assert len(errs) == 4 and "odd seed" in errs[0]["error"]["traceback"]
    # a torn last line (as a kill during a write leaves it) is dropped, and that cell reruns
    with open(out, "a") as fh:
        fh.write('{"key": "half a reco')
    with ThreadPoolExecutor(2) as ex:
        s2 = run_sweep(cells, out, executor=ex, progress=False)
    assert s2.torn_bytes > 0
    assert (s2.n_skipped, s2.n_run, s2.n_errors) == (4, 4, 0)  # only the failed cells reran
    latest = load_results(out)
    assert len(latest) == 8 and all(r["status"] == "ok" for r in latest)
    assert sum(1 for r in _lines(out) if r["status"] == "ok") == 8  # no ok cell twice
    s3 = run_sweep(cells, out, progress=False)  # nothing to do: no pool is started
    assert (s3.n_skipped, s3.n_run) == (8, 0)
    with ResultsFile(out), pytest.raises(ValidationError, match="no other running sweep"):
        ResultsFile(out)


def test_summarize() -> None:
    recs = [
        {
            "status": "ok",
            "cell": {"kind": "random_function", "n_bits": 4, "seed": s},
            "result": {"decided": True, "K0": k, "avg_sensitivity": a},
        }
        for s, (k, a) in enumerate([(0, 2.0), (1, 1.0), (16, 0.0), (0, 1.0)])
    ]
    recs.append({"status": "error", "cell": {**recs[0]["cell"], "seed": 9}, "result": None})
    (row,) = summarize(recs)
    assert row["n"] == 4 and row["mean_K0"] == 17 / 4 and row["p_K0_ge_1"] == 0.5
    assert row["frac_constant"] == 0.25 and row["mean_avg_sensitivity"] == 1.0
    lo, hi = row["p_K0_ge_1_ci"]
    assert lo < 0.5 < hi


def _cli_cmd(out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "verify",
        "sweep",
        "--out",
        str(out),
        "--kind",
        "random_function",
        "--n-bits",
        "6",
        "--seeds",
        "0:80",
        "--workers",
        "2",
        "--no-progress",
    ]


def _light_cmd(out: Path, n: int) -> list[str]:
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r});"
        "from _sweep_helpers import slow_square; from verify.sweep import run_sweep;"
        f"s = run_sweep([{{'seed': i, 'sleep': 0.02}} for i in range({n})], {str(out)!r},"
        " runner=slow_square, max_workers=2, progress=False);"
        "print(f'{s.n_skipped} already done', file=sys.stderr)"
    )
    return [sys.executable, "-c", script]


def _kill_and_resume(cmd: list[str], out: Path, n_cells: int, cwd: Path) -> str:
    """Start ``cmd``, SIGKILL its process group once >= 3 cells are in ``out``, restart it,
    and check that every cell is there exactly once and nothing finished was rewritten."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while True:  # no time limit: a busy machine only takes longer (the process is watched)
            if out.exists() and out.read_bytes().count(b"\n") >= 3:
                break
            if proc.poll() is not None:
                pytest.fail(f"sweep exited early: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    before = out.read_bytes()
    n_before = before.count(b"\n")
    assert 3 <= n_before < n_cells, "the kill must land mid-sweep"
    done_before = {json.loads(x)["key"] for x in before.splitlines()[:n_before]}

    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"{len(done_before)} already done" in res.stderr  # finished cells were skipped
    complete = before[: before.rfind(b"\n") + 1]
    assert out.read_bytes().startswith(complete)  # nothing finished before the kill rewritten
    keys = [r["key"] for r in _lines(out)]
    assert len(keys) == len(set(keys)) == n_cells  # every cell exactly once: none lost or redone
    return res.stdout


def test_killed_sweep_resumes_without_loss_or_redo(tmp_path: Path) -> None:
    out = tmp_path / "killed.jsonl"
    _kill_and_resume(_light_cmd(out, 60), out, 60, tmp_path)
    assert sorted(r["result"]["value"] for r in _lines(out)) == [i * i for i in range(60)]


@pytest.mark.slow
def test_killed_cli_sweep_resumes(tmp_path: Path) -> None:
    """The same through `python -m verify sweep` with real cells (slow: workers import Numba)."""
    out = tmp_path / "killed.jsonl"
    stdout = _kill_and_resume(_cli_cmd(out), out, 80, tmp_path)
    expected = {
        cell_key(c)
        for c in SweepGrid(kind="random_function", n_bits=(6,), seeds=tuple(range(80))).cells()
    }
    assert {r["key"] for r in _lines(out)} == expected
    assert "all cells | 80 | 80 |" in stdout


_cli = run_cli


def test_cli_sweep_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x.jsonl")
    for argv, needle in [
        (["--seeds", "a:b"], "--seeds"),
        (["--schemes", "nope"], "argument --scheme/--schemes: invalid choice"),
        (["-j", "0"], "argument -j/--jobs/--workers: expected an integer >= 1"),
        (["--config", "foo=1"], "--config foo: expected a ModelConfig field"),
        (["--config", "pos_encoding=bad"], "--config pos_encoding: expected one of"),
        (["-D", "15"], "-D/--d-model: expected multiples of -H/--n-heads=2"),
        (["--eps", "-1"], "argument --eps/--ln-eps: expected a real number >= 0"),
        (["--plot", str(tmp_path)], "--plot: expected a file path, not a directory"),
        (["--plot", str(tmp_path / "noext")], "--plot: expected a file name ending in .png"),
        (["--plot", "/proc/x/p.png"], "--plot: expected a file in a writable directory"),
        (["--csv", "/proc/x/c.csv"], "--csv: expected a file in a writable directory"),
        (["--executor", "nowhere"], "--executor: expected local, dask"),
        (["--executor", "dask://h:1", "-j", "2"], "-j/--jobs: expected no -j with a running"),
        (["--kind", "random_function", "-L", "2"], "-L/--n-layers: expected --kind transformer"),
    ]:
        code, err, _ = _cli(["sweep", "--out", out, *argv, "--no-progress"], capsys)
        assert code == 2, argv
        # one line (after the kernel step's lines, when the check needs the model)
        assert needle in err.splitlines()[-1] and "Traceback" not in err, (argv, err)
    assert not (tmp_path / "x.jsonl").exists()
    for bad_out, needle in [
        ("/proc/x/s.jsonl", "--out: expected a file in a writable directory"),
        (str(tmp_path), "--out: expected a file path, not a directory"),
    ]:
        code, err, _ = _cli(["sweep", "--out", bad_out], capsys)
        assert code == 2 and needle in err, err


def test_cli_sweep_plot_csv_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--plot writes exactly the file it names (plus its data as CSV beside it), --csv the
    cells, --json the summary on stdout."""
    import csv
    import json

    out, png, table = tmp_path / "r.jsonl", tmp_path / "plots" / "p.png", tmp_path / "c.csv"
    argv = ["sweep", "--out", str(out), "--kind", "random_function", "-N", "4", "5"]
    argv += ["--seeds", "0:6", "-j", "1", "--plot", str(png), "--csv", str(table), "--json"]
    code, err, stdout = _cli([*argv, "--no-progress"], capsys)
    assert code == 0, err
    assert f"wrote {png}" in err and f"wrote {png.with_name('p.data.csv')}" in err
    assert sorted(p.name for p in png.parent.iterdir()) == ["p.data.csv", "p.png"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 12 and {r["n_bits"] for r in rows} == {"4", "5"}
    assert all(r["status"] == "ok" and r["profile"] for r in rows)
    summary = json.loads(stdout)
    assert summary["cells"] == 12 and summary["varying"] == ["n_bits"]
    assert [r["n"] for r in summary["rows"]] == [6, 6]


def test_transformer_cell_matches_an_independent_count() -> None:
    """The cell's profile equals a brute-force count over the float64 forward pass's labels
    (every string here is far from the decision boundary, so float64 settles each label)."""
    import numpy as np

    from verify.model import ModelConfig, forward, init_params
    from verify.sweep import transformer_cell

    cell = SweepGrid(d_model=(8,), n_layers=(1,), ln_eps=(0.0,), n_bits=(5,), seeds=(4,)).cells()[0]
    res = transformer_cell(cell)
    assert res["decided"] and res["n_float64"] + res["n_high_precision"] == 2**5
    params = init_params(ModelConfig(d_model=8, n_layers=1, n_heads=2, ln_eps=0.0), "uniform", 4)
    bits = np.array([[(i >> j) & 1 for j in range(5)] for i in range(32)], dtype=np.uint8)
    t = forward(params, bits).T
    assert np.min(np.abs(t)) > 1e-6
    f = (t > 0).astype(int)
    sens = [sum(f[i] != f[i ^ (1 << j)] for j in range(5)) for i in range(32)]
    assert res["profile"] == [sens.count(k) for k in range(6)]
    assert res["K0"] == sens.count(0) and res["ones"] == int(f.sum())


def test_grid_model_extras_and_parse_config() -> None:
    from verify.commands.sweep import parse_config, parse_seeds

    assert parse_config(["norm_first=true", "max_len=32", "pos_encoding=learned"]) == {
        "norm_first": True,
        "max_len": 32,
        "pos_encoding": "learned",
    }
    assert list(parse_seeds("3:6")) == [3, 4, 5] and list(parse_seeds("0,7")) == [0, 7]
    assert list(parse_seeds(["0", "1:3", "9"])) == [0, 1, 2, 9]
    assert list(parse_seeds(["0:3", "2:5", "1"])) == [0, 1, 2, 3, 4]  # each seed once
    with pytest.raises(ValidationError, match="--seeds"):
        parse_seeds(["3:3"])
    (cell,) = SweepGrid(model={"norm_first": True}).cells()
    assert cell["model"] == {"norm_first": True}
    with pytest.raises(ValidationError, match="model"):
        SweepGrid(model={"d_model": 8})
    with pytest.raises(ValidationError, match="--config"):
        parse_config(["norm_first"])


class _FakeDaskClient:
    """Stands in for dask.distributed.Client: its own submit is not concurrent.futures'."""

    def __init__(self, ex: ThreadPoolExecutor) -> None:
        self.ex = ex

    def submit(self, *a: Any, **k: Any) -> None:
        raise AssertionError("run_sweep must use get_executor(), not Client.submit")

    def get_executor(self) -> ThreadPoolExecutor:
        return self.ex


def test_client_with_get_executor(tmp_path: Path) -> None:
    cells = SweepGrid(kind="random_function", n_bits=(3,), seeds=(0, 1, 2)).cells()
    with ThreadPoolExecutor(2) as ex:
        s = run_sweep(cells, tmp_path / "d.jsonl", executor=_FakeDaskClient(ex), progress=False)
    assert s.n_run == 3 and s.n_errors == 0


def test_p_k0_figure(tmp_path: Path) -> None:
    import math

    from verify.commands.sweep import p_k0_figure
    from verify.report.figures import draw_figure

    recs = [
        {
            "status": "ok",
            "cell": {"kind": "random_function", "n_bits": n, "seed": s},
            "result": {"decided": True, "K0": s % 2, "avg_sensitivity": 1.0},
        }
        for n in (4, 5)
        for s in range(4)
    ]
    fig = p_k0_figure(summarize(recs), ["n_bits"])
    cells, limit = fig.data["series"]
    assert cells["x"] == ["N=4\n4 of 4", "N=5\n4 of 4"] and cells["y"] == [0.5, 0.5]
    assert all(lo >= 0 and hi >= 0 for lo, hi in cells["yerr"])
    assert limit["y"] == [1 - math.exp(-1)] * 2
    png = draw_figure(fig, tmp_path / "p.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_results_rows_csv_and_frame(tmp_path: Path) -> None:
    """The cells of a results file as flat rows, CSV and (pandas optional) a DataFrame."""
    import csv

    from verify.sweep import results_frame, results_rows, summary_rows, write_csv

    out = tmp_path / "r.jsonl"
    cells = SweepGrid(kind="random_function", n_bits=(3, 4), seeds=(0, 1)).cells()
    run_sweep(cells, out, max_workers=1, progress=False)
    rows = results_rows(load_results(out))
    assert len(rows) == 4 and {r["n_bits"] for r in rows} == {3, 4}
    assert all(r["status"] == "ok" and len(r["profile"].split()) == r["n_bits"] + 1 for r in rows)
    back = list(csv.DictReader(write_csv(rows, tmp_path / "r.csv").open()))
    assert [int(r["K0"]) for r in back] == [r["K0"] for r in rows]
    flat = summary_rows(summarize(load_results(out)))
    assert {r["n_bits"] for r in flat} == {3, 4} and "p_K0_ge_1_ci_low" in flat[0]
    pd = pytest.importorskip("pandas")
    frame = results_frame(out)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4
    assert frame["K0"].tolist() == [r["K0"] for r in rows]


def _k0_records(settings: dict[str, list], k0s: list[int]) -> list[dict]:
    """Transformer-cell records of every combination of ``settings`` with these K_0 values."""
    import itertools

    keys = list(settings)
    out = []
    for values in itertools.product(*settings.values()):
        cell = {"kind": "transformer", **dict(zip(keys, values, strict=True))}
        for seed, k0 in enumerate(k0s):
            result = {"decided": True, "K0": k0, "avg_sensitivity": 0.5}
            out.append({"status": "ok", "cell": {**cell, "seed": seed}, "result": result})
    return out


def test_the_sweep_figure_conditions_on_non_constant_models() -> None:
    """Issue 43: 78-92% of the README sweep's models are constant (K_0 = 2^N trivially), so
    every unconditional bar sat at 1.0. The bars are P[K_0 >= 1] among the non-constant
    models, each label saying how many of the decided models that is; a setting whose models
    are all constant has no bar."""
    from verify.commands.sweep import p_k0_figure

    n = 6
    # setting N=6: 6 constant models, 4 non-constant of which 1 has K_0 >= 1
    recs = _k0_records({"n_bits": [n]}, [2**n] * 6 + [0, 0, 0, 3])
    recs += _k0_records({"n_bits": [7]}, [2**7] * 3)  # all constant: no bar
    rows = summarize(recs)
    by_n = {r["setting"]["n_bits"]: r for r in rows}
    assert by_n[6]["p_K0_ge_1"] == 0.7  # the unconditional number the old figure drew
    assert (by_n[6]["n_nonconstant"], by_n[6]["p_K0_ge_1_nonconstant"]) == (4, 0.25)
    fig = p_k0_figure(rows, ["n_bits"])
    bars, limit = fig.data["series"]
    assert bars["x"] == ["N=6\n4 of 10"] and bars["y"] == [0.25] and bars["n"] == [4]
    lo, hi = by_n[6]["p_K0_ge_1_nonconstant_ci"]
    assert bars["yerr"] == [[0.25 - lo, hi - 0.25]] and lo < 0.25 < hi


def test_the_readme_sweep_figure_has_labels_that_do_not_overlap() -> None:
    """The README's grid (scheme x L x N: 8 settings) drew overlapping tick labels."""
    from verify.commands.sweep import p_k0_figure
    from verify.report.figures import render

    grid = {"scheme": ["uniform", "xavier_normal"], "n_layers": [1, 2], "n_bits": [8, 10]}
    rows = summarize(_k0_records(grid, [256, 0, 5, 1024, 0, 7, 1]))
    mfig = render(p_k0_figure(rows, list(grid)), dpi=100)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(mfig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = mfig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    assert len(boxes) == 8
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a.x1 < b.x0, "tick labels overlap"
