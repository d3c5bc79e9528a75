"""The mutation harness's generator (benchmarks/theory_mutants.py, docs/mutation.md): each
operator rewrites one expression in place, the rest of the source untouched, and the mutated
source still parses."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from theory_mutants import mutants_of_file, mutants_of_source  # noqa: E402

SOURCE = '''
def f(x: float, n: int = 3) -> float:
    """Doc 2.0."""
    if x <= 0:
        raise ValueError(f"x {x} > 0")
    total = 0.0
    for i in range(n):
        total += x ** i
    return min(total, 4.0) / 2  # a comment
'''


def _news(old: str) -> set[str]:
    return {m.new for m in mutants_of_source(SOURCE, "f.py") if m.old == old}


def test_each_operator_rewrites_one_expression() -> None:
    ms = mutants_of_source(SOURCE, "f.py")
    for m in ms:
        out = m.apply(SOURCE)
        ast.parse(out)
        assert out.count("\n") == SOURCE.count("\n")
        assert "# a comment" in out and '"""Doc 2.0."""' in out
    assert _news("4.0") == {"2.0", "8.0", "5.0", "3.0"}
    assert _news("x ** i") == {
        "((x) ** ((i) + 1))",
        "((x) ** ((i) - 1))",
        "((x) ** ((i) / 2))",
        "(x)",
    }
    assert "max(total, 4.0)" in _news("min(total, 4.0)")
    assert _news("range(n)") == {"range(n + 1)", "range(n - 1)"} and "total -= x ** i" in _news(
        "total += x ** i"
    )
    assert "return (min(total, 4.0) / 2) / 2" in _news("return min(total, 4.0) / 2")
    contexts = {m.old: m.context for m in ms}
    assert contexts["x <= 0"] == "guard" and contexts["3"] == "default"
    assert all(m.scope == "f" for m in ms)
    assert not any("Doc" in m.old or "x {x}" in m.old for m in ms)  # docstrings, messages


def test_a_theory_module_yields_parsing_mutants() -> None:
    ms = mutants_of_file(ROOT, "verify/theory/majority.py")  # each one parsed
    assert {m.scope for m in ms} == {
        "majority_k0_formula",
        "majority_lower_bound_exceeds",
        "majority_polynomial_threshold",
    }
