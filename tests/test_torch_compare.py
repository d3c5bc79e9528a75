"""verify.torch.compare without torch: the tolerance of the user-vs-spec comparison, the one-line
message, and which strings are compared; and check-model's vacuous marks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.commands.check_model import _triviality
from verify.torch.compare import (
    ModelMismatchError,
    check_same_model,
    compare_outputs,
    comparison_strings,
)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tolerance_is_sqrt_unit_roundoff_times_scale(dtype: str) -> None:
    """tol = sqrt(u) (1 + max|T_spec|), u = eps(dtype) / 2: twice it is a mismatch naming the
    string and the difference, half of it is not."""
    bits = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 1]], dtype=np.uint8)
    spec = np.array([0.5, -2.0, 1.25])
    tol = math.sqrt(float(np.finfo(dtype).eps) / 2) * 3.0
    ok = compare_outputs(spec + np.array([0, 0.5 * tol, -0.5 * tol]), spec, bits, dtype, "x")
    assert ok.agrees and ok.tolerance == pytest.approx(tol, rel=1e-12)
    bad = compare_outputs(spec + np.array([0, 2 * tol, -3 * tol]), spec, bits, dtype, "x")
    assert not bad.agrees and bad.first_bad == "100"
    assert bad.largest == pytest.approx(3 * tol)
    with pytest.raises(ModelMismatchError, match=r"first at string 100 .*largest difference"):
        check_same_model(bad)
    assert len(bad.message().splitlines()) == 1


def test_undefined_outputs_must_match() -> None:
    """NaN (an undefined layer norm at eps = 0) agrees only with NaN."""
    bits = np.array([[0], [1]], dtype=np.uint8)
    spec = np.array([np.nan, 1.0])
    assert compare_outputs(np.array([np.nan, 1.0]), spec, bits, "float64", "x").agrees
    one_sided = compare_outputs(np.array([0.0, 1.0]), spec, bits, "float64", "x")
    assert one_sided.first_bad == "0"


def test_comparison_strings() -> None:
    """All strings for N <= 12; for N = 14 a seeded sample plus the nearest to the threshold."""
    assert np.array_equal(comparison_strings(12, None, 0), np.arange(4096))
    t = np.linspace(-1, 1, 1 << 14) + 1e-3
    idx = comparison_strings(14, t, seed=5, sample=100, near=10)
    nearest = np.argsort(np.abs(t))[:10]
    assert set(nearest) <= set(idx) and 100 <= idx.size <= 110
    assert np.array_equal(idx, comparison_strings(14, t, seed=5, sample=100, near=10))
    assert not np.array_equal(idx, comparison_strings(14, t, seed=6, sample=100, near=10))


def test_vacuous_exactly_when_no_better_than_trivial() -> None:
    assert _triviality(2.0, 2.0, "{b} >= {t}") == {
        "bound": 2.0, "trivial_bound": 2.0, "vacuous": True, "why_vacuous": "2.0 >= 2.0"
    }  # fmt: skip
    assert _triviality(1.5, 2.0, "{b} >= {t}")["vacuous"] is False
