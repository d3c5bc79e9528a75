"""Thm 4.5's exponent and the Borel-Cantelli series behind it (eps = 0).

Thm 4.5 (reconstruction): for theta ~ Unif(Theta), almost surely K_0(N) >= N^e for all large N,
with e = (D - 1)/(2L) - 5. Below the smallest N with N^e <= 2^N the bound cannot hold for any
function, so "large N" has not started (:func:`smallest_biting_n`).

The proof's first Borel-Cantelli step needs sum_N P[E_N] < inf for the bad event E_N (some string
of a fixed family of ceil(N^e) strings, or a neighbour, has beta > N^{zeta/2});
:func:`bad_event_series_term` is the explicit bound a_N on P[E_N] (docs/derivations_eps_zero.md
section 5) and :func:`bad_event_series_order` finds its order N^p (log N)^q and lets sympy decide
convergence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from verify.theory.small_ball import small_ball_constant
from verify.validation import check_int

__all__ = [
    "SeriesOrder",
    "bad_event_probability_bound",
    "bad_event_series_order",
    "bad_event_series_term",
    "rational_constant",
    "smallest_biting_n",
    "theorem_bound",
    "theorem_exponent",
    "theorem_exponent_exact",
]


@lru_cache(maxsize=256)
def rational_constant(x: float) -> sp.Rational:
    """``sp.nsimplify(x, rational=True)``: the float constant as the rational sympy finds for it
    (a small-denominator identification, else its decimal string), cached: nsimplify is a pure
    function of the float and runs a pslq search each time."""
    return sp.nsimplify(x, rational=True)


def theorem_exponent(d_model: int, n_layers: int) -> float:
    """Thm 4.5's exponent e = (D - 1)/(2L) - 5."""
    return (check_int("d_model", d_model, minimum=2) - 1) / (
        2 * check_int("n_layers", n_layers, minimum=1)
    ) - 5


def theorem_exponent_exact(d_model: int, n_layers: int) -> Fraction:
    """Thm 4.5's exponent e = (D - 1)/(2L) - 5 as an exact rational."""
    d = check_int("d_model", d_model, minimum=2)
    return Fraction(d - 1, 2 * check_int("n_layers", n_layers, minimum=1)) - 5


def theorem_bound(d_model: int, n_layers: int, n_bits: int) -> float:
    """Thm 4.5's bound N^e, e = (D-1)/(2L) - 5 (:func:`theorem_exponent`): K_0(f) >= N^e for
    every f recognised with margin, all large N."""
    return float(check_int("n_bits", n_bits, minimum=1)) ** theorem_exponent(d_model, n_layers)


def smallest_biting_n(exponent: float | Fraction, n_max: int = 100_000) -> int | None:
    """Smallest N >= 2 with N^e <= 2^N (below it K_0 >= N^e is impossible, so the theorem's
    "sufficiently large N" cannot have started); None if beyond n_max. A rational exponent
    (:func:`theorem_exponent_exact`) is decided exactly, in integers (N^p <= 2^(N q) for
    e = p/q): at a tie N^e = 2^N (e = 32/5, N = 32) float logarithms can round either way."""
    if isinstance(exponent, Fraction):
        p, q = exponent.numerator, exponent.denominator
        for n in range(2, n_max + 1):
            if p <= 0 or n**p <= 2 ** (n * q):
                return n
        return None
    for n in range(2, n_max + 1):
        if exponent * math.log(n) <= n * math.log(2):
            return n
    return None


def bad_event_series_term(
    d_model: int, n_layers: int, exponent: sp.Expr, zeta: sp.Expr, box: float
) -> tuple[sp.Expr, sp.Symbol]:
    """Explicit upper bound a_N on P[E_N] (docs/derivations_eps_zero.md section 5):
    E_N = {some string of a fixed family of ceil(N^e) strings, or a neighbour, has
    beta > N^{zeta/2}}, and with alpha = D - 1, K = 2L, C = C_SB(D, 2B),

        a_N = 2 N^e (N + 1) 2^{alpha K} (1 + (N + 1) C)^K N^{-zeta alpha / 2}
              sum_{j < K} (alpha zeta log(N) / 2)^j / j!.
    """
    n = sp.Symbol("N", positive=True)
    alpha = d_model - 1
    big_k = 2 * n_layers
    c = rational_constant(small_ball_constant(d_model, 2.0 * box))
    poly = sum(
        (sp.Rational(alpha) * zeta * sp.log(n) / 2) ** j / sp.factorial(j) for j in range(big_k)
    )
    term = (
        2
        * n**exponent
        * (n + 1)
        * 2 ** (alpha * big_k)
        * (1 + (n + 1) * c) ** big_k
        * n ** (-zeta * alpha / 2)
        * poly
    )
    return term, n


def bad_event_probability_bound(d_model: int, n_layers: int, n_bits: int, box: float) -> float:
    """min(1, a_N) at N = ``n_bits`` with the paper's exponent e = (D-1)/(2L) - 5 and zeta =
    (D-2)/(D-1) (:func:`bad_event_series_term`): a bound on P[E_N] for theta ~ Unif[-B, B]^M."""
    n_bits = check_int("n_bits", n_bits, minimum=2)
    e = sp.Rational(d_model - 1, 2 * n_layers) - 5
    zeta = sp.Rational(d_model - 2, d_model - 1)
    term, n = bad_event_series_term(d_model, n_layers, e, zeta, box)
    value = term.subs(n, n_bits)
    return 1.0 if bool(value >= 1) else float(value)


@dataclass(frozen=True)
class SeriesOrder:
    """The order a_N ~ N^p (log N)^q of the bad-event series at the paper's exponent."""

    exponent: sp.Rational  # e = (D-1)/(2L) - 5
    zeta: sp.Rational  # (D-2)/(D-1)
    order: sp.Expr  # p = e + 1 + K - zeta (D-1)/2
    log_power: int  # q = K - 1
    limit_ratio: sp.Expr  # lim a_N / (N^p (log N)^q): finite and positive if p, q are the order
    convergent: bool  # sympy: sum_{N >= 2} N^p (log N)^q converges
    exponent_limit: float  # e* = zeta (D-1)/2 - 2L - 2: the largest e with a summable series

    @property
    def settled(self) -> bool:
        """sympy proved both the order (limit ratio finite, positive) and the convergence."""
        ratio = self.limit_ratio
        return self.convergent and bool(ratio.is_finite and ratio.is_positive)


def bad_event_series_order(d_model: int, n_layers: int, box: float) -> SeriesOrder:
    """Thm 4.5's bad-event series at e = (D-1)/(2L) - 5, zeta = (D-2)/(D-1): its order
    N^p (log N)^q (checked by a sympy limit of the ratio) and sympy's convergence verdict on
    sum N^p (log N)^q (comparison test: a_N is summable iff it is)."""
    e = sp.Rational(d_model - 1, 2 * n_layers) - 5
    zeta = sp.Rational(d_model - 2, d_model - 1)
    term, n = bad_event_series_term(d_model, n_layers, e, zeta, box=box)
    big_k = 2 * n_layers
    p = sp.nsimplify(e + 1 + big_k - zeta * (d_model - 1) / 2)
    q = big_k - 1
    comparison = n**p * sp.log(n) ** q
    ratio = sp.limit(term / comparison, n, sp.oo)
    m = sp.Symbol("m", positive=True, integer=True)
    conv = bool(sp.Sum(comparison.subs(n, m), (m, 2, sp.oo)).is_convergent())
    e_star = float(zeta * (d_model - 1) / 2 - big_k - 2)
    return SeriesOrder(e, zeta, p, q, ratio, conv, e_star)
