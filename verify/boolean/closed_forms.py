"""Closed forms K_n(N) of the sensitivity profiles of the built-in families (sympy).

Each expression is in the symbols ``N`` (input length), ``n`` (sensitivity level, 0..N) and,
where the family has them, ``m`` (size of the relevant subset) and ``k`` (threshold / modulus).
The derivations are elementary; for a symmetric function g of the weight w = |x|, a string of
weight w has sensitivity w [g(w) != g(w-1)] + (N - w) [g(w) != g(w+1)], which gives:

* PARITY: K_n = 2^N [n = N].  m-sparse PARITY: K_n = 2^N [n = m].
* DICTATOR, FIRST: K_n = 2^N [n = 1].  CONSTANT: K_n = 2^N [n = 0].
* THRESHOLD_k ([w >= k]): the C(N, k) strings of weight k have s = k, the C(N, k-1) of weight
  k-1 have s = N-k+1, all others s = 0. AND = THRESHOLD_N, OR = THRESHOLD_1, MAJORITY =
  THRESHOLD_{(N+1)/2} for odd N (K_0 = 2^N - 2 C(N, (N-1)/2)), THRESHOLD_{N/2+1} (tie "zero") or
  THRESHOLD_{N/2} (tie "one") for even N.
* m-sparse MAJORITY: 2^(N-m) times the m-bit MAJORITY profile.
* INNER PRODUCT (even N): flipping x_j changes the output iff its partner bit is 1, so s(x) = |x|
  and K_n = C(N, n).
* MOD_k (k >= 3, [w = 0 mod k]): s = N for w = 0, s = w for w = 1, s = N - w for w = k-1 (mod k),
  else 0. MOD_2 is the negation of PARITY.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from verify.boolean.families import get_family, make_family, resolve_subset
from verify.boolean.function import check_n
from verify.errors import ValidationError

N, n, m, k = sp.symbols("N n m k", integer=True, nonnegative=True)
_j = sp.Symbol("j", integer=True, nonnegative=True)


def _delta(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return sp.KroneckerDelta(a, b)


def threshold_expression(length: sp.Expr = N, kk: sp.Expr = k) -> sp.Expr:
    """K_n of THRESHOLD_kk ([|x| >= kk]) on ``length`` bits."""
    a = sp.binomial(length, kk)
    b = sp.binomial(length, kk - 1)
    return a * _delta(n, kk) + b * _delta(n, length - kk + 1) + (2**length - a - b) * _delta(n, 0)


def _majority_k(length: sp.Expr, tie: str) -> sp.Expr:
    even = length / 2 + 1 if tie == "zero" else length / 2
    return sp.Piecewise(((length + 1) / 2, sp.Eq(sp.Mod(length, 2), 1)), (even, True))


def _mod_expression(kk: int) -> sp.Expr:
    if kk == 2:
        return 2**N * _delta(n, N)

    def s_r(r: int) -> sp.Expr:
        return sp.Sum(sp.binomial(N, kk * _j + r), (_j, 0, N))

    def congruent(expr: sp.Expr, r: int) -> sp.Expr:
        return sp.Piecewise((1, sp.Eq(sp.Mod(expr, kk), r)), (0, True))

    return (
        _delta(n, N) * s_r(0)
        + congruent(n, 1) * sp.binomial(N, n)
        + congruent(N - n, kk - 1) * sp.binomial(N, n)
        + _delta(n, 0) * (2**N - s_r(0) - s_r(1) - s_r(kk - 1))
    )


# family name -> (params (with defaults applied), N) -> (expression, substitutions)
_Builder = Callable[[dict[str, Any], int], tuple[sp.Expr, dict[sp.Symbol, int]]]
_CLOSED: dict[str, _Builder] = {
    "parity": lambda p, nn: (2**N * _delta(n, N), {}),
    "sparse_parity": lambda p, nn: (
        2**N * _delta(n, m),
        {m: len(resolve_subset(nn, p["m"], p["subset"], min(nn, 3)))},
    ),
    "dictator": lambda p, nn: (2**N * _delta(n, 1), {}),
    "first": lambda p, nn: (2**N * _delta(n, 1), {}),
    "constant": lambda p, nn: (2**N * _delta(n, 0), {}),
    "threshold": lambda p, nn: (
        threshold_expression(),
        {k: nn // 2 + 1 if p["k"] is None else p["k"]},
    ),
    "majority": lambda p, nn: (threshold_expression(N, _majority_k(N, p["tie"])), {}),
    "sparse_majority": lambda p, nn: (
        2 ** (N - m) * threshold_expression(m, _majority_k(m, p["tie"])),
        {m: len(resolve_subset(nn, p["m"], p["subset"], min(nn, 3)))},
    ),
    "and": lambda p, nn: (threshold_expression(N, N), {}),
    "or": lambda p, nn: (threshold_expression(N, sp.Integer(1)), {}),
    "inner_product": lambda p, nn: (sp.binomial(N, n), {}),
    "mod": lambda p, nn: (_mod_expression(int(p["k"])), {}),
}


def has_closed_form(family: str) -> bool:
    """Whether :func:`profile_expression` knows the family: a built-in closed form or one the
    family declares (``register_family(..., closed_form=...)``); random has none."""
    return family in _CLOSED or get_family(family).closed_form is not None


def _expression_and_values(
    family: str, n_bits: int, params: dict[str, Any]
) -> tuple[sp.Expr, dict[sp.Symbol, int]]:
    fam = get_family(family)
    if not has_closed_form(family):
        raise ValidationError(
            "family", "a family with a closed form: " + ", ".join(closed_form_families()), family
        )
    check_n(n_bits)
    make_family(family, n_bits, **params)  # validates the parameters as the family does
    if family in _CLOSED:
        return _CLOSED[family]({**fam.defaults, **params}, n_bits)
    expr = sp.sympify(fam.closed_form(n_bits, **{**fam.defaults, **params}))
    unknown = expr.free_symbols - {N, n, m, k}
    if unknown:
        raise ValidationError(
            "closed_form", f"an expression in N and n (family {family})", sorted(map(str, unknown))
        )
    return expr, {}


def closed_form_families() -> list[str]:
    """The registered families with a closed-form profile, sorted."""
    from verify.boolean.families import family_names

    return [name for name in family_names() if has_closed_form(name)]


def profile_expression(family: str, n_bits: int, **params: Any) -> sp.Expr:
    """The sympy expression of K_n(N) for ``family`` with ``params`` (m and k substituted;
    ``n_bits`` fixes the subset size where the family derives m from N)."""
    expr, values = _expression_and_values(family, n_bits, params)
    return expr.subs(values)


def _exact_int(value: float | int) -> int:
    as_int = int(value)
    if as_int != value:
        raise ArithmeticError(f"closed form produced a non-integer {value!r}")
    return as_int


def _binomial(a: float | int, b: float | int) -> int:
    a, b = _exact_int(a), _exact_int(b)
    return math.comb(a, b) if 0 <= b <= a else 0


_NUMERIC = {"binomial": _binomial, "KroneckerDelta": lambda a, b: int(a == b)}


@functools.lru_cache(maxsize=64)
def _compiled(expr: sp.Expr) -> Callable[..., float | int]:
    return sp.lambdify((N, n, m, k), expr, modules=[_NUMERIC, "math"])


def closed_form_profile(family: str, n_bits: int, **params: Any) -> np.ndarray:
    """K_0..K_N (int64) evaluated from the closed form at N = ``n_bits``.

    The expression is compiled with ``sympy.lambdify`` to exact Python integer arithmetic
    (binomials via math.comb; the only non-integers are the half-integers (N+1)/2, exact in
    float64 and checked to be integral before use).
    """
    expr, values = _expression_and_values(family, n_bits, params)
    fn = _compiled(expr)
    mv, kv = values.get(m, 0), values.get(k, 0)
    return np.array(
        [_exact_int(fn(n_bits, level, mv, kv)) for level in range(n_bits + 1)], dtype=np.int64
    )
