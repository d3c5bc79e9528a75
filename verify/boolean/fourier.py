"""Fourier analysis on {0,1}^N via the fast Walsh-Hadamard transform (exact, in int64).

With F(x) = (-1)^f(x), the Fourier coefficients are hat F(S) = 2^-N sum_x F(x) (-1)^{S.x}
for S subset of {1..N} (S given as an index in the model-spec bit order). We keep the integer
W[S] = 2^N hat F(S). Parseval: sum_S W[S]^2 = 4^N. The influence of variable i is
Inf_i(f) = Pr_x[f(x) != f(x^(i))] = sum_{S containing i} hat F(S)^2, and the total influence
I(f) = sum_i Inf_i = sum_S |S| hat F(S)^2 equals the average sensitivity.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from verify.boolean.analysis import TableLike, _table_n
from verify.boolean.function import check_n
from verify.boolean.kernels import (
    fourier_weight_by_variable,
    influence_counts,
    max_popcount_nonzero,
    walsh_hadamard_inplace,
)
from verify.validation import check_choice

#: int64 spectrum of 2^N entries: 512 MiB at N = 26.
MAX_FOURIER_N = 26


def walsh_hadamard(f: TableLike) -> np.ndarray:
    """W[S] = sum_x (-1)^(f(x) + S.x) (int64, length 2^N); hat F(S) = W[S] / 2^N."""
    table, n = _table_n(f)
    check_n(n, maximum=MAX_FOURIER_N)
    w = 1 - 2 * table.astype(np.int64)
    walsh_hadamard_inplace(w)
    return w


def fourier_coefficients(f: TableLike) -> np.ndarray:
    """hat F(S) = W[S] / 2^N as float64 (exact: W[S] is an integer below 2^53 for N <= 26)."""
    table, n = _table_n(f)
    return walsh_hadamard(table).astype(np.float64) / float(1 << n)


def influence_numerators(f: TableLike, method: str = "fourier") -> tuple[np.ndarray, int]:
    """(c, d) with Inf_i = c[i] / d exactly.

    method "fourier": c[i] = sum_{S containing i} W[S]^2, d = 4^N (spectral definition);
    method "direct": c[i] = #{x : f(x) != f(x^(i))}, d = 2^N (combinatorial definition).
    """
    check_choice("method", method, ("fourier", "direct"))
    table, n = _table_n(f)
    if method == "direct":
        return influence_counts(table, n), 1 << n
    return fourier_weight_by_variable(walsh_hadamard(table), n), 1 << (2 * n)


def influences(f: TableLike, method: str = "fourier") -> np.ndarray:
    """Inf_i(f) for i = 1..N (float64, each the correctly rounded exact value)."""
    c, d = influence_numerators(f, method)
    return np.array([float(Fraction(int(v), d)) for v in c], dtype=np.float64)


def total_influence_exact(f: TableLike, method: str = "fourier") -> Fraction:
    """I(f) = sum_i Inf_i(f) as an exact fraction."""
    c, d = influence_numerators(f, method)
    return Fraction(sum(int(v) for v in c), d)


def total_influence(f: TableLike, method: str = "fourier") -> float:
    """I(f) = sum_S |S| hat F(S)^2 (= average sensitivity), correctly rounded."""
    return float(total_influence_exact(f, method))


def fourier_degree(f: TableLike) -> int:
    """deg(f) = max{|S| : hat F(S) != 0} of F = (-1)^f (0 for constants)."""
    return int(max_popcount_nonzero(walsh_hadamard(f)))
