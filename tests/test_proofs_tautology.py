"""No step that cannot fail (issue 42): every z3 obligation's conclusion needs its hypotheses
together. A conclusion implied by a single hypothesis that relates two or more variables (a
step whose content sits in that hypothesis: the conclusion restated, or one operation away),
or by no hypothesis while it has such hypotheses (they are decoration), is flagged. A
hypothesis on one variable (x >= 0, D >= 1) is a domain: a lemma over a domain (AM-GM for
z, z' > 0) is genuine. A sympy identity whose two sides are the same expression as built is
flagged too, unless its left side is a computation done when it is built (named here)."""

from __future__ import annotations

import pytest
import sympy as sp
import z3

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS
from verify.proofs.methods import _z3_check

load()

# identities whose left side is computed when the obligation is built (sympy's power
# simplification of the coded expression), so equal sides are the check's result
COMPUTED_LHS = {
    "hr_thm_6.cap_growth": "t*^{-1/2} of the coded threshold t*, simplified by sympy",
    "sec_5_majority.tail_derivative": "h'(x) of the log of MAJORITY's lower bound over x^c,"
    " differentiated by sympy",
}


def _implies(hyps, concl) -> bool:
    _, res, _ = _z3_check(list(hyps), concl)
    return res == z3.unsat


def _content(h: sp.Basic) -> bool:
    return len(h.free_symbols) >= 2


def _claims(ob) -> list[tuple[tuple, sp.Basic]]:
    """(hypotheses, conclusion) to scan: a z3 step's claim; for an induction on the size
    (verify.proofs.positions) each goal of its base and close. Its step S -> S + 1 is left out:
    there the invariant at S + 1 is one added term away from the invariant at S by design (an
    identity kept, as Var = Q - 2 m M + m^2 P), and the planted bugs of
    tests/test_proofs_positions.py show that the step can fail."""
    if "parts" in ob.meta:
        return [(p.hyps, g) for p in ob.meta["parts"] if "step" not in p.name for g in p.goals]
    return [(ob.meta["hyps"], ob.meta["concl"])]


def trivial_reason(ob) -> str | None:
    """Why the obligation's conclusion does not need its hypotheses together (None: it does)."""
    for hyps, concl in _claims(ob):
        content = [h for h in hyps if _content(h)]
        if content and _implies([], concl):
            return f"{concl}: implied by no hypothesis"
        for h in content:
            if _implies([h], concl):
                return f"{concl}: implied by the single hypothesis {h}"
    return None


# the z3 steps over the reals (a custom z3 step over the integers, sec_5_majority.tie_strings,
# states its claim in z3's own terms)
Z3_IDS = sorted(
    k for k, ob in OBLIGATIONS.items() if ob.method == "z3" and {"hyps", "parts"} & set(ob.meta)
)


@pytest.mark.parametrize("ob_id", Z3_IDS)
def test_no_z3_conclusion_follows_from_one_hypothesis(ob_id: str) -> None:
    assert trivial_reason(OBLIGATIONS[ob_id]) is None


def test_no_identity_is_the_same_expression_on_both_sides() -> None:
    same = [
        k
        for k, ob in OBLIGATIONS.items()
        if ob.method == "sympy"
        and "lhs" in ob.meta
        and sp.sympify(ob.meta["lhs"] - ob.meta["rhs"]) == 0
    ]
    assert sorted(same) == sorted(COMPUTED_LHS)


def test_the_scan_flags_the_issues_tautologies() -> None:
    """The forms issue 42 found (the conclusion among the hypotheses; one operation away) are
    flagged; the restated steps are not."""
    from verify.proofs.core import scratch_registry
    from verify.proofs.methods import z3_step

    v, e, w, y, b, d, h, f, p, k, s = sp.symbols("V e W Y b d h f P K S", real=True)
    with scratch_registry():
        verbatim = z3_step(
            "attempt.verbatim",
            "Lemma 3.1",
            "attempt",
            "",
            [v >= 0, e >= 0, w >= 0, y >= 0, b >= 0, d <= v * e + w * y + b],
            sp.Le(d, v * e + w * y + b),
            sp.Le(d, v * e / 2 + w * y + b),
        )
        one_op = z3_step(
            "attempt.one_op",
            "Lemma 2.9",
            "attempt",
            "",
            [w >= 0, h >= 0, f >= 0, f <= w * h],
            sp.Le(h + f, (1 + w) * h),
            sp.Le(h + f, (1 + w / 2) * h),
        )
        union = z3_step(
            "attempt.union",
            "H&R Thm 6",
            "attempt",
            "",
            [k >= 1, s >= 1, f >= 0, p <= k * s * f],
            sp.Le(p, k * s * f),
            sp.Le(p, k * s * f / 2),
        )
        for ob in (verbatim, one_op, union):
            assert trivial_reason(ob) is not None, ob.id
    for ob_id in (
        "lemma_3_1.value_term",
        "lemma_3_1.out_proj_bound",
        "hr_thm_6.union",
        "lemma_2_9.mlp_residual",
        "lemma_3_2.per_layer_factor",
        "hr_cor_5.required_blowup",
        "lemma_4_4.cube_count",
    ):
        assert trivial_reason(OBLIGATIONS[ob_id]) is None, ob_id
