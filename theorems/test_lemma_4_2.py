"""Lemma 4.2 (reconstruction): local high-probability blowup bound at eps = 0."""

from __future__ import annotations

from verify.lemmas import Status


def test_ln_coefficient_tail_exponent(run_statement_check) -> None:
    # The fitted exponent of a finite tail may miss the limit D - 1 (undecided, with a note);
    # the proven small-ball bound rows must hold.
    res = run_statement_check(
        "Lemma 4.2",
        "layer-norm coefficient tail exponent vs D - 1",
        allow=(Status.HOLDS, Status.UNDECIDED),
    )
    tail_rows = [r for r in res.rows if "P[z >" in r.label]
    assert tail_rows and all(r.ok for r in tail_rows)
    assert res.figures and res.figures[0].data["series"]


def test_monte_carlo_vs_explicit_bound(run_statement_check) -> None:
    res = run_statement_check("Lemma 4.2", "Monte Carlo bad-event probability vs explicit bound")
    assert any(r.bound < 1 for r in res.rows)


def test_deep_tail_by_conditional_redraws(run_statement_check) -> None:
    res = run_statement_check(
        "Lemma 4.2",
        "deep tail by redrawing each norm's bias block",
        allow=(Status.HOLDS, Status.UNDECIDED),
    )
    d_vals = {int(r.label.split("D=")[1].split()[0]) for r in res.rows}
    for r in res.rows:  # rows compare the fitted CI ends with the computed D - 1
        assert r.bound == int(r.label.split("D=")[1].split()[0]) - 1
    assert d_vals
