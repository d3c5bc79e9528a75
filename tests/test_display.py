"""What a notebook or terminal user sees: results_frame in grid order with the profile as a
list or as columns, and print() of a check result, a certified truth table and a sampled
profile."""

from __future__ import annotations

import pytest

from verify.boolean import estimate_profile, make_family
from verify.registry import CheckResult, Row, Status
from verify.sweep import SweepGrid
from verify.sweep.tables import grid_order, results_rows

RECORDS = [  # completion order, not grid order
    {"cell": {"kind": "random_function", "n_bits": 4, "seed": 1}, "status": "ok",
     "result": {"profile": [1, 2, 3, 4, 6], "K0": 1}},
    {"cell": {"kind": "random_function", "n_bits": 3, "seed": 0}, "status": "ok",
     "result": {"profile": [1, 2, 3, 2], "K0": 1}},
    {"cell": {"kind": "random_function", "n_bits": 4, "seed": 0}, "status": "ok",
     "result": {"profile": [0, 2, 3, 4, 7], "K0": 0}},
]  # fmt: skip


def test_rows_follow_the_grid_order():
    want = [(3, 0), (4, 0), (4, 1)]
    assert [(r["n_bits"], r["seed"]) for r in results_rows(RECORDS)] == want
    grid = SweepGrid(kind="random_function", n_bits=(4, 3), seeds=(1, 0))  # another order
    got = [(r["cell"]["n_bits"], r["cell"]["seed"]) for r in grid_order(RECORDS, grid)]
    assert got == [(4, 1), (4, 0), (3, 0)]
    schemes = [{"cell": {"kind": "transformer", "scheme": s, "d_model": 8, "n_bits": 4,
                         "seed": 0}} for s in ("xavier_normal", "uniform", "gaussian")]  # fmt: skip
    assert [r["cell"]["scheme"] for r in grid_order(schemes)] == [
        "uniform",
        "gaussian",
        "xavier_normal",
    ]


def test_results_frame_profile_as_list_or_wide_columns():
    pytest.importorskip("pandas")
    from verify.sweep import results_frame

    frame = results_frame(RECORDS)
    assert frame["n_bits"].tolist() == [3, 4, 4] and frame["seed"].tolist() == [0, 0, 1]
    assert frame["profile"].tolist() == [[1, 2, 3, 2], [0, 2, 3, 4, 7], [1, 2, 3, 4, 6]]
    wide = results_frame(RECORDS, profile="wide")
    assert "profile" not in wide and [c for c in wide if c.startswith("K_")] == [
        f"K_{k}" for k in range(5)
    ]
    assert wide["K_4"].isna().tolist() == [True, False, False]
    assert wide["K_4"].tolist()[1:] == [7, 6] and str(wide["K_0"].dtype) == "Int64"


def test_check_result_prints_a_table():
    res = CheckResult(
        "Lemma 9.9",
        "grid",
        Status.HOLDS,
        rows=[Row("N=8: a long label " + "x" * 80, 0.5, 1.0, "<=", ci=(0.4, 0.6)),
              Row("N=16", 0.5, 1.0, ">=")],
        notes=["a note"],
        seed=3,
    )  # fmt: skip
    text = str(res)
    lines = text.splitlines()
    assert lines[0].startswith("Lemma 9.9 [grid]: holds") and "seed 3" in lines[0]
    assert lines[1].split() == ["row", "measured", "rel", "bound", "ratio", "CI", "verdict"]
    assert set(lines[2]) <= {"-", " "}
    assert "…" in lines[3] and "[0.4, 0.6]" in lines[3] and lines[3].rstrip().endswith("holds")
    assert lines[4].split()[:3] == ["N=16", "0.5", "<"]  # a failing row shows the true relation
    assert lines[4].rstrip().endswith("fails")
    assert lines[-1] == "note: a note"
    assert "CheckResult(" not in text


def test_sampled_profile_prints_counts_and_intervals():
    est = estimate_profile(make_family("majority", 5), samples=200, seed=1)
    lines = str(est).splitlines()
    assert lines[0].startswith("sampled profile, N = 5, 200 strings (seed 1)")
    assert lines[1].split() == ["k", "count", "fraction", "99%", "CI", "low", "99%", "CI", "high"]
    assert len(lines) == 3 + 6
    k, count, frac, lo, hi = lines[3].split()
    assert int(k) == 0 and int(count) == est.counts[0]
    assert float(lo) <= float(frac) <= float(hi)


def test_truth_table_prints_how_bits_were_certified_and_the_profile():
    from verify.model import ModelConfig, init_params, truth_table

    params = init_params(ModelConfig(d_model=8, n_layers=1, ln_eps=0.0), "uniform", seed=0)
    text = str(truth_table(params, 4))
    assert text.startswith("certified truth table, N = 4 (16 strings), margin 0:")
    assert "float64" in text and "sensitivity profile:" in text
    assert "CertifiedTruthTable(" not in text
