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
from verify.model.exhaustive.exhaustive_pass import exhaustive_T, prepare_exhaustive
from verify.model.generic.reference import reference_forward
from verify.model.per_string.per_string_pass import fast_T
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


def _post_attention_reference(p: Params, layer: int, y: np.ndarray, att: np.ndarray) -> np.ndarray:
    """The layer's output at one position from its residual input y and concatenated head
    outputs att (before out_proj), float64, one string per column (d, nb)."""
    cfg = p.config
    pre = f"layers.{layer}."
    a = p[pre + "self_attn.out_proj.weight"] @ att + p[pre + "self_attn.out_proj.bias"][:, None]

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
    """``finish_position_l2`` at layer 1 on copies of (y, ry), (a, ra), a the head outputs
    before out_proj: (output, radius)."""
    from verify.model.stages.bundles import BS
    from verify.model.stages.position import finish_position_l2
    from verify.model.stages.register_sums import LS_ROWS

    tb = prepare_exhaustive(p, 4)
    d, f = p.config.d_model, p.config.d_ff
    yo, ryo, ao, rao = y.copy(), ry.copy(), a.copy(), ra.copy()
    finish_position_l2(
        1, tb.per_string.scalars, tb.layers, tb.norms, tb.bounds, yo, ryo, ao, rao,
        np.empty((d, BS)), np.zeros(BS), np.empty((f, BS)), np.zeros(BS), np.empty((d, BS)),
        np.zeros(BS), np.zeros(BS), np.empty((LS_ROWS, BS)), np.zeros((d, BS)), np.ones(BS),
        np.zeros(BS), np.zeros(BS), True, np.zeros((2, BS)),
    )  # fmt: skip
    return yo, ryo


@pytest.mark.parametrize(("norm_first", "eps"), [(False, 0.0), (True, 0.0), (False, 1e-5)])
def test_post_attention_radius_bounds_sampled_perturbations(norm_first: bool, eps: float) -> None:
    """``finish_position_l2`` (one 2-norm radius per string in and out) as an enclosure:
    for inputs anywhere in the balls |y' - y|_2 <= ry, |a' - a|_2 <= ra, the layer's output
    stays within 2-norm distance of the output radius from the computed one. Scaled box
    corners and the layer's own worst direction (a gradient step) are sampled."""
    from verify.model.stages.bundles import BS

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
            if k < 40:  # corners of the largest box inside the balls
                dy = ry / np.sqrt(d) * rng.choice([-1.0, 1.0], size=(d, BS))
                da = ra / np.sqrt(d) * rng.choice([-1.0, 1.0], size=(d, BS))
            else:  # along a finite-difference gradient of one output component
                e = rng.integers(d)
                grad = np.zeros((d, BS))
                for c in range(d):
                    step = np.zeros((d, BS))
                    step[c] = 1e-7
                    grad[c] = (_post_attention_reference(p, 1, y + step, a)[e] - centre[e]) / 1e-7
                unit = grad / np.linalg.norm(grad, axis=0)
                dy, da = ry * unit, ra * unit
            moved = _post_attention_reference(p, 1, y + dy, a + da)
            ratio = np.linalg.norm(moved - yo, axis=0) / ryo
            worst = max(worst, float(ratio.max()))
            assert np.all(ratio <= 1.0), ratio.max()
    print(f"largest |change| / radius over the samples: {worst:.3g}")
    assert worst > 0.01  # the radius is not vacuous


