"""Helpers for the theorem modules: run a registered check, print it, assert its status."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from verify.lemmas import CheckContext, CheckResult, Status, run_check


@pytest.fixture
def run_statement_check(check_budget: str) -> Callable[..., CheckResult]:
    """``run_statement_check("Lemma 3.2", "check name")`` runs the registered check, prints
    its measured-vs-bound table and asserts its status is in ``allow`` (default: holds)."""

    def run(
        statement_id: str,
        check_name: str,
        *,
        seed: int = 0,
        allow: tuple[Status, ...] = (Status.HOLDS,),
    ) -> CheckResult:
        result = run_check(statement_id, check_name, CheckContext(budget=check_budget, seed=seed))
        print(result.summary())
        assert result.status in allow, result.summary()
        return result

    return run
