"""Sec 6 random functions as obligations (docs/derivations_eps_zero.md section 9): the
Chen-Stein radius from its b_1, b_2 (the closed neighbourhoods of two strings at distance 1 or
2 cover 2N points) and the biased E[K_0]."""

from __future__ import annotations

import itertools
import math

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.coverage_common import DOC9, S6
from verify.proofs.methods import custom_step, sympy_identity

__all__ = ["CHEN_STEIN", "biased_mean"]


# ----------------------------------------------------------------------------- Sec 6
def _neighbourhoods(n_max: int = 8) -> tuple[bool, str]:
    for n in range(1, n_max + 1):
        closed = [{x} | {x ^ (1 << i) for i in range(n)} for x in range(1 << n)]
        ball = {y for y in range(1 << n) if bin(y).count("1") <= 2}
        if len(ball) != 1 + n + math.comb(n, 2):
            return False, f"N = {n}: |B_x| = {len(ball)}"
        for y in range(1, 1 << n):
            d = bin(y).count("1")
            union = len(closed[0] | closed[y])
            if len(closed[0] & closed[y]) != meet(n, d):
                return False, f"N = {n}, d = {d}: |N[x] n N[y]| is not the count meet(N, d)"
            if d <= 2 and union != 2 * n:
                return False, f"N = {n}, d = {d}: |N[x] u N[y]| = {union}"
            if d >= 3 and closed[0] & closed[y]:
                return False, f"N = {n}, d = {d}: the closed neighbourhoods meet"
    return True, (
        f"N = 1..{n_max}: |B_x| = 1 + N + C(N, 2), |N[x] u N[y]| = 2N at d = 1, 2, every"
        " |N[x] n N[y]| the count meet(N, d)"
    )


_N = sp.Symbol("N", positive=True, integer=True)
_E = sp.Symbol("e", nonnegative=True, integer=True)


def meet(n: sp.Expr, d: sp.Expr) -> sp.Expr:
    """|N[x] n N[y]| for strings at distance d in {0,1}^n: z flips a of the d coordinates where
    x and y differ and b of the n - d others (C(d, a) C(n - d, b) such z), so d(x, z) = a + b
    and d(y, z) = d - a + b; both <= 1 leaves (a, b) in {(0, 0), (1, 0), (0, 1)}."""
    total = sp.S.Zero
    for a, b in ((0, 0), (1, 0), (0, 1)):
        if sp.Le(d - a + b, 1) is sp.true:  # a + b <= 1 holds for these
            total += sp.binomial(d, a) * sp.binomial(n - d, b)
        elif sp.Le(d - a + b, 1) is not sp.false:
            raise ValueError(f"undecided: d - a + b <= 1 at d = {d}")
    return total


def _neighbourhoods_prove() -> Verdict:
    """Every N, symbolic: |N[x] u N[y]| = 2 (N + 1) - meet = 2N at d = 1, 2; meet = 0 at every
    d = 3 + e; |B_x| = sum_{j <= 2} C(N, j). Cross-check: enumeration at N = 1..8."""
    for d in (1, 2):
        if sp.simplify(2 * (_N + 1) - meet(_N, d) - 2 * _N) != 0:
            return Verdict("failed", f"d = {d}: |N[x] u N[y]| = {2 * (_N + 1) - meet(_N, d)}")
    if meet(_N + 3 + _E, 3 + _E) != 0:
        return Verdict("failed", "d >= 3: the closed neighbourhoods meet")
    ball = sum(sp.binomial(_N, j) for j in range(3))
    if sp.simplify(sp.expand_func(ball) - (1 + _N + _N * (_N - 1) / 2)) != 0:
        return Verdict("failed", f"|B_x| = {ball}")
    ok, detail = _neighbourhoods()
    if not ok:
        return Verdict("failed", f"enumeration: {detail}")
    return Verdict(
        "proved",
        "sympy, symbolic N (and d = 3 + e >= 3): |N[x] u N[y]| = 2N at d = 1, 2, disjoint at"
        f" d >= 3, |B_x| = 1 + N + C(N, 2); enumeration agrees ({detail})",
    )


def _neighbourhoods_twin() -> Verdict:
    n = 3
    closed = [{x} | {x ^ (1 << i) for i in range(n)} for x in range(1 << n)]
    union = len(closed[0] | closed[1])
    if union != 2 * n + 2:
        return Verdict("refuted", f"N = 3, d = 1: |N[x] u N[y]| = {union} != 2N + 2", {"N": "3"})
    return Verdict("not refuted")


