"""Keeps docs/extending.md working: executes its python blocks in order (registries restored)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from verify.boolean import families
from verify.lemmas import CheckContext, CheckResult, Status, registry, run_check

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def python_blocks(text: str) -> list[str]:
    """The ```python fenced blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.fixture
def isolated_registries() -> None:
    """Snapshot the statement and family registries; restore them afterwards."""
    registry.load_all()  # register everything first, so nothing registers into the snapshot
    statements, fams = dict(registry._STATEMENTS), dict(families._FAMILIES)
    try:
        yield
    finally:
        registry._STATEMENTS.clear()
        registry._STATEMENTS.update(statements)
        families._FAMILIES.clear()
        families._FAMILIES.update(fams)


def test_extending_doc_runs(isolated_registries: None, capsys: pytest.CaptureFixture) -> None:
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) == 5
    ns: dict[str, object] = {"__name__": "extending_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    out = capsys.readouterr().out
    assert "Example 1 holds K_0 at N=" in out
    # the statement is in the registry and its check holds at the quick budget
    result = run_check("Example 1", "exhaustive count", CheckContext(budget="quick"))
    assert result.status is Status.HOLDS and len(result.rows) == 9
    assert all(r.measured == r.bound for r in result.rows)
    # the theorem-module block runs the check through a runner like the fixture's
    calls: list[tuple[str, str]] = []

    def runner(statement_id: str, check_name: str) -> CheckResult:
        calls.append((statement_id, check_name))
        res = run_check(statement_id, check_name, CheckContext(budget="quick"))
        assert res.status is Status.HOLDS
        return res

    test_fn: Callable = ns["test_example_1_exhaustive"]  # type: ignore[assignment]
    test_fn(runner)
    assert calls == [("Example 1", "exhaustive count")]
