"""The exhaustive kernel (layer 0 from low/high tables, scalar radii) against the per-string
kernel and against arb: same values, and every radius encloses the exact T."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.exhaustive import exhaustive_T, prepare_exhaustive
from verify.model.fast import fast_T
from verify.model.reference import reference_forward
from verify.strategies import SPEC_OPTION_GRID, adversarial_params, configs, params


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    p = init_params(ModelConfig(d_model=2, n_layers=1, n_heads=1), "gaussian", seed=0)
    exhaustive_T(p, 1)
    fast_T(p, np.zeros((1, 1), dtype=np.uint8))


def _grid_config(i: int, n_layers: int) -> ModelConfig:
    norm_first, eps, affine, embedding, pos, eos = SPEC_OPTION_GRID[i]
    return ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, norm_first=norm_first, ln_eps=eps,
        ln_affine=affine, embedding=embedding, pos_encoding=pos, eos=eos, max_len=12,
    )  # fmt: skip


def _exact_T(p: Params, bits: np.ndarray) -> list[mpmath.mpf]:
    with mpmath.workdps(60):
        return list(reference_forward(p, bits, dps=60).T)


def _within(t: float, r: float, exact: mpmath.mpf) -> bool:
    with mpmath.workprec(4000):
        return abs(mpmath.mpf(t) - exact) <= mpmath.mpf(r)


@pytest.mark.parametrize("i", range(len(SPEC_OPTION_GRID)))
def test_agrees_with_the_per_string_kernel_on_every_spec_option(i: int) -> None:
    for n_layers, n in ((1, 3), (2, 7), (3, 6)):
        p = init_params(_grid_config(i, n_layers), "gaussian", seed=i, scale=0.6)
        t, r = exhaustive_T(p, n)
        t_ref, _ = fast_T(p, all_bit_strings(n), bounds=False)
        ok = np.isfinite(t_ref)
        assert np.array_equal(ok, np.isfinite(t))
        scale = np.maximum(1.0, np.abs(t_ref[ok]))
        assert np.all(np.abs(t[ok] - t_ref[ok]) <= 1e-11 * scale + r[ok])
        t_plain, r_plain = exhaustive_T(p, n, bounds=False)
        assert np.array_equal(t_plain[ok], t[ok])
        assert not r_plain.any()


@pytest.mark.parametrize("i", range(0, len(SPEC_OPTION_GRID), 5))
def test_radius_encloses_the_exact_value(i: int) -> None:
    for n_layers, n in ((1, 7), (2, 4)):
        p = init_params(_grid_config(i, n_layers), "gaussian", seed=100 + i, scale=0.6)
        t, r = exhaustive_T(p, n)
        idx = np.random.default_rng(i).choice(1 << n, size=4, replace=False)
        exact = _exact_T(p, all_bit_strings(n)[idx])
        for k, value in zip(idx, exact, strict=True):
            if np.isfinite(t[k]) and np.isfinite(r[k]):
                assert _within(t[k], r[k], value), (t[k], r[k], value)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=adversarial_params(n_bits=3), n=st.sampled_from([2, 3]))
def test_radius_encloses_the_exact_value_on_adversarial_parameters(p: Params, n: int) -> None:
    t, r = exhaustive_T(p, n)
    exact = _exact_T(p, all_bit_strings(n))
    for k, value in enumerate(exact):
        if mpmath.isnan(value):  # an undefined layer norm (eps = 0, constant input)
            assert not (np.isfinite(t[k]) and np.isfinite(r[k]))
        elif np.isfinite(t[k]) and np.isfinite(r[k]):
            assert _within(t[k], r[k], value), (t[k], r[k], value)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=params(configs(max_layers=3, eps=(0.0, 1e-5)), max_scale=2.0))
def test_chunks_and_tables_give_the_same_values(p: Params) -> None:
    n = 8
    tables = prepare_exhaustive(p, n)
    t, r = exhaustive_T(p, n, tables=tables)
    t2, r2 = exhaustive_T(p, n, tables=tables, start=64, stop=192)
    np.testing.assert_array_equal(t2, t[64:192])
    np.testing.assert_array_equal(r2, r[64:192])


def test_rejects_unaligned_ranges() -> None:
    p = init_params(ModelConfig(d_model=4, n_layers=1, n_heads=1), "gaussian", seed=0)
    with pytest.raises(ValidationError, match="start.*multiple of 64"):
        exhaustive_T(p, 8, start=3)
    with pytest.raises(ValidationError, match="stop.*multiple of 64"):
        exhaustive_T(p, 8, start=0, stop=512)
