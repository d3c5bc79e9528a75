"""Sec 5 MAJORITY's threshold N*(c) as obligations (docs/derivations_eps_zero.md section 9).

The tail, for every c: h(x) = x ln 2 - c ln x + ln(1 - sqrt(8/(3x))) is the log of the proved
lower bound over x^c; its derivative (``sec_5_majority.tail_derivative``, sympy) is positive for
x >= 3 and x ln 2 >= c (``sec_5_majority.tail_increasing``, z3, ln 2 in (69/100, 7/10)); so
once the lower bound exceeds N^c at some N_tail >= max(3, c / ln 2) it does at every larger N
(mean value theorem), and K_0(N) >= the bound (``sec_5_majority.lower_bound``).

The chain: for each c the toolkit's check uses (c = 1..10), the coded (N*, N_tail) against an
exact scan of K_0(N) <= N^c over N <= N_tail (exact integers), N_tail >= c / ln 2 and the lower
bound > N_tail^c decided in arb (then the tail above covers every N > N_tail): an instance in c,
exact at each."""

from __future__ import annotations

import math
from collections.abc import Iterator

import sympy as sp
from flint import arb

from verify.proofs.chain import Case, code
from verify.proofs.compose import iv
from verify.proofs.coverage_common import DOC9, S5, _exhaustive
from verify.proofs.methods import custom_step, sympy_identity, z3_step

# ----------------------------------------------------------------------------- the tail
x, ln2, c_, s_ = sp.symbols("x l c s", real=True)
_S = sp.sqrt(sp.Rational(8, 3) / x)
_H = x * ln2 - c_ * sp.log(x) + sp.log(1 - _S)  # log of 2^x (1 - sqrt(8/(3x))) / x^c
H_PRIME = ln2 - c_ / x + s_ / (2 * x * (1 - s_))  # with s = sqrt(8/(3x))
sympy_identity(
    "sec_5_majority.tail_derivative",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    sp.diff(_H, x),
    H_PRIME.subs(s_, _S),
    (ln2 - c_ / x - s_ / (2 * x * (1 - s_))).subs(s_, _S),
)
z3_step(
    "sec_5_majority.tail_increasing",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    [
        x >= 3,
        ln2 > sp.Rational(69, 100),
        ln2 < sp.Rational(7, 10),
        x * ln2 >= c_,
        s_ > 0,
        3 * x * s_**2 <= 8,  # s = sqrt(8/(3x)) (the step needs only 0 < s < 1)
    ],
    sp.Gt(H_PRIME, 0),
    sp.Gt(ln2 - c_ / x - s_ / (2 * x * (1 - s_)), 0),
    facts=("sec_5_majority.tail_derivative",),
    note="h'(x) > 0 past max(3, c / ln 2): h increases there (axiom.mean_value), so the lower"
    " bound over x^c, once above 1, stays above 1",
)

# ----------------------------------------------------------------------------- N*(c)
EXPONENTS = range(1, 11)  # the c of the toolkit's Sec 5 check (verify.statements.sec5_majority)


def _k0_exact_formula(n: int, tie: str) -> int:
    """K_0 of MAJORITY: 2^n minus the strings at the tie counts (sec_5_majority.tie_strings,
    weight_classes)."""
    if n % 2:
        return (1 << n) - 2 * math.comb(n, (n - 1) // 2)
    other = n // 2 + 1 if tie == "zero" else n // 2 - 1
    return (1 << n) - math.comb(n, n // 2) - math.comb(n, other)


def _tail_starts(n: int, c: int) -> bool:
    """N_tail = n starts the tail: n >= 3, n ln 2 >= c and 2^n (1 - sqrt(8/(3n))) > n^c, in
    arb (False when a comparison is not decided)."""
    lower = arb(2) ** n * (1 - (arb(8) / (3 * n)).sqrt())
    return n >= 3 and bool(n * arb(2).log() >= c) and bool(lower > arb(n) ** c)


def _last_fail(c: int, tie: str, n_tail: int) -> int:
    """The last N <= n_tail with K_0(N) <= N^c (0 if none), in exact integers."""
    fails = (n for n in range(1, n_tail + 1) if _k0_exact_formula(n, tie) <= n**c)
    return max(fails, default=0)


def _threshold_cases() -> Iterator[Case]:
    """For each c: the coded (N*, [N_tail starts the tail]) against (1 + the last N <= N_tail
    that fails, 1): N_tail is the code's certificate, checked by the second entry."""
    for c in EXPONENTS:
        for tie in ("zero", "one"):

            def coded(c: int = c, tie: str = tie) -> tuple[float, float]:
                n_star, n_tail = code("sec_5_majority.chain_threshold")(c, tie)
                return float(n_star), float(_tail_starts(n_tail, c))

            def composed(c: int = c, tie: str = tie) -> tuple:
                n_tail = code("sec_5_majority.chain_threshold")(c, tie)[1]
                return iv(_last_fail(c, tie, n_tail) + 1), iv(1)

            yield {"c": c, "tie": tie}, coded, composed


custom_step(
    "sec_5_majority.chain_threshold",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    "chain",
    "verify.theory.majority:majority_polynomial_threshold(c, tie) = (N*, N_tail): N* - 1 is the"
    " last N <= N_tail with K_0(N) <= N^c (exact integers), N_tail >= max(3, c / ln 2) and"
    " 2^N (1 - sqrt(8/(3N))) > N^c there (arb), so no N > N_tail fails"
    " (sec_5_majority.tail_increasing); c = 1..10 (every c the toolkit's check uses), both ties",
    "the coded N* times 1/2",
    lambda: _exhaustive(_threshold_cases, "sec_5_majority.chain_threshold"),
    lambda: _exhaustive(_threshold_cases, "sec_5_majority.chain_threshold", 0.5),
    facts=(
        "sec_5_majority.exact_test",
        "sec_5_majority.chain_k0",
        "sec_5_majority.lower_bound",
        "sec_5_majority.tail_increasing",
        "axiom.mean_value",
    ),
    evidence="sizes",
)
