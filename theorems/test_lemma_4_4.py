"""Lemma 4.4 (reconstruction): cube covering; certified bad-set measure on parameter slices."""

from __future__ import annotations


def test_cube_covering_slices(run_statement_check) -> None:
    res = run_statement_check(
        "Lemma 4.4", "cube covering of parameter slices: certified and Monte Carlo"
    )
    # the certified bounds must tighten as cubes shrink (monotone in the cube side)
    tightening = [n for n in res.notes if "certified upper bound by cube side" in n]
    assert tightening
    for series in res.figures[0].data["series"]:
        if series["label"].endswith("certified upper"):
            ys = series["y"]
            assert all(a >= b for a, b in zip(ys, ys[1:], strict=False))
            assert ys[-1] < ys[0]
