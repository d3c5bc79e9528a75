"""The statement registry: status policies, stamping, counterexamples, budgets, generated tests."""

from __future__ import annotations

import json

import numpy as np
import pytest

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.registry import (
    CheckContext,
    Counterexample,
    Finding,
    Outcome,
    Policy,
    Row,
    Sizes,
    Status,
    core,
    counterexamples,
    decide_status,
    define_statement,
    testing,
)

OK = Row("ok", 1.0, 2.0)
FAILS = Row("fails", 3.0, 2.0)
FAILS_WEAKLY = Row("fails, not decisive", 3.0, 2.0, decisive=False)


@pytest.mark.parametrize(
    ("policy", "rows", "unsettled", "expected"),
    [
        (Policy.STRICT, [OK], (), Status.HOLDS),
        (Policy.STRICT, [OK, FAILS], (), Status.VIOLATED),
        (Policy.STRICT, [OK, FAILS_WEAKLY], (), Status.VIOLATED),
        (Policy.STRICT, [OK], ("no verdict",), Status.UNDECIDED),
        (Policy.STATISTICAL, [OK, FAILS_WEAKLY], (), Status.UNDECIDED),
        (Policy.STATISTICAL, [FAILS_WEAKLY, FAILS], (), Status.VIOLATED),
        (Policy.ASYMPTOTIC, [FAILS], (), Status.UNDECIDED),
        (Policy.ASYMPTOTIC, [OK], (), Status.HOLDS),
        (Policy.STRICT, [Row("says nothing", 0.5, 1.0, trivial=1.0)], (), Status.VACUOUS),
        (Policy.STRICT, [Row("v", 0.5, 1.0, trivial=1.0), OK], (), Status.HOLDS),
        (Policy.STRICT, [Row("v", 2.0, 1.0, trivial=1.0)], (), Status.VIOLATED),
        (Policy.STRICT, [], (), Status.HOLDS),
    ],
)
def test_policies(policy, rows, unsettled, expected) -> None:
    assert decide_status(policy, rows, unsettled) is expected


def test_vacuous_rows_by_relation() -> None:
    assert Row("<=", 0.1, 5.0, "<=", trivial=2.0).vacuous  # bound 5 no better than trivial 2
    assert not Row("<=", 0.1, 1.0, "<=", trivial=2.0).vacuous
    assert Row(">=", 9.0, 0.0, ">=", trivial=0.0).vacuous  # K_0 >= 0 says nothing
    assert not Row(">=", 9.0, 3.0, ">=", trivial=0.0).vacuous


def test_budget_validated_and_sizes_named() -> None:
    with pytest.raises(ValidationError, match="budget"):
        CheckContext(budget="huge")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="seed"):
        CheckContext(seed=-1)
    sizes = Sizes(quick=1, default=2, full=3)
    assert [CheckContext(budget=b).size(sizes) for b in ("quick", "default", "full")] == [1, 2, 3]


@pytest.fixture
def registry_sandbox(tmp_path, monkeypatch):
    """An empty statement registry and a temporary counterexamples folder."""
    monkeypatch.setattr(core, "_STATEMENTS", {})
    monkeypatch.setattr(core, "STATEMENT_PACKAGES", [])
    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    return tmp_path


