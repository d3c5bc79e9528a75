"""ModelConfig validation, Params validation, .npz round trip, theta flatten/unflatten, init."""

from __future__ import annotations

import numpy as np
import pytest

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params, n_params, param_shapes
from verify.model.spec.init import SCHEMES

CONFIGS = [
    ModelConfig(),
    ModelConfig(norm_first=True, ln_affine=True, pos_encoding="learned", max_len=12),
    ModelConfig(d_model=8, n_layers=1, n_heads=4, d_ff=5, embedding="concat", eos=False),
    ModelConfig(d_model=6, n_layers=3, n_heads=3, ln_affine=False, pos_encoding="none"),
]


def test_config_defaults_follow_the_spec() -> None:
    cfg = ModelConfig()
    assert (cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.d_ff) == (16, 2, 2, 64)
    assert cfg.ln_eps == 0.0 and cfg.norm_first is False and cfg.ln_affine is True
    assert cfg.eos is True and cfg.pos_encoding == "sinusoidal" and cfg.embedding == "add"
    assert cfg.max_len == 64
    assert cfg.n_norms == 4 and ModelConfig(norm_first=True).n_norms == 5
    assert cfg.seq_len(7) == 8 and ModelConfig(eos=False).seq_len(7) == 7


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"d_model": 15, "n_heads": 2}, "n_heads"),
        ({"ln_eps": -1e-5}, "ln_eps"),
        ({"ln_eps": float("nan")}, "ln_eps"),
        ({"pos_encoding": "rotary"}, "pos_encoding"),
        ({"embedding": "concat", "d_model": 5, "n_heads": 1}, "d_model"),
        ({"n_layers": 0}, "n_layers"),
        ({"eos": 1}, "eos"),
    ],
)
def test_config_rejects_bad_fields(kwargs: dict, argument: str) -> None:
    with pytest.raises(ValidationError) as info:
        ModelConfig(**kwargs)
    assert info.value.argument == argument


def test_config_json_round_trip() -> None:
    for cfg in CONFIGS:
        assert ModelConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ValidationError):
        ModelConfig.from_json('{"d_model": 16, "colour": "red"}')


def test_learned_positions_limit_n() -> None:
    cfg = ModelConfig(pos_encoding="learned", max_len=8)
    assert cfg.check_n_bits(8) == 8
    with pytest.raises(ValidationError, match="max_len"):
        cfg.check_n_bits(9)


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_save_load_and_flatten_round_trip(tmp_path, cfg: ModelConfig, scheme: str) -> None:
    p = init_params(cfg, scheme, seed=3, scale=0.5)
    theta = p.flatten()
    assert theta.shape == (n_params(cfg),) == (p.n_params,)
    # theta is the spec table's order, C-order flattened
    expected = np.concatenate([np.ravel(p[name]) for name in param_shapes(cfg)])
    assert np.array_equal(theta, expected)
    q = Params.unflatten(cfg, theta)
    assert all(np.array_equal(p[k], q[k]) for k in p)
    path = tmp_path / "model.npz"
    p.save(path)
    r = Params.load(path)
    assert r.config == cfg and list(r) == list(p)
    assert all(np.array_equal(p[k], r[k]) and p[k].shape == r[k].shape for k in p)
    assert r["readout.bias"].shape == ()
    with np.load(path) as data:  # the file format of the spec
        assert data["config"].shape == () and data["config"].dtype.kind == "U"


def test_param_names_match_the_spec() -> None:
    shapes = param_shapes(ModelConfig(norm_first=True, pos_encoding="learned", max_len=10))
    assert shapes["token_embedding"] == (3, 16)
    assert shapes["pos_embedding"] == (11, 16)
    assert shapes["layers.1.self_attn.in_proj_weight"] == (48, 16)
    assert shapes["layers.0.linear1.weight"] == (64, 16)
    assert shapes["layers.0.norm2.bias"] == (16,)
    assert shapes["final_norm.weight"] == (16,)
    assert shapes["readout.bias"] == ()
    concat = param_shapes(ModelConfig(embedding="concat", pos_encoding="learned", max_len=4))
    assert concat["token_embedding"] == (3, 8) and concat["pos_embedding"] == (5, 8)
    assert "final_norm.weight" not in param_shapes(ModelConfig())
    assert "layers.0.norm1.weight" not in param_shapes(ModelConfig(ln_affine=False))


