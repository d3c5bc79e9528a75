"""verify.experiments.train and ``python -m verify train``: seeded, resumable, both the
exhaustive (certified) and the sampled evaluation, figures. Tiny models (seconds)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from verify.cli import main  # noqa: E402
from verify.experiments.train import (  # noqa: E402
    TrainSettings,
    evaluate,
    figures,
    run_experiment,
    train_model,
)

pytestmark = pytest.mark.torch

TINY = TrainSettings(
    d_model=8, n_layers=1, d_ff=16, steps=40, batch=32, max_len=8, sharpness_repeats=3,
    sharpness_strings=32, eval_samples=256,
)  # fmt: skip


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_training_is_seeded() -> None:
    a = train_model("majority", 4, TINY, seed=3)
    b = train_model("majority", 4, TINY, seed=3)
    c = train_model("majority", 4, TINY, seed=4)
    assert np.array_equal(a.params.flatten(), b.params.flatten())
    assert not np.array_equal(a.params.flatten(), c.params.flatten())
    assert a.final_loss == b.final_loss


def test_exhaustive_and_sampled_records() -> None:
    res = train_model("first", 5, TINY, seed=0)
    full = evaluate(res.params, "first", 5, TINY, seed=0)
    assert full["exhaustive"] and full["certified"]["uncertain"] == 0
    assert len(full["profile"]) == 6 and full["K0"] == full["profile"][0]
    assert full["as_target"] == 1.0
    assert (
        full["tradeoff"] is None or full["tradeoff"]["lhs"] <= 10 ** full["tradeoff"]["log10_bound"]
    )
    sampled = evaluate(
        res.params, "first", 5, TrainSettings(**{**TINY.__dict__, "exhaustive_max": 4})
    )
    assert not sampled["exhaustive"] and sampled["certified"] is None
    lo, hi = sampled["accuracy_ci"]
    assert lo <= sampled["accuracy"] <= hi
    # the certified accuracy and the sampled one measure the same model
    assert abs(sampled["accuracy"] - full["accuracy"]) <= max(0.1, hi - lo)
    for key in ("beta_mean", "beta_hr_mean", "param_norm_sq", "sharpness", "margin"):
        assert np.isfinite(full[key]) and np.isfinite(sampled[key]), key


def test_command_writes_and_resumes(tmp_path, capsys) -> None:
    out = tmp_path / "runs.jsonl"
    argv = ["train", "--functions", "parity", "first", "-N", "3", "-D", "8", "-L", "1",
            "--d-ff", "16", "--steps", "30", "--batch", "32", "--out", str(out),
            "--plot-dir", str(tmp_path / "figs")]  # fmt: skip
    assert main(argv) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    recs = [json.loads(x) for x in lines]
    assert {r["function"] for r in recs} == {"parity", "first"}
    assert "| parity | 3 |" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert main(argv) == 0  # resumes: nothing retrained, nothing appended
    assert out.read_text().splitlines() == lines


def test_figures_per_function() -> None:
    recs = run_experiment(["parity", "majority"], [3, 4], [0], TINY)
    figs = {f.name: f for f in figures(recs, min_accuracy=0.0)}
    fitted = {f.name for f in figures(recs, min_accuracy=1.01)}  # nothing fitted: no such panel
    assert "hr_training_sharpness" not in fitted and "hr_training_accuracy" in fitted
    sharp = figs["hr_training_sharpness"].data["series"]
    assert {s["label"] for s in sharp} == {"parity", "majority"}
    assert all(s["x"] == [3, 4] for s in sharp)


def test_figures_carry_the_spread_over_seeds() -> None:
    """Means over seeds come with a 95% bootstrap interval and the number of seeds; a value
    0 on a log axis stays 0 (drawn on the axis edge), not a stand-in 1e-12."""
    recs = run_experiment(["parity"], [3], [0, 1], TINY)
    figs = {f.name: f for f in figures(recs, min_accuracy=0.0)}
    for fig in figs.values():
        for s in fig.data["series"]:
            assert s["n"] == [2] and s["ylo"][0] <= s["y"][0] <= s["yhi"][0], fig.name
            assert min(s["y"]) != 1e-12


def _records(seeds_at: dict[int, int]) -> list[dict]:
    """Synthetic training records of parity: ``seeds_at[N]`` seeds at each N."""
    keys = ("beta_mean", "beta_hr_mean", "sharpness", "param_norm_sq", "accuracy", "as_model")
    return [
        {"function": "parity", "N": n, "seed": s, **{k: 1.0 + 0.1 * s for k in keys}}
        for n, count in seeds_at.items()
        for s in range(count)
    ]


def test_no_interval_is_claimed_at_one_seed() -> None:
    """Issue 43: the training figures' legend promised a 95% interval at n = 1 (one seed per
    point: no spread to show). One seed everywhere: no interval claimed, none drawn; mixed:
    the note says where there is none; two or more everywhere: the 95% t interval."""
    one = figures(_records({3: 1, 4: 1}))
    assert one and all(f.data["interval"] == "one seed per point: no interval" for f in one)
    assert all("ylo" not in s for f in one for s in f.data["series"])
    mixed = figures(_records({3: 1, 4: 3}))
    assert all(f.data["interval"].endswith("(none where n = 1)") for f in mixed)
    full = figures(_records({3: 2, 4: 3}))
    assert all(f.data["interval"] == "mean over seeds: 95% t interval" for f in full)
