"""Conj 5.5 (reconstruction) and Cor 5.1-5.4 in action: which functions sampled parameters
recognise with margin xi, around a MAJORITY construction and in the box."""

from __future__ import annotations

import pytest

from verify.lemmas.eps_zero import IN_ACTION_FAMILIES


def test_certified_positive_measure_cube(run_statement_check) -> None:
    res = run_statement_check("Conj 5.5", "certified cube around a MAJORITY construction")
    assert all(r.measured > 0 for r in res.rows)


@pytest.mark.parametrize(("stmt", "family"), [(s, f) for s, f, _ in IN_ACTION_FAMILIES])
def test_in_action(run_statement_check, stmt: str, family: str) -> None:
    res = run_statement_check(
        stmt, f"in action: fraction of sampled theta recognising {family.upper()}"
    )
    assert res.rows and res.figures
