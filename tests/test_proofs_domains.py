"""Sound domains (issue 42): a reversed or zero-width box, unsatisfiable hypotheses and a
variable pinned to one value are errors that name the obligation; the side conditions of
radicands and divisors are part of the claim (a hypothesis asserts its own, a conclusion must
prove its own). Each of the issue's attempts is run through ``python -m verify prove``."""

from __future__ import annotations

import pytest
import sympy as sp

from verify.cli import main
from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.interval import find_violation, prove_nonnegative
from verify.proofs.methods import _z3_prove, arb_step, side_conditions, z3_step

load()

t, R, sig, D, var, eps, x = sp.symbols("t R sigma D var epsilon x", real=True)


def _prove_fails(capsys, ob_id: str, status: str) -> str:
    assert main(["prove", "--only", ob_id]) == 1
    out = capsys.readouterr().out
    assert f"NOT OK {ob_id}" in out and status in out
    return out


def test_a_reversed_box_is_vacuous_and_fails_prove(capsys) -> None:
    """exp(-t) <= 9/10 on t in [64, 0]: passed prove (exit 0) before the box was checked."""
    with scratch_registry():
        arb_step(
            "attempt.reversed_box",
            "Lemma 2.9",
            "attempt",
            "",
            {t: (64, 0)},
            sp.Le(sp.exp(-t), sp.Rational(9, 10)),
            sp.Le(sp.exp(-t), sp.Rational(9, 20)),
        )
        out = _prove_fails(capsys, "attempt.reversed_box", "vacuous")
        assert "lo > hi" in out


def test_a_false_softmax_bound_on_a_reversed_box_fails_prove(capsys) -> None:
    """Lemma 2.9's softmax step with the bound halved (false) on R in [8, 0]."""
    with scratch_registry():
        arb_step(
            "attempt.softmax_reversed",
            "Lemma 2.9",
            "attempt",
            "",
            {R: (8, 0), sig: (0, 1)},
            sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R) / 2),
            sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R) / 4),
        )
        _prove_fails(capsys, "attempt.softmax_reversed", "vacuous")
    with pytest.raises(ValueError, match="lo > hi"):
        prove_nonnegative(sp.exp(-t), {t: (64, 0)})
    with pytest.raises(ValueError, match="lo > hi"):
        find_violation(sp.exp(-t), {t: (64, 0)})


def test_a_box_collapsed_to_a_point_is_degenerate_unless_declared(capsys) -> None:
    concl = sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R))
    twin = sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.exp(2 * R) / 2)
    with scratch_registry():
        arb_step(
            "attempt.r_point", "Lemma 2.9", "attempt", "", {R: (0, 0), sig: (0, 1)}, concl, twin
        )
        _prove_fails(capsys, "attempt.r_point", "degenerate")
        declared = arb_step(
            "attempt.r_point_declared",
            "Lemma 2.9",
            "attempt",
            "",
            {R: (0, 0), sig: (0, 1)},
            concl,
            sp.Le(1 / (sig + (1 - sig) * sp.exp(-2 * R)), sp.Rational(1, 2)),
            fixed=(R,),
        )
        assert declared.prove().status == "proved"


def test_a_z3_domain_collapsed_to_one_value_is_degenerate(capsys) -> None:
    """lemma_2_9.ln_output_bound with D >= 1 replaced by Eq(D, 1)."""
    with scratch_registry():
        z3_step(
            "attempt.d_pinned",
            "Lemma 2.9",
            "attempt",
            "",
            [var >= 0, eps >= 0, var + eps > 0, sp.Eq(D, 1)],
            sp.Le(D * var / (var + eps), D),
            sp.Le(D * var / (var + eps), D / 2),
        )
        out = _prove_fails(capsys, "attempt.d_pinned", "degenerate")
        assert "pin D = 1" in out
    # pinned through two hypotheses that are not equalities
    v = _z3_prove([D >= 1, D <= 1, var >= 0], sp.Le(var * D, var))
    assert v.status == "degenerate" and v.point == {"D": "1"}
    assert _z3_prove([D >= 1, D <= 1, var >= 0], sp.Le(var * D, var), pinned=(D,)).status == (
        "proved"
    )


def test_unsatisfiable_hypotheses_are_vacuous_not_proved(capsys) -> None:
    with scratch_registry():
        z3_step(
            "attempt.vacuous",
            "Lemma 2.9",
            "attempt",
            "",
            [x >= 1, x * x <= sp.Rational(1, 2)],
            sp.Le(x, -5),
            sp.Le(x, -10),
        )
        out = _prove_fails(capsys, "attempt.vacuous", "vacuous")
        assert "unsatisfiable" in out


def test_side_conditions_are_part_of_the_claim_not_silently_added() -> None:
    # sqrt(x) >= 0 with no hypothesis: not defined for x < 0, so not proved for every x
    assert _z3_prove([], sp.Ge(sp.sqrt(x), 0)).status == "failed"
    assert _z3_prove([x >= 0], sp.Ge(sp.sqrt(x), 0)).status == "proved"
    # a divisor of the conclusion must be proved nonzero
    assert _z3_prove([x >= 0], sp.Le(x / (x + 1), 1)).status == "proved"
    assert _z3_prove([x >= -2], sp.Le(x / (x + 1), 1)).status == "failed"
    # a hypothesis asserts its own definedness, and the claim says so
    assert _z3_prove([sp.sqrt(x - 1) <= 2], sp.Ge(x, 1)).status == "proved"
    assert set(side_conditions(sp.Le(sp.sqrt(x - 1) / D, 2))) == {sp.Ge(x - 1, 0), sp.Ne(D, 0)}
    ob = OBLIGATIONS["lemma_3_1.centred_entry"]
    assert "conclusion defined (proved): D - 1 >= 0" in ob.claim


def test_every_registered_obligation_has_a_genuine_domain() -> None:
    """No registered box is reversed or undeclared zero-width (the z3 domains are checked by
    each obligation's own discharge, which `prove` runs)."""
    from verify.proofs.methods import box_domain

    for ob in OBLIGATIONS.values():
        if ob.method == "arb":
            assert box_domain(ob.meta["box"], ob.meta["fixed"]) is None, ob.id
