"""The register-blocked product (``kernels.simd`` through ``dense.matvec_mid``) stays within
the rounding bound the scalar radii assume: |fl - exact| <= (n + 2) U (|b| + sum |w| |x|)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from verify.model.kernels.bundles import BS
from verify.model.kernels.dense import matvec_mid
from verify.model.rounding import U


@pytest.mark.parametrize(("rows", "n", "r0"), [(16, 64, 0), (64, 16, 0), (29, 7, 3), (3, 1, 1)])
def test_matvec_mid_within_bound(rows: int, n: int, r0: int) -> None:
    rng = np.random.default_rng(rows * 100 + n)
    w = rng.normal(size=(rows + r0 + 2, n)) * rng.choice([1e-8, 1.0, 1e8], size=(rows + r0 + 2, n))
    x = rng.normal(size=(n, BS))
    bias = rng.normal(size=rows + r0 + 2)
    out = np.full((rows + 1, BS), np.nan)
    matvec_mid(x, np.ascontiguousarray(w.T), bias, r0, r0 + rows, out)
    assert np.all(np.isnan(out[rows]))  # nothing written past the rows asked for
    for j in range(rows):
        for b in (0, 7, 8, BS - 1):
            exact = Fraction(bias[r0 + j]) + sum(
                Fraction(w[r0 + j, k]) * Fraction(x[k, b]) for k in range(n)
            )
            mag = abs(bias[r0 + j]) + float(np.sum(np.abs(w[r0 + j]) * np.abs(x[:, b])))
            assert abs(Fraction(out[j, b]) - exact) <= Fraction((n + 2) * U * mag)


@pytest.mark.parametrize(("d", "f", "n_heads", "i", "lo_q"),
                         [(16, 64, 2, 20, False), (21, 13, 3, 1, True), (5, 8, 1, 4, True),
                          (16, 64, 2, 5, False)])  # fmt: skip
def test_mlp_from_tables_matches_the_passes(d: int, f: int, n_heads: int, i: int, lo_q: bool):
    """The fused layer-0 MLP gives bit for bit what the separate passes give."""
    from verify.model.kernels.dense import col_absmax, relu_scalar
    from verify.model.kernels.tables import add_weighted, fill_rows, mlp_from_tables

    rng = np.random.default_rng(d + f + i)
    width, off = d + 1 + f, d + 1
    lo = rng.normal(size=(n_heads, width, BS))
    hi = rng.normal(size=(2, n_heads, width))
    iv = rng.random(size=(n_heads, BS)) + 0.1
    z = rng.random(size=BS) * 3
    g0a, g0b, c0 = rng.normal(size=f), rng.normal(size=f), rng.normal(size=f)
    w2, b2 = rng.normal(size=(d, f)), rng.normal(size=d)
    lo[0, off + 1, 3] = np.nan  # a NaN stays in its string's output, and max skips it
    hid = np.empty((f, BS))
    fill_rows(hid, g0a, g0b, i, lo_q)
    for hd in range(n_heads):
        add_weighted(hid, lo[hd], off, hi[0, hd], hi[1, hd], off, f, iv[hd], i, lo_q)
    hid = hid * z + c0[:, None]
    relu_scalar(hid)
    want = np.empty((d, BS))
    matvec_mid(hid, np.ascontiguousarray(w2.T), b2, 0, d, want)
    want_max = np.empty(BS)
    col_absmax(hid, want_max)
    out, xmax = np.empty((d, BS)), np.empty(BS)
    mlp_from_tables(
        lo, off, hi, iv, z, g0a, g0b, c0, np.ascontiguousarray(w2.T), b2, out, xmax, i, lo_q
    )
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(xmax, want_max)
