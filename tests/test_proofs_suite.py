"""theorems/test_derivation_*.py are generated from verify.proofs: one module per statement with
derivation obligations, one line each, and none without a statement."""

from __future__ import annotations

import pytest

from verify.proofs.runner import STATEMENTS, load
from verify.proofs.testing import (
    PREFIX,
    derivation_module_path,
    derivation_module_text,
    write_derivation_modules,
)
from verify.registry.testing import THEOREMS


@pytest.mark.parametrize("statement", STATEMENTS)
def test_every_statement_has_its_generated_derivation_module(statement: str) -> None:
    path = derivation_module_path(statement)
    assert path.exists(), f"run python -m verify.proofs.testing ({path.name} missing)"
    assert path.read_text() == derivation_module_text(statement)


def test_no_derivation_module_without_obligations() -> None:
    expected = {derivation_module_path(s).name for s in STATEMENTS}
    assert {p.name for p in THEOREMS.glob(f"{PREFIX}*.py")} == expected


def test_every_obligation_belongs_to_a_generated_statement() -> None:
    assert {ob.statement for ob in load()} == set(STATEMENTS)


def test_writer_writes_only_missing_modules(tmp_path) -> None:
    first = write_derivation_modules(tmp_path)
    assert len(first) == len(STATEMENTS)
    assert write_derivation_modules(tmp_path) == []
    for path in first:
        code = [ln for ln in path.read_text().splitlines() if ln.startswith("test_")]
        assert len(code) == 1 and "= derivation_test(" in code[0]
