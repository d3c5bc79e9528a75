"""The Numba forward pass with diagnostics (``forward(..., engine="numba")``,
``verify.model.plain.diagnostics``) against the numpy pass: T, every layer norm's input
variance at every position and the readout vector agree to rtol 1e-12 on every spec option and
the extended (final_norm) layouts, and the eps = 0 undefined cases (NaN) fall on the same
strings and norms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params
from verify.model.plain.diagnostics import STRINGS_PER_BLOCK, pairwise_sum
from verify.strategies import SPEC_OPTION_GRID, adversarial_params, configs, params

RTOL = 1e-12


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    p = init_params(ModelConfig(d_model=2, n_layers=1, n_heads=1), "gaussian", seed=0)
    forward(p, np.zeros((1, 1), dtype=np.uint8), engine="numba")


def _assert_agree(p: Params, bits: np.ndarray) -> None:
    ref = forward(p, bits, diagnostics=True)
    got = forward(p, bits, diagnostics=True, engine="numba")
    assert got.var.shape == ref.var.shape == (bits.shape[0], p.config.n_norms, ref.var.shape[2])
    # NaN where the numpy pass has NaN (equal_nan), else within rtol
    scale = np.nanmax(np.abs(ref.T)) if np.isfinite(ref.T).any() else 1.0
    np.testing.assert_allclose(got.T, ref.T, rtol=RTOL, atol=RTOL * scale)
    # each norm's variances against the largest of that norm (like T and y_r): the two passes
    # round the layer-norm inputs differently in the last bits, and a variance far below the
    # others of its norm (near-cancelling inputs) carries that absolute error, not a relative one
    var_scale = np.where(np.isfinite(ref.var), ref.var, 0.0).max(axis=(0, 2))[None, :, None]
    assert np.array_equal(np.isnan(got.var), np.isnan(ref.var))
    ok = np.isnan(ref.var) | (np.abs(got.var - ref.var) <= RTOL * (np.abs(ref.var) + var_scale))
    assert ok.all(), (got.var[~ok], ref.var[~ok], var_scale)
    y_scale = np.nanmax(np.abs(ref.y_readout)) if np.isfinite(ref.y_readout).any() else 1.0
    np.testing.assert_allclose(got.y_readout, ref.y_readout, rtol=RTOL, atol=RTOL * y_scale)
    # the diagnostics derived from the variances are the same code on both
    np.testing.assert_allclose(got.beta, ref.beta, rtol=1e-10)
    np.testing.assert_allclose(got.beta_hr, ref.beta_hr, rtol=1e-10)


def _grid_config(i: int, n_layers: int, final_norm: bool | None = None) -> ModelConfig:
    norm_first, eps, affine, embedding, pos, eos = SPEC_OPTION_GRID[i]
    return ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, norm_first=norm_first, ln_eps=eps,
        ln_affine=affine, embedding=embedding, pos_encoding=pos, eos=eos, max_len=12,
        final_norm=final_norm,
    )  # fmt: skip


@pytest.mark.parametrize("i", range(len(SPEC_OPTION_GRID)))
def test_agrees_with_numpy_on_every_spec_option(i: int) -> None:
    for n_layers, n in ((1, 5), (2, 6), (3, 4)):
        p = init_params(_grid_config(i, n_layers), "gaussian", seed=i, scale=0.6)
        _assert_agree(p, all_bit_strings(n))


@pytest.mark.parametrize("i", range(len(SPEC_OPTION_GRID)))
def test_agrees_with_numpy_on_the_extended_layouts(i: int) -> None:
    norm_first = SPEC_OPTION_GRID[i][0]
    cfg = _grid_config(i, 2, final_norm=not norm_first)
    assert not cfg.spec_layout and cfg.n_norms == 2 * 2 + (0 if norm_first else 1)
    _assert_agree(init_params(cfg, "xavier_normal", seed=50 + i), all_bit_strings(5))


def test_blocks_of_strings_and_a_partial_last_block() -> None:
    """More strings than a block, not a multiple of it, in no particular order."""
    cfg = ModelConfig(d_model=12, n_layers=2, n_heads=3, d_ff=20, ln_eps=1e-5)
    p = init_params(cfg, "uniform", seed=3)
    bits = np.random.default_rng(7).integers(0, 2, size=(3 * STRINGS_PER_BLOCK + 5, 9))
    _assert_agree(p, bits)
    one = forward(p, bits[40:41], diagnostics=True, engine="numba")
    many = forward(p, bits, diagnostics=True, engine="numba")
    np.testing.assert_array_equal(one.var[0], many.var[40])  # a string's result: its own
    assert one.T[0] == many.T[40]


def _constant_ln_params(norm_first: bool) -> Params:
    """Token rows constant, no positions, attention and MLP outputs constant: at eps = 0 the
    first norm's input is exactly constant (var = 0, LN = 0/0)."""
    cfg = ModelConfig(
        d_model=4, n_layers=2, n_heads=1, pos_encoding="none", ln_eps=0.0, norm_first=norm_first
    )
    arrays = dict(init_params(cfg, "gaussian", seed=0))
    arrays["token_embedding"] = np.ones((3, 4))
    for layer in range(2):
        arrays[f"layers.{layer}.self_attn.out_proj.weight"] = np.zeros((4, 4))
        arrays[f"layers.{layer}.self_attn.out_proj.bias"] = np.full(4, 0.5)
    return Params(cfg, arrays)