def test_bad_parameter_files_name_the_array(tmp_path) -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1)
    p = init_params(cfg, "gaussian", seed=0)
    arrays = dict(p)
    arrays["layers.0.linear1.weight"] = np.zeros((3, 3))
    with pytest.raises(ValidationError, match=r"layers\.0\.linear1\.weight.*\(16, 4\)"):
        Params(cfg, arrays)
    arrays = dict(p)
    arrays["readout.weight"] = np.array([1.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValidationError, match="readout.weight"):
        Params(cfg, arrays)
    arrays = dict(p)
    del arrays["layers.0.norm2.bias"]
    with pytest.raises(ValidationError, match=r"layers\.0\.norm2\.bias.*\(4,\)"):
        Params(cfg, arrays)
    # a file missing an array
    payload = {"config": np.array(cfg.to_json()), **arrays}
    path = tmp_path / "bad.npz"
    np.savez(path, **payload)
    with pytest.raises(ValidationError, match=r"norm2\.bias"):
        Params.load(path)
    with pytest.raises(ValidationError, match="path"):
        Params.load(tmp_path / "absent.npz")
    with pytest.raises(ValidationError, match="theta"):
        Params.unflatten(cfg, np.zeros(3))


def test_init_schemes_draw_what_they_document() -> None:
    cfg = ModelConfig(d_model=32, n_layers=1, n_heads=2)
    u = init_params(cfg, "uniform", seed=1, scale=0.3).flatten()
    assert np.abs(u).max() <= 0.3 and np.abs(u).max() > 0.29
    g = init_params(cfg, "gaussian", seed=1, scale=2.0).flatten()
    assert abs(g.std() - 2.0) < 0.05  # M ~ 13k draws: 4 standard errors of the std
    xu = init_params(cfg, "xavier_uniform", seed=1)
    a = np.sqrt(6.0 / (16 * 3 * 2 + 32))  # in_proj (3D, D)
    w = xu["layers.0.self_attn.in_proj_weight"]
    assert np.abs(w).max() <= a and np.abs(w).max() > 0.95 * a
    assert np.all(xu["layers.0.norm1.weight"] == 1) and np.all(xu["layers.0.linear1.bias"] == 0)
    xn = init_params(cfg, "xavier_normal", seed=1)
    w1 = xn["layers.0.linear1.weight"]  # (128, 32)
    assert abs(w1.std() / np.sqrt(2.0 / 160) - 1) < 0.05
    assert np.array_equal(
        init_params(cfg, "gaussian", seed=5).flatten(),
        init_params(cfg, "gaussian", seed=5).flatten(),
    )
    with pytest.raises(ValidationError, match="scheme"):
        init_params(cfg, "he", seed=0)


def test_unflatten_gives_what_the_validating_constructor_gives() -> None:
    """unflatten checks theta once (shape, finiteness) and skips the per-array checks: the
    arrays are those of Params(config, arrays), independent of theta, and bad theta is refused."""
    for cfg in (ModelConfig(d_model=8, n_layers=2, n_heads=2), ModelConfig(d_model=4, n_layers=1)):
        theta = init_params(cfg, "gaussian", seed=3).flatten()
        q = Params.unflatten(cfg, theta)
        shapes = param_shapes(cfg)
        offsets = np.cumsum([0] + [int(np.prod(s)) for s in shapes.values()])
        ref = Params(
            cfg,
            {
                name: theta[a:b].reshape(shape)
                for (name, shape), a, b in zip(
                    shapes.items(), offsets[:-1], offsets[1:], strict=True
                )
            },
        )
        assert list(q) == list(ref) and q.config == cfg
        for name in ref:
            assert q[name].shape == ref[name].shape and q[name].dtype == np.float64
            assert q[name].flags.c_contiguous and np.array_equal(q[name], ref[name])
        before = q.flatten()
        theta[:] = 7.0  # the Params does not share theta's memory
        assert np.array_equal(q.flatten(), before)
        for bad in (np.nan, np.inf):
            t = before.copy()
            t[-1] = bad
            with pytest.raises(ValidationError, match="theta"):
                Params.unflatten(cfg, t)
    with pytest.raises(ValidationError, match="config"):
        Params.unflatten("not a config", np.zeros(3))  # type: ignore[arg-type]
