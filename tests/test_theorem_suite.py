"""theorems/ is generated from the registry: one module per statement, one line each."""

from __future__ import annotations

import pytest

from verify.registry import all_statements
from verify.registry.testing import (
    THEOREMS,
    theorem_module_path,
    theorem_module_text,
    write_theorem_modules,
)

STATEMENTS = all_statements()


@pytest.mark.parametrize("stmt", STATEMENTS, ids=[s.slug for s in STATEMENTS])
def test_every_statement_has_its_generated_module(stmt) -> None:
    path = theorem_module_path(stmt)
    assert path.exists(), f"{stmt.id} has no {path.name}: run python -m verify.registry.testing"
    assert path.read_text() == theorem_module_text(stmt)


def test_no_theorem_module_without_a_statement() -> None:
    """theorems/test_derivation_*.py are verify.proofs' (tests/test_proofs_suite.py)."""
    expected = {theorem_module_path(s).name for s in STATEMENTS}
    found = {
        p.name for p in THEOREMS.glob("test_*.py") if not p.name.startswith("test_derivation_")
    }
    assert found == expected


def test_writer_writes_only_missing_modules(tmp_path) -> None:
    first = write_theorem_modules(tmp_path)
    assert len(first) == len(STATEMENTS)
    assert write_theorem_modules(tmp_path) == []
    for path in first:
        code = [ln for ln in path.read_text().splitlines() if ln.startswith("test_")]
        assert len(code) == 1 and "= theorem_test(" in code[0]  # one line per statement
