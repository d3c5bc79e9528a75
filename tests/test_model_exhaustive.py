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


def _post_attention_reference(p: Params, layer: int, y: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The layer's output at one position from its residual input y and attention output a
    (after out_proj), float64, one string per column (d, nb)."""
    cfg = p.config
    pre = f"layers.{layer}."

    def norm(v: np.ndarray, name: str) -> np.ndarray:
        c = v - v.mean(axis=0)
        out = c / np.sqrt((c * c).mean(axis=0) + cfg.ln_eps)
        if cfg.ln_affine:
            out = out * p[pre + name + ".weight"][:, None] + p[pre + name + ".bias"][:, None]
        return out

    def ffn(h: np.ndarray) -> np.ndarray:
        u = p[pre + "linear1.weight"] @ h + p[pre + "linear1.bias"][:, None]
        return p[pre + "linear2.weight"] @ np.maximum(u, 0.0) + p[pre + "linear2.bias"][:, None]

    if cfg.norm_first:
        h = y + a
        return h + ffn(norm(h, "norm2"))
    h = norm(y + a, "norm1")
    return norm(h + ffn(h), "norm2")


def _finish_layer_1(
    p: Params, y: np.ndarray, ry: np.ndarray, a: np.ndarray, ra: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``finish_position_scalar`` at layer 1 on copies of (y, ry), (a, ra): (output, radius)."""
    from verify.model.kernels.bundles import BS
    from verify.model.kernels.layer_norm import LS_ROWS
    from verify.model.kernels.position import finish_position_scalar

    tb = prepare_exhaustive(p, 4)
    d, f = p.config.d_model, p.config.d_ff
    yo, ryo, ao, rao = y.copy(), ry.copy(), a.copy(), ra.copy()
    finish_position_scalar(
        1, tb.per_string.scalars, tb.layers, tb.norms, tb.bounds, yo, ryo, ao, rao,
        np.empty((f, BS)), np.zeros(BS), np.empty((d, BS)), np.zeros(BS), np.zeros(BS),
        np.empty((LS_ROWS, BS)), np.zeros((d, BS)), np.ones(BS), np.zeros(BS), np.zeros(BS), True,
    )  # fmt: skip
    return yo, ryo


@pytest.mark.parametrize(("norm_first", "eps"), [(False, 0.0), (True, 0.0), (False, 1e-5)])
def test_post_attention_radius_bounds_sampled_perturbations(norm_first: bool, eps: float) -> None:
    """``finish_position_scalar`` (2-norm inside, one radius per string in and out) as an
    enclosure: for inputs anywhere in the boxes |y' - y| <= ry, |a' - a| <= ra, the layer's
    output stays within the output radius of the computed one. Box corners (the largest
    2-norm) and the layer's own worst direction (a gradient step) are sampled."""
    from verify.model.kernels.bundles import BS

    cfg = ModelConfig(d_model=16, n_layers=2, n_heads=2, norm_first=norm_first, ln_eps=eps)
    p = init_params(cfg, "xavier_uniform", seed=3)
    d = cfg.d_model
    rng = np.random.default_rng(7)
    worst = 0.0
    for radius in (1e-2, 1e-4, 1e-7):
        y = rng.standard_normal((d, BS))
        a = 0.5 * rng.standard_normal((d, BS))
        ry, ra = np.full(BS, radius), np.full(BS, radius / 2)
        yo, ryo = _finish_layer_1(p, y, ry, a, ra)
        assert np.all(np.isfinite(ryo))
        centre = _post_attention_reference(p, 1, y, a)
        np.testing.assert_allclose(yo, centre, rtol=0, atol=1e-12)
        for k in range(60):
            if k < 40:  # box corners
                dy = ry * rng.choice([-1.0, 1.0], size=(d, BS))
                da = ra * rng.choice([-1.0, 1.0], size=(d, BS))
            else:  # along the sign of a finite-difference gradient of one output component
                e = rng.integers(d)
                dy, da = np.zeros((d, BS)), np.zeros((d, BS))
                for c in range(d):
                    step = np.zeros((d, BS))
                    step[c] = 1e-7
                    g = (_post_attention_reference(p, 1, y + step, a)[e] - centre[e]) / 1e-7
                    dy[c] = np.sign(g) * ry
                    da[c] = np.sign(g) * ra
            moved = _post_attention_reference(p, 1, y + dy, a + da)
            ratio = np.abs(moved - yo).max(axis=0) / ryo
            worst = max(worst, float(ratio.max()))
            assert np.all(ratio <= 1.0), ratio.max()
    print(f"largest |change| / radius over the samples: {worst:.3g}")
    assert worst > 0.01  # the radius is not vacuous


@pytest.mark.parametrize("norm_first", [False, True])
def test_post_attention_radius_is_nearly_attained(norm_first: bool) -> None:
    """A construction on which every step of ``finish_position_scalar``'s 2-norm rule is
    nearly tight, so that dropping or halving any factor of it makes the test fail: a large
    eps with gains sqrt(eps) (each layer norm nearly linear, Lipschitz constant ~1 along
    centred directions), a rank-one MLP W_1 = c u v^T, W_2 = c' v u^T with every relu active
    (the spectral norms multiply exactly, and the MLP adds c c' v v^T to the residual path;
    b_2 = -W_2 b_1, so that no large constant makes the error radial for the last norm), and
    input errors at the box corner along v (2-norm sqrt(d) times the radius)."""
    from verify.model.kernels.bundles import BS

    eps = 1e4
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, norm_first=norm_first, ln_eps=eps)
    base = init_params(cfg, "xavier_uniform", seed=0)
    d, f = cfg.d_model, cfg.d_ff
    sign = np.array([1.0, -1.0] * (d // 2))  # centred
    v = sign / np.sqrt(d)
    u = np.ones(f) / np.sqrt(f)
    c1, c2 = 3.0, 2.0
    arrays = {
        "layers.1.linear1.weight": c1 * np.outer(u, v),
        "layers.1.linear1.bias": np.full(f, 100.0),  # every hidden unit active
        "layers.1.linear2.weight": c2 * np.outer(v, u),
        "layers.1.linear2.bias": -c2 * v * (u @ np.full(f, 100.0)),  # cancels W_2 b_1
    }
    for name in ("norm1", "norm2"):
        arrays[f"layers.1.{name}.weight"] = np.full(d, np.sqrt(eps))
        arrays[f"layers.1.{name}.bias"] = np.zeros(d)
    p = base.with_arrays(arrays)
    rng = np.random.default_rng(1)
    y = rng.standard_normal((d, BS))
    a = 0.5 * rng.standard_normal((d, BS))
    r = 1e-3
    ry, ra = np.full(BS, r), np.full(BS, r / 2)
    yo, ryo = _finish_layer_1(p, y, ry, a, ra)
    moved = _post_attention_reference(p, 1, y + r * sign[:, None], a + r / 2 * sign[:, None])
    ratio = np.linalg.norm(moved - yo, axis=0) / ryo
    print(f"|change|_2 / radius: min {ratio.min():.4f}, max {ratio.max():.4f}")
    assert np.all(ratio <= 1.0)
    assert ratio.max() >= 0.95
