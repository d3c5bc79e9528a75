"""Exact sensitivity and Fourier kernels against brute force, boofun and each other."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.boolean import (
    average_sensitivity,
    average_sensitivity_exact,
    fourier_coefficients,
    fourier_degree,
    influences,
    make_family,
    max_sensitivity,
    min_sensitivity,
    normalized_average_sensitivity,
    sensitivity,
    sensitivity_profile,
    total_influence,
    total_influence_exact,
    walsh_hadamard,
    zero_sensitivity_count,
)
from verify.boolean.fourier import influence_numerators
from verify.errors import ValidationError


def brute_sensitivity(table: np.ndarray) -> list[int]:
    """s(x) by definition, in plain Python."""
    size = len(table)
    n = size.bit_length() - 1
    return [sum(int(table[x]) != int(table[x ^ (1 << i)]) for i in range(n)) for x in range(size)]


def brute_walsh(table: np.ndarray) -> list[int]:
    size = len(table)
    return [
        sum((-1) ** (int(table[x]) + bin(s & x).count("1")) for x in range(size))
        for s in range(size)
    ]


@st.composite
def tables(draw: st.DrawFn) -> np.ndarray:
    """A truth table on 1..8 bits: uniform, or biased towards one value (many K_0 strings)."""
    n = draw(st.integers(1, 8))
    p_one = draw(st.sampled_from([0.5, 0.05, 0.95, 0.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return (rng.random(1 << n) < p_one).astype(np.uint8)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_sensitivity_kernels_match_brute_force(table):
    n = len(table).bit_length() - 1
    s = brute_sensitivity(table)
    np.testing.assert_array_equal(sensitivity(table), s)
    profile = sensitivity_profile(table)
    assert profile.dtype == np.int64 and profile.shape == (n + 1,)
    np.testing.assert_array_equal(profile, np.bincount(s, minlength=n + 1))
    assert zero_sensitivity_count(table) == s.count(0)
    assert min_sensitivity(table) == min(s) and max_sensitivity(table) == max(s)
    assert average_sensitivity_exact(table) == Fraction(sum(s), len(s))
    assert normalized_average_sensitivity(table) == pytest.approx(sum(s) / len(s) / n)


@settings(max_examples=40, deadline=None)
@given(tables())
def test_fourier_matches_brute_force_and_total_influence_is_average_sensitivity(table):
    n = len(table).bit_length() - 1
    w = walsh_hadamard(table)
    np.testing.assert_array_equal(w, brute_walsh(table))
    assert int((w.astype(object) ** 2).sum()) == 4**n  # Parseval, exactly
    expected_degree = max((bin(s).count("1") for s in range(len(w)) if w[s]), default=0)
    assert fourier_degree(table) == expected_degree
    # influences: spectral definition == combinatorial definition, exactly
    c_f, d_f = influence_numerators(table, "fourier")
    c_d, d_d = influence_numerators(table, "direct")
    assert [Fraction(int(a), d_f) for a in c_f] == [Fraction(int(a), d_d) for a in c_d]
    assert total_influence_exact(table) == average_sensitivity_exact(table)
    assert total_influence(table) == average_sensitivity(table)
    np.testing.assert_allclose(fourier_coefficients(table), w / 2**n, rtol=0, atol=0)


@pytest.mark.slow  # importing boofun JIT-compiles its kernels: 10-20 s on this machine
def test_against_boofun_oracle():
    bf = pytest.importorskip("boofun")
    from boofun.analysis import sensitivity as bsens

    rng = np.random.default_rng(3)
    for n in (1, 3, 6, 9):
        for _ in range(3):
            table = rng.integers(0, 2, 1 << n, dtype=np.uint8)
            g = bf.create(table.astype(bool).tolist(), n=n)
            np.testing.assert_array_equal(sensitivity(table), bsens.sensitivity_profile(g))
            assert average_sensitivity(table) == pytest.approx(bsens.average_sensitivity(g))
            assert max_sensitivity(table) == bsens.max_sensitivity(g)
            assert min_sensitivity(table) == bsens.min_sensitivity(g)
            np.testing.assert_allclose(influences(table), g.influences(), atol=1e-12)


def test_families_spot_values():
    assert sensitivity_profile(make_family("parity", 5)).tolist() == [0, 0, 0, 0, 0, 32]
    assert influences(make_family("dictator", 4, i=3)).tolist() == [0, 0, 1, 0]
    assert fourier_degree(make_family("sparse_parity", 9, subset=[2, 5])) == 2
    assert fourier_degree(make_family("constant", 4, value=1)) == 0
    assert total_influence(make_family("majority", 3)) == 1.5


def test_accepts_function_or_table_and_validates():
    f = make_family("and", 3)
    assert sensitivity_profile(f).tolist() == sensitivity_profile(f.table).tolist()
    with pytest.raises(ValidationError, match="f"):
        sensitivity_profile(np.array([0, 1, 2, 0]))
    with pytest.raises(ValidationError, match="method"):
        influences(f, method="magic")


@pytest.mark.parametrize("n", [6, 12, 20])
def test_bit_parallel_profile_matches_the_per_string_sensitivities(n):
    """The packed profile (n >= 6: 64 strings a word, bit-sliced counters) against the
    per-string kernel's s(x), on tables whose counts fill every plane up to n: uniform,
    biased both ways, PARITY (s = n everywhere) and MAJORITY."""
    from verify.boolean.kernels import profile_counts, sensitivity_into

    rng = np.random.default_rng(n)
    cases = [(rng.random(1 << n) < p).astype(np.uint8) for p in (0.5, 0.01, 0.99)]
    cases += [make_family("parity", n).table, make_family("majority", n).table]
    for table in cases:
        s = np.empty_like(table)
        sensitivity_into.serial(table, n, s)
        want = np.bincount(s, minlength=n + 1)
        np.testing.assert_array_equal(profile_counts.serial(table, n), want)
        np.testing.assert_array_equal(profile_counts.parallel()(table, n), want)


def test_serial_and_parallel_builds_agree_and_are_cached_apart():
    from verify.boolean.kernels import profile_counts, sensitivity_into

    table = np.random.default_rng(8).integers(0, 2, 1 << 17, dtype=np.uint8)
    np.testing.assert_array_equal(
        profile_counts.serial(table, 17), profile_counts.parallel()(table, 17)
    )
    a, b = np.empty_like(table), np.empty_like(table)
    sensitivity_into.serial(table, 17, a)
    sensitivity_into.parallel()(table, 17, b)
    np.testing.assert_array_equal(a, b)
    # Numba's cache key ignores the parallel flag: the builds must have distinct names
    assert (
        profile_counts.parallel().py_func.__qualname__ != profile_counts.serial.py_func.__qualname__
    )
