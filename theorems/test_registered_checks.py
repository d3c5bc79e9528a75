"""Every registered check runs in ``pytest theorems/``, wired or not.

A statement module under ``verify/lemmas/`` registers its statements and checks; the dedicated
modules here (one per statement) call ``run_statement_check(id, name)``. This module finds, by
reading those calls, every registered non-slow check that no dedicated module runs, and runs it
here -- so a statement a user adds appears in the theorem suite with no further wiring (and a
check whose dedicated test was forgotten is still run, never silently skipped).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from verify.lemmas import Status, iter_checks

HERE = Path(__file__).parent


def _resolve(node: ast.expr, module: ast.Module) -> str | None:
    """A string literal, or a module-level name bound to one (assigned or imported)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.Name):
        return None
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets
        ):
            return _resolve(stmt.value, module)
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            for alias in stmt.names:
                if (alias.asname or alias.name) == node.id:
                    value = getattr(importlib.import_module(stmt.module), alias.name, None)
                    return value if isinstance(value, str) else None
    return None


def wired_checks(directory: Path = HERE) -> set[tuple[str, str]]:
    """(statement id, check name) pairs that the theorem modules run by name."""
    pairs: set[tuple[str, str]] = set()
    for path in sorted(directory.glob("test_*.py")):
        module = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "run_statement_check"
                and len(node.args) >= 2
            ):
                sid, name = (_resolve(a, module) for a in node.args[:2])
                if sid is not None and name is not None:
                    pairs.add((sid, name))
    return pairs


_WIRED = wired_checks()
_UNWIRED = [(s, c) for s, c in iter_checks() if (s.id, c.name) not in _WIRED]


def test_the_dedicated_modules_are_read() -> None:
    """The reader finds the dedicated modules' calls (else this module would rerun them all)."""
    assert ("Lemma 2.9", "random parameters of the four init schemes") in _WIRED
    assert ("Cor 5.1", importlib.import_module("verify.lemmas.functions")._PREMISE_CHECK) in _WIRED


@pytest.mark.parametrize(
    ("statement", "check"), _UNWIRED, ids=[f"{s.id}::{c.name}" for s, c in _UNWIRED]
)
def test_unwired_check(statement, check, run_statement_check) -> None:
    if check.expected_violation:
        result = run_statement_check(statement.id, check.name, allow=tuple(Status))
        assert result.status is Status.VIOLATED, (
            f"documented finding {check.expected_violation} no longer reproduces"
        )
        return
    run_statement_check(statement.id, check.name, allow=(Status.HOLDS, Status.VACUOUS))