def test_registry_stamps_and_saves_one_format(registry_sandbox) -> None:
    stmt = define_statement(id="Lemma 9.1", title="t", statement="x <= 2")
    params = init_params(ModelConfig(d_model=4, n_layers=1, n_heads=1), "uniform", 0)

    @stmt.check("a violated bound", policy=Policy.STRICT)
    def check(ctx: CheckContext) -> Outcome:
        return Outcome(
            rows=[OK, FAILS],
            counterexample=Counterexample(setting={"N": 3}, params=params),
        )

    result = core.run_check("Lemma 9.1", "a violated bound", CheckContext(seed=7))
    assert (result.statement_id, result.check_name, result.seed) == (
        "Lemma 9.1",
        "a violated bound",
        7,
    )
    assert result.status is Status.VIOLATED and result.runtime_s >= 0
    stem = registry_sandbox / "lemma_9_1_a_violated_bound"
    record = json.loads(stem.with_suffix(".json").read_text())
    assert record["statement"] == "Lemma 9.1" and record["seed"] == 7
    assert record["setting"] == {"N": 3}
    assert record["failing_rows"] == [
        {"label": "fails", "measured": 3.0, "bound": 2.0, "relation": "<="}
    ]
    loaded = Params.load(stem.with_suffix(".npz"))
    np.testing.assert_array_equal(loaded.flatten(), params.flatten())
    assert loaded.config == params.config
    assert result.counterexample.endswith("lemma_9_1_a_violated_bound.npz")


def test_nothing_saved_when_the_bound_holds(registry_sandbox) -> None:
    stmt = define_statement(id="Lemma 9.2", title="t", statement="x <= 2")

    @stmt.check("holds")
    def check(ctx: CheckContext) -> Outcome:
        return Outcome(rows=[OK], counterexample=Counterexample(setting={"N": 3}))

    result = core.run_check("Lemma 9.2", "holds")
    assert result.status is Status.HOLDS and result.counterexample is None
    assert list(registry_sandbox.iterdir()) == []


def test_a_check_must_return_an_outcome(registry_sandbox) -> None:
    stmt = define_statement(id="Lemma 9.3", title="t", statement="s")

    @stmt.check("returns rows")
    def check(ctx: CheckContext) -> Outcome:
        return [OK]  # type: ignore[return-value]

    with pytest.raises(TypeError, match="expected an Outcome"):
        core.run_check("Lemma 9.3", "returns rows")


def test_duplicates_rejected(registry_sandbox) -> None:
    stmt = define_statement(id="Lemma 9.4", title="t", statement="s")
    with pytest.raises(ValueError, match="defined twice"):
        define_statement(id="Lemma 9.4", title="t", statement="s")
    stmt.check("c")(lambda ctx: Outcome())
    with pytest.raises(ValueError, match="already has a check"):
        stmt.check("c")(lambda ctx: Outcome())


def test_generated_theorem_test_marks(registry_sandbox) -> None:
    stmt = define_statement(id="Lemma 9.5", title="t", statement="s")
    finding = Finding("theorems/counterexamples/x.npz", "the paper counts one norm per layer")
    stmt.check("plain")(lambda ctx: Outcome())
    stmt.check("long", slow=True)(lambda ctx: Outcome())
    stmt.check("finding", finding=finding)(lambda ctx: Outcome(rows=[FAILS]))
    test = testing.theorem_test("Lemma 9.5")
    (parametrize,) = [m for m in test.pytestmark if m.name == "parametrize"]
    cases = {p.id: [m.name for m in p.marks] for p in parametrize.args[1]}
    assert cases == {"plain": [], "long": ["slow"], "finding": ["xfail"]}
    (xfail,) = [m for p in parametrize.args[1] if p.id == "finding" for m in p.marks]
    assert xfail.kwargs["strict"] and "x.npz" in xfail.kwargs["reason"]


def test_row_status_and_counts() -> None:
    from verify.registry import row_status, status_counts

    vac = Row("probability <= 1", 0.3, 1.0, trivial=1.0)
    assert row_status(Policy.STRICT, vac) is Status.VACUOUS
    assert row_status(Policy.STRICT, FAILS) is Status.VIOLATED
    assert row_status(Policy.STATISTICAL, FAILS_WEAKLY) is Status.UNDECIDED
    assert row_status(Policy.ASYMPTOTIC, FAILS) is Status.UNDECIDED
    assert row_status(Policy.STRICT, OK) is Status.HOLDS
    counts = status_counts(Policy.STATISTICAL, [vac, OK, FAILS_WEAKLY])
    assert counts == {
        "holds": 1,
        "vacuous": 1,
        "definitional": 0,
        "violated": 0,
        "undecided": 1,
    }