@pytest.mark.parametrize("norm_first", [False, True])
def test_eps_zero_constant_layer_norm_input_is_nan_on_both(norm_first: bool) -> None:
    p = _constant_ln_params(norm_first)
    bits = all_bit_strings(3)
    got = forward(p, bits, diagnostics=True, engine="numba")
    assert np.all(got.var[:, 0, :] == 0) and np.all(np.isinf(got.z[:, 0, :]))
    assert np.all(np.isnan(got.T)) and not np.any(np.isfinite(got.beta))
    assert np.all(np.isnan(got.var[:, 1:, :]))  # every later norm's input is undefined
    _assert_agree(p, bits)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=params(configs(layouts="all", max_layers=3)))
def test_agrees_with_numpy_on_drawn_models(p: Params) -> None:
    _assert_agree(p, all_bit_strings(4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=adversarial_params(n_bits=3))
def test_undefined_strings_and_norms_match_on_adversarial_models(p: Params) -> None:
    """Near-constant and exactly constant layer-norm inputs, saturated softmax, ties: where a
    variance is exactly 0 or a value is NaN, the two passes agree (not only up to rtol)."""
    bits = all_bit_strings(3)
    ref = forward(p, bits, diagnostics=True)
    got = forward(p, bits, diagnostics=True, engine="numba")
    np.testing.assert_array_equal(np.isnan(got.T), np.isnan(ref.T))
    np.testing.assert_array_equal(np.isnan(got.var), np.isnan(ref.var))
    np.testing.assert_array_equal(got.var == 0, ref.var == 0)


def test_pairwise_sum_is_numpys_sum_exactly() -> None:
    rng = np.random.default_rng(0)
    for n in [*range(1, 140), 255, 256, 257, 1000, 4097]:
        a = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
        rows = np.tile(a, (2, 1))  # a reduction over the last axis, as the numpy pass's mean
        assert pairwise_sum(a) == rows.sum(axis=-1)[0], n
        assert pairwise_sum(a) / n == rows.mean(axis=-1)[0], n


def test_engine_must_be_known() -> None:
    p = init_params(ModelConfig(d_model=2, n_layers=1, n_heads=1), "gaussian", seed=0)
    with pytest.raises(ValidationError, match="engine"):
        forward(p, np.zeros((1, 2), dtype=np.uint8), engine="torch")