custom_step(
    "sec_6_random_functions.neighbourhoods",
    S6,
    "Rate of the limit: dependency sets",
    DOC9,
    "sympy",
    "for x, y at distance 1 or 2 the closed neighbourhoods N[x], N[y] cover 2N strings; at"
    " distance >= 3 they are disjoint; |B_x| = |{y: d(x, y) <= 2}| = 1 + N + C(N, 2)"
    " for every N >= 1 (symbolic N: z counted by the a of the d differing and b of the N - d"
    " other coordinates it flips, C(d, a) C(N - d, b); enumerated at N = 1..8)",
    "|N[x] u N[y]| = 2N + 2 at distance 1",
    _neighbourhoods_prove,
    _neighbourhoods_twin,
)
nn_ = sp.symbols("N", positive=True, integer=True)
_near = nn_ + nn_ * (nn_ - 1) / 2
B1 = 2**nn_ * (1 + _near) * 4**-nn_  # sum_x sum_{y in B_x} p_x p_y, p = 2^-N
B2 = 2**nn_ * _near * 2 * 2 ** (-2 * nn_)  # E[I_x I_y] = 2^(1 - 2N): f constant on 2N strings
CHEN_STEIN = (1 - sp.exp(-1)) * (B1 + B2)  # lambda = E K_0 = 1
sympy_identity(
    "sec_6_random_functions.b2_term",
    S6,
    "Rate of the limit",
    DOC9,
    2**nn_ * _near * 2 ** (1 - 2 * nn_),
    B2,
    B2 / 2,
    facts=("sec_6_random_functions.neighbourhoods",),
)


pp = sp.symbols("p", positive=True)


def biased_mean(n: int) -> sp.Expr:
    """E[K_0] for f(x) i.i.d. Bernoulli(p), by summing over every f on n bits (exact in p)."""
    total = sp.Integer(0)
    strings = range(1 << n)
    for table in itertools.product((0, 1), repeat=1 << n):
        k0 = sum(all(table[x ^ (1 << i)] == table[x] for i in range(n)) for x in strings)
        ones = sum(table)
        total += k0 * pp**ones * (1 - pp) ** ((1 << n) - ones)
    return sp.expand(total)


BIASED = 2**nn_ * (pp ** (nn_ + 1) + (1 - pp) ** (nn_ + 1))


def _biased_prove() -> Verdict:
    """Every N, symbolic: N[x] holds |N[x]| = meet(N, 0) = N + 1 distinct strings, whose values
    are i.i.d. Bernoulli(p); x is zero-sensitive iff they agree, i.e. their number j of ones is
    0 or N + 1: P = sum_{j in {0, N+1}} C(N+1, j) p^j (1-p)^(N+1-j); E[K_0] = 2^N P
    (linearity over the 2^N strings). Cross-check: the sum over every f on N = 1, 2, 3 bits."""
    size = meet(nn_, 0)
    agree = sum(sp.binomial(size, j) * pp**j * (1 - pp) ** (size - j) for j in (sp.S.Zero, size))
    if sp.simplify(2**nn_ * agree - BIASED) != 0:
        return Verdict("failed", f"2^N P[x zero-sensitive] = {2**nn_ * agree}, not {BIASED}")
    for n in (1, 2, 3):
        if sp.expand(biased_mean(n) - BIASED.subs(nn_, n)) != 0:
            return Verdict("failed", f"N = {n}: the sum over every f differs", {"N": str(n)})
    return Verdict(
        "proved",
        "sympy, symbolic N: 2^N (p^(N+1) + (1-p)^(N+1)) from the N + 1 agreeing values of"
        " N[x]; the sum over every f on N = 1, 2, 3 bits agrees, exact in p",
    )


def _biased_twin() -> Verdict:
    twin = 2**nn_ * pp ** (nn_ + 1)
    if sp.expand(biased_mean(2) - twin.subs(nn_, 2)) != 0:
        return Verdict("refuted", "N = 2: the sum differs from 2^N p^(N+1)", {"N": "2"})
    return Verdict("not refuted")


custom_step(
    "sec_6_random_functions.biased_mean",
    S6,
    "Biased null",
    DOC9,
    "sympy",
    "sum_f P[f] K_0(f) = 2^N (p^(N+1) + (1-p)^(N+1)) for f(x) i.i.d. Bernoulli(p), every N >= 1"
    " (symbolic N: x is zero-sensitive iff its N + 1 closed-neighbourhood values agree,"
    " linearity over the 2^N strings; every f on N = 1, 2, 3 bits summed as a check)",
    "2^N p^(N+1)",
    _biased_prove,
    _biased_twin,
    facts=("sec_6_random_functions.neighbourhoods",),
)