def test_definitional_rows_never_count_as_holds() -> None:
    """A row true of every model by construction is "definitional": a check whose rows are all
    definitional is DEFINITIONAL, with a vacuous row VACUOUS, with one row of content HOLDS;
    a failing definitional row (a bug) is still a violation under the strict policy."""
    from verify.registry import decide_status, row_status

    dfn = Row("z <= eps^-1/2", 3.0, 3.2, definitional=True)
    vac = Row("probability <= 1", 0.3, 1.0, trivial=1.0)
    assert dfn.verdict == "definitional" and row_status(Policy.STRICT, dfn) is Status.DEFINITIONAL
    assert decide_status(Policy.STRICT, [dfn, dfn]) is Status.DEFINITIONAL
    assert decide_status(Policy.STRICT, [dfn, vac]) is Status.VACUOUS
    assert decide_status(Policy.STRICT, [dfn, OK]) is Status.HOLDS
    broken = Row("z <= eps^-1/2", 4.0, 3.2, definitional=True)
    assert decide_status(Policy.STRICT, [broken]) is Status.VIOLATED
    from verify.registry.policy import ACCEPTED

    assert all(Status.DEFINITIONAL in accepted for accepted in ACCEPTED.values())
    with pytest.raises(ValueError, match="relation"):
        Row("bad", 1.0, 1.0, "<")  # type: ignore[arg-type]


def test_failing_rows_print_the_true_relation() -> None:
    from verify.registry import CheckResult

    rows = [
        Row("a", 14639.6, 121.0, "<="),
        Row("b", 83.0, 181.019, ">="),
        Row("c", 1.0, 2.0, "=="),
        Row("d", 0.5, 1.0, "<=", trivial=1.0),
    ]
    assert [r.shown_relation for r in rows] == [">", "<", "!=", "<="]
    assert [r.verdict for r in rows] == ["fails", "fails", "fails", "vacuous"]
    text = CheckResult("S", "c", Status.VIOLATED, rows=rows).summary()
    assert "14639.6 > bound 121" in text and "83 < bound 181.019" in text
    assert "14639.6 <= " not in text and "vacuous: trivial bound 1" in text


def test_worst_skips_vacuous_rows_and_identities() -> None:
    from verify.registry import CheckResult

    vac = Row("vacuous", 0.99, 1.0, trivial=1.0)
    informative = Row("informative", 0.2, 1.0)
    exact = Row("exact", 1.0, 1.0, "==")
    res = CheckResult("S", "c", Status.HOLDS, rows=[vac, exact, informative])
    assert res.worst is informative
    assert res.row_counts == {
        "holds": 1,
        "vacuous": 1,
        "exact": 1,
        "fails": 0,
        "definitional": 0,
    }
    only_exact = CheckResult("S", "c", Status.HOLDS, rows=[exact, exact])
    assert only_exact.worst is None and only_exact.worst_text() == "all exact (2 identities)"
    lower = CheckResult("S", "c", Status.HOLDS, rows=[Row("k0", 300.0, 181.0, ">=")])
    assert lower.worst_text() == "k0: 300 >= 181"


def test_bound_formulas_are_latex_in_dollars() -> None:
    """Every 'bound checked' of arXiv 2606.08768 is written as LaTeX inside $...$ (one
    rendering for the report), never as plain ASCII formulas."""
    from verify.registry import all_statements

    for stmt in all_statements():
        if not stmt.paper.startswith("arXiv 2606.08768"):
            continue
        f = stmt.bound_formula
        assert f.startswith("$") and f.count("$") % 2 == 0, (stmt.id, f)
        assert "||" not in f and "eps^" not in f, (stmt.id, f)  # ASCII leftovers
