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
    matvec_mid(x, w, bias, r0, r0 + rows, out)
    assert np.all(np.isnan(out[rows]))  # nothing written past the rows asked for
    for j in range(rows):
        for b in (0, 7, 8, BS - 1):
            exact = Fraction(bias[r0 + j]) + sum(
                Fraction(w[r0 + j, k]) * Fraction(x[k, b]) for k in range(n)
            )
            mag = abs(bias[r0 + j]) + float(np.sum(np.abs(w[r0 + j]) * np.abs(x[:, b])))
            assert abs(Fraction(out[j, b]) - exact) <= Fraction((n + 2) * U * mag)
