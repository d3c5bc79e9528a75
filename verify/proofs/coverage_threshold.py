"""Sec 5 MAJORITY's threshold N*(c) as an obligation (docs/derivations_eps_zero.md section 9):
the coded N* against an exact-integer scan of K_0(N) <= N^c."""

from __future__ import annotations

import math
from collections.abc import Iterator

from verify.proofs.chain import Case, code
from verify.proofs.compose import iv
from verify.proofs.coverage_common import DOC9, S5, _exhaustive
from verify.proofs.methods import custom_step

# ----------------------------------------------------------------------------- N*(c)
SCAN_LIMIT = 400  # the independent scan's reach: beyond it K_0(N) > N^c for every c <= 10


def _threshold_cases() -> Iterator[Case]:
    """N*(c) for c = 1..10 against an exact scan of K_0(N) <= N^c (every N up to 400, both
    ties): N* = 1 + the last N that fails. Past 400 no N fails for c <= 10, since the proved
    lower bound 2^N (1 - sqrt(8/(3N))) exceeds N^c at N = 400 and its ratio to N^c increases
    beyond c / ln 2 (sec_5_majority.exact_test at N = 400 is checked here too)."""
    for c in range(1, 11):
        for tie in ("zero", "one"):
            n400 = SCAN_LIMIT
            gap = (1 << n400) - n400**c
            assert gap > 0 and 3 * n400 * gap * gap > 8 * (1 << (2 * n400))
            last = max(
                (n for n in range(1, SCAN_LIMIT + 1) if _k0_exact_formula(n, tie) <= n**c),
                default=0,
            )
            yield (
                {"c": c, "tie": tie},
                (lambda c=c, tie=tie: code("sec_5_majority.chain_threshold")(c, tie)[0]),
                (lambda v=last + 1: iv(v)),
            )


def _k0_exact_formula(n: int, tie: str) -> int:
    """K_0 of MAJORITY: 2^n minus the strings at the tie counts (the enumeration's formula,
    checked against it by sec_5_majority.chain_k0 for n <= 12)."""
    if n % 2:
        return (1 << n) - 2 * math.comb(n, (n - 1) // 2)
    other = n // 2 + 1 if tie == "zero" else n // 2 - 1
    return (1 << n) - math.comb(n, n // 2) - math.comb(n, other)


custom_step(
    "sec_5_majority.chain_threshold",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    "chain",
    "verify.theory.majority:majority_polynomial_threshold(c, tie)'s N* equals 1 + the last N"
    " <= 400 with K_0(N) <= N^c (exact integers), c = 1..10, both ties",
    "the coded N* times 1/2",
    lambda: _exhaustive(_threshold_cases, "sec_5_majority.chain_threshold"),
    lambda: _exhaustive(_threshold_cases, "sec_5_majority.chain_threshold", 0.5),
    facts=("sec_5_majority.exact_test", "sec_5_majority.chain_k0"),
    evidence="points",
)