@pytest.mark.parametrize("norm_first", [False, True])
def test_post_attention_radius_is_nearly_attained(norm_first: bool) -> None:
    """A construction on which every step of ``finish_position_l2``'s 2-norm rule is
    nearly tight, so that dropping or halving any factor of it makes the test fail: out_proj
    W_o = 1.5 I (its spectral norm attained in every direction), a large
    eps with gains sqrt(eps) (each layer norm nearly linear, Lipschitz constant ~1 along
    centred directions), a rank-one MLP W_1 = c u v^T, W_2 = c' v u^T with every relu active
    (the spectral norms multiply exactly, and the MLP adds c c' v v^T to the residual path;
    b_2 = -W_2 b_1, so that no large constant makes the error radial for the last norm), and
    input errors of the full 2-norm radius along v."""
    from verify.model.stages.bundles import BS

    eps = 1e4
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, norm_first=norm_first, ln_eps=eps)
    base = init_params(cfg, "xavier_uniform", seed=0)
    d, f = cfg.d_model, cfg.d_ff
    sign = np.array([1.0, -1.0] * (d // 2))  # centred
    v = sign / np.sqrt(d)
    u = np.ones(f) / np.sqrt(f)
    c1, c2 = 3.0, 2.0
    arrays = {
        "layers.1.self_attn.out_proj.weight": 1.5 * np.eye(d),
        "layers.1.self_attn.out_proj.bias": np.zeros(d),
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
    moved = _post_attention_reference(p, 1, y + r * v[:, None], a + r / 2 * v[:, None])
    ratio = np.linalg.norm(moved - yo, axis=0) / ryo
    print(f"|change|_2 / radius: min {ratio.min():.4f}, max {ratio.max():.4f}")
    assert np.all(ratio <= 1.0)
    assert ratio.max() >= 0.95


def _attention_reference(p: Params, layer: int, x: np.ndarray, i: int) -> np.ndarray:
    """The concatenated head outputs (before out_proj) at query position i of the layer, from
    its attention inputs x (s, d, nb), float64."""
    cfg = p.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    w = p[f"layers.{layer}.self_attn.in_proj_weight"]
    bias = p[f"layers.{layer}.self_attn.in_proj_bias"]
    out = np.empty((d, x.shape[2]))
    for hd in range(h):
        q, k, v = (slice(blk * d + hd * dh, blk * d + (hd + 1) * dh) for blk in range(3))
        qv = w[q] @ x[i] + bias[q][:, None]  # (dh, nb)
        keys = np.einsum("ek,skb->seb", w[k], x) + bias[k][None, :, None]
        scores = np.einsum("eb,seb->sb", qv, keys) / np.sqrt(dh)
        e = np.exp(scores - scores.max(axis=0))
        prob = e / e.sum(axis=0)
        xbar = np.einsum("sb,skb->kb", prob, x)
        out[hd * dh : (hd + 1) * dh] = w[v] @ xbar + bias[v][:, None]
    return out


def _attention_l2(p: Params, x: np.ndarray, rho: np.ndarray, i: int) -> tuple[np.ndarray, ...]:
    """``attention_row_l2`` at layer 1 on (x, rho): (head outputs, their 2-norm radius)."""
    from verify.model.double_double.dd_l2 import abs_l2
    from verify.model.stages.attention import SV_ROWS, attention_row_l2
    from verify.model.stages.bundles import BS

    tb = prepare_exhaustive(p, 4)
    sc = tb.per_string.scalars
    s, d = x.shape[0], x.shape[1]
    xm = np.abs(x).max(axis=1)
    xn = np.empty((s, BS))
    for j in range(s):
        abs_l2(x[j], np.zeros((d, BS)), xn[j])
    att, ratt = np.empty((d, BS)), np.zeros(BS)
    attention_row_l2(
        x, rho, xm, xn, i, tb.layers.in_wt[1], tb.layers.in_b[1], tb.layers.keys_w[1],
        tb.layers.zero_d, tb.bounds.head[1], tb.bounds.l2[1], sc.n_heads, sc.inv_sqrt_dh,
        sc.inv_sqrt_dh_rad, np.zeros(BS), att, ratt, np.empty((d, BS)), np.zeros(BS),
        np.empty((d, BS)), np.zeros(BS), np.empty((s, BS)), np.zeros((s, BS)),
        np.zeros((s, BS)), np.zeros((s, BS)), np.zeros((SV_ROWS, BS)), True,
    )  # fmt: skip
    return att, ratt


@pytest.mark.parametrize("seed", [0, 1])
def test_attention_radius_bounds_sampled_perturbations(seed: int) -> None:
    """``attention_row_l2`` as an enclosure: for inputs x'_j anywhere in the balls |x'_j -
    x_j|_2 <= rho_j (radii differing per position), the head outputs stay within the 2-norm
    radius of the computed ones. Random directions and the outputs' own worst direction (a
    finite-difference gradient of one output component) are sampled."""
    from verify.model.stages.bundles import BS

    cfg = ModelConfig(d_model=16, n_layers=2, n_heads=2)
    p = init_params(cfg, "xavier_uniform", seed=seed)
    d, s = cfg.d_model, 9
    rng = np.random.default_rng(seed)
    worst = 0.0
    for radius in (1e-3, 1e-6):
        x = 1.5 * rng.standard_normal((s, d, BS))
        rho = radius * rng.uniform(0.2, 1.0, size=(s, BS))
        i = int(rng.integers(s))
        att, ratt = _attention_l2(p, x, rho, i)
        assert np.all(np.isfinite(ratt))
        centre = _attention_reference(p, 1, x, i)
        np.testing.assert_allclose(att, centre, rtol=0, atol=1e-12)
        for k in range(30):
            if k < 20:
                dx = rng.standard_normal((s, d, BS))
            else:
                e = rng.integers(d)
                dx = np.zeros((s, d, BS))
                for j in range(s):
                    for c in range(d):
                        step = np.zeros((s, d, BS))
                        step[j, c] = 1e-7
                        moved = _attention_reference(p, 1, x + step, i)[e]
                        dx[j, c] = (moved - centre[e]) / 1e-7
            dx *= rho[:, None, :] / np.linalg.norm(dx, axis=1)[:, None, :]
            moved = _attention_reference(p, 1, x + dx, i)
            ratio = np.linalg.norm(moved - att, axis=0) / ratt
            worst = max(worst, float(ratio.max()))
            assert np.all(ratio <= 1.0), ratio.max()
    print(f"largest |change|_2 / radius over the samples: {worst:.3g}")
    assert worst > 0.05  # the radius is not vacuous


def _one_head_model(arrays: dict[str, np.ndarray]) -> Params:
    """A d = 4, one-head model whose layer-1 attention weights are ``arrays`` (in_proj as q,
    k, v blocks)."""
    cfg = ModelConfig(d_model=4, n_layers=2, n_heads=1)
    base = init_params(cfg, "xavier_uniform", seed=0)
    w = np.concatenate([arrays["q"], arrays["k"], arrays["v"]])
    b = np.concatenate([arrays["bq"], np.zeros(4), np.zeros(4)])
    return base.with_arrays(
        {"layers.1.self_attn.in_proj_weight": w, "layers.1.self_attn.in_proj_bias": b}
    )


@pytest.mark.parametrize("term", ["query", "key"])
def test_attention_radius_is_nearly_attained(term: str) -> None:
    """Two constructions on which ``attention_row_l2``'s rule is nearly tight, so that dropping
    or halving a term of it fails one of them. Two positions x_0 = v, x_1 = -v with equal
    scores (p = 1/2 each), values W_v = 2 I.

    - "query": q = 0 at the midpoint, W_q = 3 e v^T / |v| (|q' - q| = |W_q|_2 rho_0 along e),
      keys W_k x_j = +-e (anti-parallel, so the two scores move apart by the full query
      term), and every input moved by rho along v: the weighted sum moves by rho (the first
      term) plus sum p_j sig_j |x_j - xbar| (the Jacobian term), both along v.
    - "key": W_q = 0 and q = b_q = 200 e, W_k = e u^T with u orthogonal to v, so the score of
      x_1 moves by |W_k^T q| rho_1 / sqrt(d_h) = 100 rho_1 when x_1 moves along u (rho_0 = 0):
      the Jacobian term (along v) dominates the first (along u)."""
    from verify.model.stages.bundles import BS

    e, v, u = np.eye(4)[0], np.array([0.0, 1.0, 1.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0])
    if term == "query":
        w_qk = np.outer(e, v) / np.linalg.norm(v)  # rank one, spectral norm 1
        arrays = {"q": 3 * w_qk, "bq": -3 * w_qk @ v, "k": w_qk, "v": 2 * np.eye(4)}  # q(x_0) = 0
    else:
        arrays = {"q": np.zeros((4, 4)), "bq": 200 * e, "k": np.outer(e, u), "v": 2 * np.eye(4)}
    p = _one_head_model(arrays)
    x = np.empty((2, 4, BS))
    x[0], x[1] = v[:, None], -v[:, None]
    r = 1e-6
    if term == "query":
        rho = np.full((2, BS), r)
        dx = np.stack([r * v / np.linalg.norm(v)] * 2)[:, :, None]
    else:
        rho = np.stack([np.zeros(BS), np.full(BS, r)])
        dx = np.stack([np.zeros(4), r * u])[:, :, None]
    att, ratt = _attention_l2(p, x, rho, 0)
    moved = _attention_reference(p, 1, x + dx, 0)
    ratio = np.linalg.norm(moved - att, axis=0) / ratt
    print(f"{term}: |change|_2 / radius: min {ratio.min():.4f}, max {ratio.max():.4f}")
    assert np.all(ratio <= 1.0)
    assert ratio.max() >= 0.95
