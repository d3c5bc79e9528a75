"""Issue 42, chains proved, not sampled: Lemma 4.2's tail and neighbourhood bound, Thm 4.5's
min(1, a_N) (their callees uninterpreted, :mod:`verify.proofs.chain_callees`) and Sec 5
MAJORITY's K_0 and exact-integer test (:mod:`verify.proofs.chain_majority`) are proved on
symbols for every value of their domains, and each stays able to fail: planted weakenings of
the code in ``verify/theory`` fail their obligation at a named point (or, when the weakened code
branches where the domain cannot decide it, are not proved)."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS
from verify.proofs.status import obligation_class
from verify.proofs.symbolic_paths import PathLimitError, paths
from verify.theory import majority, small_ball, zero_sensitivity

load()

PROVED = [
    "lemma_4_2.chain_tail",
    "lemma_4_2.chain_neighbourhood",
    "thm_4_5.chain_bad_event_bound",
    "sec_5_majority.chain_k0",
    "sec_5_majority.chain_predicate",
]


@pytest.mark.parametrize("ob_id", PROVED)
def test_the_chain_is_proved_on_symbols_with_its_twin_refuted(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    assert obligation_class(ob) == "chain proved"
    assert ob.prove().status == "proved"
    assert ob.refute_twin().status == "refuted"


@pytest.mark.parametrize("ob_id", ["sec_5_majority.tie_strings", "sec_5_majority.weight_classes"])
def test_the_tie_count_steps_are_proved_for_every_n(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    assert obligation_class(ob) == "genuine"
    assert ob.prove().status == "proved" and ob.refute_twin().status == "refuted"


def _tail_with_s_plus_one(t, d, a, k, s):
    return min(
        small_ball.blowup_tail_bound_union(t, d, a, k, s + 1),
        small_ball.blowup_tail_bound_sequential(t, d, a, k, s),
    )


def _neighbourhood_without_eos(t, d, a, k_norms, n, k, eos=True):
    p = small_ball.blowup_tail_bound(t, d, a, k_norms, n)
    return min(1.0, p * small_ball.lemma_4_2_markov_factor(n, k))


def _bad_event(shift_n: int = 0, zeta_den: int = 1):
    def bound(d, ll, n_bits, box):
        e = sp.Rational(d - 1, 2 * ll) - 5
        zeta = sp.Rational(d - 2, d - zeta_den)
        term, n = zero_sensitivity.bad_event_series_term(d, ll, e, zeta, box)
        value = term.subs(n, n_bits + shift_n)
        return 1.0 if bool(value >= 1) else float(value)

    return bound


def _k0_odd_one_tie(n: int, tie: str = "zero") -> int:
    """Odd N with one tie count only (the ties swapped would be no weakening: C(N, N/2 - 1) =
    C(N, N/2 + 1), so both tie rules give the same K_0)."""
    if n % 2:
        return 2**n - math.comb(n, (n - 1) // 2)
    other = n // 2 + 1 if tie == "zero" else n // 2 - 1
    return 2**n - math.comb(n, n // 2) - math.comb(n, other)


def _predicate_pi_4(n: int, c: int) -> bool:  # runs on symbols: z3 refutes a path
    gap = 2**n - n**c
    return gap > 0 and gap * gap * 4 * n > 8 * 2 ** (2 * n)


def _predicate_gap_only(n: int, c: int) -> bool:
    return 2**n - n**c > 0


WEAKENINGS = [
    ("tail: S + 1 in the union", small_ball, "blowup_tail_bound", _tail_with_s_plus_one,
     "lemma_4_2.chain_tail"),
    ("tail: max for min", small_ball, "blowup_tail_bound",
     lambda t, d, a, k, s: max(small_ball.blowup_tail_bound_union(t, d, a, k, s),
                               small_ball.blowup_tail_bound_sequential(t, d, a, k, s)),
     "lemma_4_2.chain_tail"),
    ("neighbourhood: eos ignored", small_ball, "neighbourhood_blowup_bound",
     _neighbourhood_without_eos, "lemma_4_2.chain_neighbourhood"),
    ("neighbourhood: Markov's N - k + 1 -> N - k + 2", small_ball, "lemma_4_2_markov_factor",
     lambda n, k: 1.0 + n / (n - k + 2), "lemma_4_2.chain_neighbourhood"),
    ("min(1, a_N): a_N at N + 1", zero_sensitivity, "bad_event_probability_bound",
     _bad_event(shift_n=1), "thm_4_5.chain_bad_event_bound"),
    ("min(1, a_N): zeta = (D - 2)/D", zero_sensitivity, "bad_event_probability_bound",
     _bad_event(zeta_den=0), "thm_4_5.chain_bad_event_bound"),
    ("K_0: odd N, one tie count", majority, "majority_k0_formula", _k0_odd_one_tie,
     "sec_5_majority.chain_k0"),
    ("K_0: one tie count only", majority, "majority_k0_formula",
     lambda n, tie="zero": 2**n - math.comb(n, n // 2), "sec_5_majority.chain_k0"),
    ("the exact test: 3 -> 4 (pi)", majority, "majority_lower_bound_exceeds", _predicate_pi_4,
     "sec_5_majority.chain_predicate"),
    ("the exact test: gap > 0 only", majority, "majority_lower_bound_exceeds",
     _predicate_gap_only, "sec_5_majority.chain_predicate"),
]  # fmt: skip


@pytest.mark.parametrize(
    "label, module, name, weaker, ob_id", WEAKENINGS, ids=[w[0] for w in WEAKENINGS]
)
def test_a_planted_weakening_fails_its_proved_chain(
    monkeypatch, label, module, name, weaker, ob_id
):
    monkeypatch.setattr(module, name, weaker)
    verdict = OBLIGATIONS[ob_id].prove()
    assert verdict.status == "failed", (label, verdict)
    assert verdict.point


def test_a_weakened_branch_the_domain_cannot_decide_is_not_proved(monkeypatch) -> None:
    """min(1, a_N) with the branch at a_N >= 2: the cases a_N = 1 +- u A cannot decide it, so
    the code cannot run on symbols there: unknown, never proved."""

    def at_two(d, ll, n_bits, box):
        e, zeta = sp.Rational(d - 1, 2 * ll) - 5, sp.Rational(d - 2, d - 1)
        term, n = zero_sensitivity.bad_event_series_term(d, ll, e, zeta, box)
        value = term.subs(n, n_bits)
        return 1.0 if bool(value >= 2) else float(value)

    monkeypatch.setattr(zero_sensitivity, "bad_event_probability_bound", at_two)
    assert OBLIGATIONS["thm_4_5.chain_bad_event_bound"].prove().status != "proved"


def test_paths_run_every_branch_once() -> None:
    x, y = sp.symbols("x y", real=True)

    def f(a, b):
        if a > 0 and b > 0:
            return 1
        return 2 if a > 0 else 3

    found = paths(lambda: f(x, y))
    got = sorted((p.value, tuple(map(str, p.conditions))) for p in found)
    assert got == [(1, ("x > 0", "y > 0")), (2, ("x > 0", "y <= 0")), (3, ("x <= 0",))]
    with pytest.raises(TypeError):
        bool(x > 0)


def test_paths_refuse_a_loop_over_a_symbolic_bound() -> None:
    n = sp.Symbol("n", positive=True)

    def scan(bound):
        i = 0
        while i < bound:
            i += 1
        return i

    with pytest.raises(PathLimitError):
        paths(lambda: scan(n), limit=10)


def test_the_only_z3_step_without_a_real_claim_is_the_integer_one() -> None:
    """The tautology scan and the Coq translation read a z3 step's real hypotheses (or its
    parts, an induction on the size); the one z3 step over the integers (its claim in z3's
    terms) is the only one with neither."""
    bare = sorted(
        k
        for k, ob in OBLIGATIONS.items()
        if ob.method == "z3" and not {"hyps", "parts"} & set(ob.meta)
    )
    assert bare == ["sec_5_majority.tie_strings"]


@pytest.mark.parametrize(
    "ob_id",
    [
        "sec_5_majority.chain_threshold",
        "thm_4_5.chain_smallest_biting_n",
        "thm_4_5.chain_series_order",
        "thm_4_5.chain_series",
    ],
)
def test_the_exact_checks_at_every_size_the_toolkit_uses_are_instances(ob_id: str) -> None:
    assert obligation_class(OBLIGATIONS[ob_id]) == "instance"


@pytest.mark.parametrize(
    "ob_id", ["sec_5_majority.tail_derivative", "sec_5_majority.tail_increasing"]
)
def test_the_tail_of_n_star_is_proved_for_every_c(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    assert obligation_class(ob) == "genuine"
    assert ob.prove().status == "proved" and ob.refute_twin().status == "refuted"


def test_a_threshold_whose_tail_certificate_starts_too_early_fails(monkeypatch) -> None:
    """N* right but N_tail = 2 (before c / ln 2, and where the lower bound is below N^c): the
    chain checks the certificate, not only N*."""
    real = majority.majority_polynomial_threshold
    monkeypatch.setattr(
        majority, "majority_polynomial_threshold", lambda c, tie="zero": (real(c, tie)[0], 2)
    )
    verdict = OBLIGATIONS["sec_5_majority.chain_threshold"].prove()
    assert verdict.status == "failed" and verdict.point
