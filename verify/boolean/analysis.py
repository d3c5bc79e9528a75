"""Exact sensitivity analysis of a Boolean function (exhaustive over all 2^N strings).

For f: {0,1}^N -> {0,1} and a string x, the sensitivity is s(x) = #{n : f(x) != f(x^(n))},
x^(n) being x with bit n flipped. The sensitivity profile is K_k = #{x : s(x) = k}, k = 0..N;
K_0 counts the zero-sensitivity strings. Average sensitivity (total influence, in [0, N], the
Hahn & Rofin convention) is as(f) = 2^-N sum_x s(x) = 2^-N sum_k k K_k. Every function here
takes a :class:`BooleanFunction` or a raw 0/1 truth table and runs in O(N 2^N) time with no
memory beyond the table (uint8, 1 byte per string) except :func:`sensitivity` (1 more byte).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from verify.boolean.function import BooleanFunction, as_table
from verify.boolean.kernels import profile_counts, sensitivity_into

TableLike = BooleanFunction | np.ndarray


def _table_n(f: TableLike) -> tuple[np.ndarray, int]:
    table = as_table(f)
    return table, int(table.shape[0]).bit_length() - 1


def sensitivity(f: TableLike) -> np.ndarray:
    """s(x) for every string x, as a uint8 array of length 2^N in index order."""
    table, n = _table_n(f)
    out = np.empty(table.shape[0], dtype=np.uint8)
    sensitivity_into(table, n, out)
    return out


def sensitivity_profile(f: TableLike) -> np.ndarray:
    """The profile K_0..K_N (int64, length N + 1): K_k = #{x : s(x) = k}; sum_k K_k = 2^N.
    A constant f has s(x) = 0 everywhere: K_0 = 2^N without the pass over the strings."""
    table, n = _table_n(f)
    if table.size and not np.any(table != table[0]):
        out = np.zeros(n + 1, dtype=np.int64)
        out[0] = table.size
        return out
    return profile_counts(table, n)


def zero_sensitivity_count(f: TableLike) -> int:
    """K_0 = #{x : f(x^(n)) = f(x) for every n}, the zero-sensitivity strings."""
    return int(sensitivity_profile(f)[0])


def min_sensitivity(f: TableLike) -> int:
    """min_x s(x)."""
    return int(np.flatnonzero(sensitivity_profile(f))[0])


def max_sensitivity(f: TableLike) -> int:
    """max_x s(x) (>= 1 iff f is not constant)."""
    return int(np.flatnonzero(sensitivity_profile(f))[-1])


def average_sensitivity_exact(f: TableLike) -> Fraction:
    """as(f) = 2^-N sum_k k K_k as an exact fraction."""
    return average_sensitivity_of_profile(sensitivity_profile(f))


def average_sensitivity_of_profile(profile: Sequence[int] | np.ndarray) -> Fraction:
    """as(f) = 2^-N sum_k k K_k from a profile K_0..K_N already computed (exact)."""
    n = len(profile) - 1
    return Fraction(sum(k * int(c) for k, c in enumerate(profile)), 1 << n)


def average_sensitivity(f: TableLike) -> float:
    """as(f) = 2^-N sum_x s(x) in [0, N] (total influence; Hahn & Rofin's convention).

    Computed from exact integer counts; the float64 result is the exact value correctly rounded.
    """
    return float(average_sensitivity_exact(f))


def normalized_average_sensitivity(f: TableLike) -> float:
    """as(f) / N in [0, 1] (the convention of Bhattamishra et al. 2023)."""
    profile = sensitivity_profile(f)
    n = profile.shape[0] - 1
    total = sum(k * int(c) for k, c in enumerate(profile))
    return float(Fraction(total, n << n))
