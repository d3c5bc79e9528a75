"""The theorem suite, generated from the registry: one line per statement module.

``theorems/test_lemma_3_2.py`` holds ``test_lemma_3_2 = theorem_test("Lemma 3.2")``: one test
per check of the statement, which runs the check at the session's budget, prints its
measured-vs-bound table (``pytest -s``) and asserts a status its policy accepts. A documented
finding is a strict expected failure naming its counterexample; a slow check carries the
``slow`` marker. Results are memoised per (statement, check, budget, seed) so that tests of a
check's output (``check_result``) do not rerun it.
"""

from __future__ import annotations

import functools
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from verify.registry.context import CheckContext
from verify.registry.core import Check, Statement, all_statements, get_statement, slugify
from verify.registry.counterexamples import repository_root
from verify.registry.results import CheckResult

THEOREMS = repository_root() / "theorems"


@functools.cache
def check_result(statement_id: str, check_name: str, budget: str, seed: int = 0) -> CheckResult:
    """Run a registered check once per session and argument set; print its table."""
    stmt = get_statement(statement_id)
    result = stmt.get_check(check_name).run(CheckContext(budget=budget, seed=seed), stmt)
    print(result.summary())
    return result


def _marks(check: Check) -> list[pytest.MarkDecorator]:
    marks = []
    if check.slow:
        marks.append(pytest.mark.slow)
    if check.finding is not None:
        marks.append(
            pytest.mark.xfail(
                strict=True,
                reason=f"documented finding: {check.finding.reason}"
                f" (counterexample {check.finding.counterexample})",
            )
        )
    return marks


def theorem_test(statement_id: str) -> Callable[..., None]:
    """A pytest test parametrised over the checks of ``statement_id``."""
    stmt = get_statement(statement_id)
    cases = [pytest.param(c, id=slugify(c.name), marks=_marks(c)) for c in stmt.checks]

    @pytest.mark.parametrize("check", cases)
    def test(check: Check, check_budget: str) -> None:
        if check.missing:
            pytest.skip(f"needs {', '.join(check.missing)} (an optional extra)")
        result = check_result(stmt.id, check.name, check_budget)
        assert result.status in check.accepted, result.summary()

    test.__doc__ = f"{stmt.id} ({stmt.confidence}): {stmt.title}."
    return test


def theorem_module_path(stmt: Statement, directory: Path = THEOREMS) -> Path:
    return directory / f"test_{stmt.slug}.py"


def theorem_module_text(stmt: Statement) -> str:
    """The generated theorem module of ``stmt``: a docstring and one line."""
    where = sorted({c.func.__module__ for c in stmt.checks}) or ["(no checks yet)"]
    title = textwrap.fill(f"{stmt.id} {stmt.confidence}: {stmt.title}.", 96)
    return (
        f'"""{title}\n\n'
        f"Generated from the registry (checks: {', '.join(where)});\n"
        f'regenerate with `python -m verify.registry.testing`."""\n\n'
        "from verify.registry.testing import theorem_test\n\n"
        f'test_{stmt.slug} = theorem_test("{stmt.id}")\n'
    )


def write_modules(
    modules: Iterable[tuple[Path, Callable[[], str]]], *, overwrite: bool = False
) -> list[Path]:
    """Write each (path, text) module that does not exist yet (all with ``overwrite``); return
    the paths written. Shared by the theorem and the derivation generators."""
    written = []
    for path, text in modules:
        if overwrite or not path.exists():
            path.write_text(text())
            written.append(path)
    return written


def write_theorem_modules(directory: Path = THEOREMS, *, overwrite: bool = False) -> list[Path]:
    """Write the theorem module of every registered statement that has none (or all, with
    ``overwrite``); return the paths written."""
    return write_modules(
        (
            (theorem_module_path(stmt, directory), functools.partial(theorem_module_text, stmt))
            for stmt in all_statements()
        ),
        overwrite=overwrite,
    )


def generator_main(write: Callable[..., list[Path]]) -> None:
    """``python -m ...testing [--overwrite]``: run a generator and say what it wrote."""
    for path in write(overwrite="--overwrite" in sys.argv[1:]):
        print(f"wrote {path}")


if __name__ == "__main__":
    generator_main(write_theorem_modules)
