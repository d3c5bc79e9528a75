"""Keeps docs/extending.md working: executes its python blocks in order (registries restored)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verify.boolean import families
from verify.registry import CheckContext, Status, core, run_check

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def python_blocks(text: str) -> list[str]:
    """The ```python fenced blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.fixture
def isolated_registries() -> None:
    """Snapshot the statement and family registries; restore them afterwards."""
    core.load_all()  # register everything first, so nothing registers into the snapshot
    statements, fams = dict(core._STATEMENTS), dict(families._FAMILIES)
    try:
        yield
    finally:
        core._STATEMENTS.clear()
        core._STATEMENTS.update(statements)
        families._FAMILIES.clear()
        families._FAMILIES.update(fams)


def test_extending_doc_runs(isolated_registries: None, capsys: pytest.CaptureFixture) -> None:
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) == 5
    ns: dict[str, object] = {"__name__": "extending_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    out = capsys.readouterr().out
    assert "Example 1 holds all exact (9 identities, N = 2..10)" in out
    # the statement is in the registry and its check holds at the quick budget
    result = run_check("Example 1", "exhaustive count", CheckContext(budget="quick"))
    assert result.status is Status.HOLDS and len(result.rows) == 9
    assert all(r.measured == r.bound for r in result.rows)
    # the theorem-module block built a test over the statement's checks, which passes
    test_fn = ns["test_example_1"]
    (parametrize,) = [m for m in test_fn.pytestmark if m.name == "parametrize"]
    (case,) = parametrize.args[1]
    test_fn(check=case.values[0], check_budget="quick")
