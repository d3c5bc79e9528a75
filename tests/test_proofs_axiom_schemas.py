"""Axioms as checkable facts (issue 42): each axiom carries a scalar schema (hyps => concl over
scalar symbols) that a step's ``uses=`` instantiates, tested to be the image of the attacked
vector statement (it holds on the scalars computed from the attack's draws, and a tightened or
deliberately wrong schema fails there); an axiom without one says why. A wrong schema or a
wrong substitution fails ``prove``."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.axiom_schemas import check_schema, schema, schema_violation
from verify.proofs.core import AXIOMS, axiom, scratch_registry
from verify.proofs.methods import Use, check_uses, z3_step

load()

TOL = 1e-9
DRAWS = 2000
# axioms whose content is no inequality between scalars
NO_SCHEMA = {"axiom.borel_cantelli", "axiom.positionwise_embedding"}
# the tightening that must fail on the draws (the Chen-Stein bound is not attained: 0.54)
TIGHTEN = {"axiom.chen_stein": 0.5}
# schemas whose conclusion has nothing to tighten (a sign): a wrong conclusion instead
WRONG = {
    "axiom.probability_range": lambda s: sp.And(*s.concl.args, sp.Symbol("pa", real=True) >= 1),
}
WITH_SCHEMA = sorted(a for a, ax in AXIOMS.items() if ax.schema is not None)


def test_every_axiom_has_a_schema_or_a_reason() -> None:
    assert {a for a, ax in AXIOMS.items() if ax.schema is None} == NO_SCHEMA
    for a in NO_SCHEMA:
        assert len(AXIOMS[a].no_schema) > 40, a
    for a in WITH_SCHEMA:
        sch = AXIOMS[a].schema
        free = {s.name for r in (*sch.hyps, sch.concl) for s in r.free_symbols}
        assert free == set(sch.symbols), a


@pytest.mark.parametrize("ax_id", WITH_SCHEMA)
def test_the_schema_holds_on_the_attacks_draws(ax_id: str) -> None:
    worst, seed = check_schema(ax_id, DRAWS, seed=11)
    assert worst <= TOL, f"{ax_id}: violated by {worst:.3g} at seed {seed}"


@pytest.mark.parametrize("ax_id", WITH_SCHEMA)
def test_a_wrong_schema_fails_on_the_attacks_draws(ax_id: str) -> None:
    """The conclusion's larger side 10% smaller (an equality 1% off), or a wrong conclusion
    where there is nothing to scale: the draws reach the equality cases."""
    sch = AXIOMS[ax_id].schema
    if ax_id in WRONG:
        wrong = schema(sch.symbols, sch.hyps, WRONG[ax_id](sch), sch.instances)
        with scratch_registry():
            axiom("axiom.wrong", "wrong", "wrong", "test", AXIOMS[ax_id].attack, schema=wrong)
            worst, _ = check_schema("axiom.wrong", DRAWS, seed=11)
    else:
        worst, _ = check_schema(ax_id, DRAWS, seed=11, tighten=TIGHTEN.get(ax_id, 0.9))
    assert worst > TOL, ax_id


def test_a_missing_instance_value_is_an_error() -> None:
    sch = AXIOMS["axiom.markov"].schema
    with pytest.raises(ValueError, match="no value for a"):
        schema_violation(sch, {"pr": np.ones(3), "ex": np.ones(3)})
    with pytest.raises(ValueError, match="without a meaning: q"):
        schema({"p": "x"}, [], sp.Symbol("p") <= sp.Symbol("q"), sch.instances)


P, E, A, Q = sp.symbols("P E A Q", real=True)


def _markov_step(hyps, use: Use):
    with scratch_registry():
        ob = z3_step(
            "attempt.markov",
            "Lemma 4.2",
            "attempt",
            "",
            hyps,
            sp.Le(P, 1),
            sp.Le(P, sp.Rational(1, 2)),
            uses=(use,),
        )
        return ob.prove()


def test_an_axiom_use_is_checked_against_its_schema() -> None:
    """Markov at X's mean E <= A, threshold A: P A <= E gives P <= 1. The right substitution
    is proved; a wrong one (threshold A/2), a premise the domain does not give (A > 0), and an
    axiom without a schema fail, each named."""
    fact = P * A <= E
    hyps = [A > 0, E >= 0, E <= A, fact]
    ok = _markov_step(hyps, Use("axiom.markov", {"pr": P, "ex": E, "a": A}, fact))
    assert ok.status == "proved", ok.detail
    bad = _markov_step(hyps, Use("axiom.markov", {"pr": P, "ex": E, "a": A / 2}, fact))
    assert bad.status == "failed" and "does not give" in bad.detail
    loose = [A >= 0, E >= 0, E <= A, fact]
    v = check_uses(loose, [Use("axiom.markov", {"pr": P, "ex": E, "a": A}, fact)])
    assert v is not None and "premise" in v.detail
    v = check_uses(hyps, [Use("axiom.borel_cantelli", {}, fact)])
    assert v is not None and "no scalar schema" in v.detail


def test_an_and_schema_gives_each_of_its_relations() -> None:
    pa, pb = sp.symbols("p_A p_B", real=True)
    use = Use("axiom.probability_range", {"pa": pa, "pb": pb}, pa <= pb)
    assert check_uses([pa <= pb], [use]) is None
    use = Use("axiom.probability_range", {"pa": pa, "pb": pb}, pa <= pb / 2)
    assert check_uses([pa <= pb / 2], [use]) is not None


def _half_cs(rng, n):
    return AXIOMS["axiom.cauchy_schwarz"].schema.instances(rng, n)


def test_prove_fails_on_a_wrong_schema_and_on_a_wrong_substitution(capsys) -> None:
    """A planted schema |<x, y>| <= ||x|| ||y|| / 2 (its attack is the true one, so only the
    schema check can catch it) and a Markov use at the threshold A/2: `prove` exits 1 and
    names each."""
    from verify.cli import main

    dot, nx, ny = sp.symbols("dot nx ny", real=True)
    with scratch_registry():
        axiom(
            "axiom.cs_half",
            "a halved Cauchy-Schwarz",
            "|<x, y>| <= ||x|| ||y|| / 2",
            "issue 42",
            AXIOMS["axiom.cauchy_schwarz"].attack,
            schema=schema(
                {"dot": "<x, y>", "nx": "||x||", "ny": "||y||"},
                [nx >= 0, ny >= 0],
                sp.Abs(dot) <= nx * ny / 2,
                _half_cs,
            ),
        )
        d = sp.Symbol("d", real=True)
        hyp = 2 * sp.Abs(d) <= nx * ny
        z3_step(
            "attempt.cs_half",
            "Lemma 2.9",
            "attempt",
            "",
            [nx >= 0, ny >= 0, hyp],
            sp.Le(sp.Abs(d), nx * ny / 2),
            sp.Le(sp.Abs(d), nx * ny / 4),
            uses=(Use("axiom.cs_half", {"dot": d, "nx": nx, "ny": ny}, hyp),),
        )
        assert main(["prove", "--only", "attempt.cs_half"]) == 1
        out = capsys.readouterr().out
        assert "NOT OK axiom.cs_half: its schema fails on its attack's draws" in out
        fact = P * A <= E
        z3_step(
            "attempt.markov_2a",
            "Lemma 4.2",
            "attempt",
            "",
            [A > 0, E >= 0, E <= A, fact],
            sp.Le(P, 1),
            sp.Le(P, sp.Rational(1, 2)),
            uses=(Use("axiom.markov", {"pr": P, "ex": E, "a": A / 2}, fact),),
        )
        assert main(["prove", "--only", "attempt.markov_2a"]) == 1
        out = capsys.readouterr().out
        assert "NOT OK attempt.markov_2a: uses axiom.markov" in out
