"""The first Borel-Cantelli step of Thm 4.5: the explicit bad-event series converges (sympy)."""

from __future__ import annotations

import sympy as sp

from verify.lemmas.eps_zero import bad_event_series_term


def test_borel_cantelli_check(run_statement_check) -> None:
    res = run_statement_check(
        "Thm 4.5", "Borel-Cantelli: explicit bad-event series converges (sympy)"
    )
    orders = [r for r in res.rows if "order p" in r.label]
    assert orders and all(r.extra["sympy_convergent"] for r in orders)


def test_series_diverges_when_exponent_too_large() -> None:
    """The same explicit term with e beyond e* = zeta (D-1)/2 - 2L - 2 must not be summable:
    the convergence verdict depends on the computed exponent, not on a constant."""
    d, layers = 16, 1
    zeta = sp.Rational(14, 15)
    e_star = zeta * (d - 1) / 2 - 2 * layers - 2
    term, n = bad_event_series_term(d, layers, e_star + 1, zeta, box=1.0)
    p = sp.limit(sp.log(term) / sp.log(n), n, sp.oo)
    assert p == 0  # N^0 (log N): the terms do not even go to zero
    assert sp.limit(term, n, sp.oo) == sp.oo
