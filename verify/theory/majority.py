"""MAJORITY's zero-sensitivity count in closed form and where it outgrows N^c (Sec 5, the
discussion after Cor 5.4; reconstructed, unnumbered)."""

from __future__ import annotations

import math


def majority_k0_formula(n: int, tie: str = "zero") -> int:
    """K_0 of MAJORITY on n bits: 2^n - 2 C(n, (n-1)/2) (odd n); 2^n - C(n, n/2) - C(n, n/2+1)
    (even n, the same under both tie rules by symmetry C(n, n/2-1) = C(n, n/2+1))."""
    if n % 2:
        return 2**n - 2 * math.comb(n, (n - 1) // 2)
    other = n // 2 + 1 if tie == "zero" else n // 2 - 1
    return 2**n - math.comb(n, n // 2) - math.comb(n, other)


def majority_lower_bound_exceeds(n: int, c: int) -> bool:
    """Whether 2^n (1 - sqrt(8/(3n))) > n^c, decided in exact integers.

    From C(2h, h) <= 4^h / sqrt(pi h): K_0(n) >= 2^n (1 - sqrt(8/(pi n))) >= 2^n (1 -
    sqrt(8/(3n))) for every n >= 1 (odd n: 2 C(n, (n-1)/2) = C(n+1, (n+1)/2); even n:
    C(n, n/2) + C(n, n/2+1) <= 2 C(n, n/2))."""
    gap = 2**n - n**c
    return gap > 0 and gap * gap * 3 * n > 8 * 2 ** (2 * n)


def majority_polynomial_threshold(c: int, tie: str = "zero") -> tuple[int, int]:
    """(N*, N_tail): K_0(N) > N^c for every N >= N*, and N* - 1 fails (or N* = 1).

    Exact K_0 is scanned up to N_tail, the first N >= c / ln 2 at which the lower bound
    2^N (1 - sqrt(8/(3N))) exceeds N^c; beyond N_tail that bound over N^c is increasing (both
    2^N / N^c and 1 - sqrt(8/(3N)) increase there), so no failure can follow.

    The scan stops by N = 64 (c + 2)^2 at the latest: there N >= 256 > c / ln 2,
    sqrt(8/(3N)) < 0.11 and c log2 N - N < -1, so the bound holds. Passing that N means the
    code is broken, and it raises rather than loop for ever."""
    last_fail = 0
    n = 1
    limit = 64 * (max(c, 0) + 2) ** 2
    while True:
        if n > limit:
            raise RuntimeError(f"majority_polynomial_threshold: no N_tail by N = {limit} (c = {c})")
        if majority_k0_formula(n, tie) <= n**c:
            last_fail = n
        if n >= c / math.log(2) and majority_lower_bound_exceeds(n, c):
            return last_fail + 1, n
        n += 1
