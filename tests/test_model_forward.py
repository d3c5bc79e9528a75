"""The float64 forward pass against an independent scalar implementation of model-spec."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params


def naive_forward(p: Params, x: list[int]) -> tuple[float, list[list[float]]]:
    """model-spec written out with Python scalars and loops: (T, variances[k][n])."""
    cfg = p.config
    d, h_count = cfg.d_model, cfg.n_heads
    dh = d // h_count
    tokens = list(x) + ([2] if cfg.eos else [])
    s = len(tokens)
    width = cfg.d_embed

    def pos(n: int) -> list[float]:
        if cfg.pos_encoding == "learned":
            return [float(v) for v in p["pos_embedding"][n]]
        if cfg.pos_encoding == "none":
            return [0.0] * width
        row = []
        for j in range(width):
            i2 = j - (j % 2)
            angle = n / 10000 ** (i2 / width)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        return row

    def emb(n: int) -> list[float]:
        tok = [float(v) for v in p["token_embedding"][tokens[n]]]
        if cfg.embedding == "add":
            return [a + b for a, b in zip(tok, pos(n), strict=True)]
        return tok + pos(n)

    def lin(w: np.ndarray, b: np.ndarray, v: list[float]) -> list[float]:
        return [sum(w[i][j] * v[j] for j in range(len(v))) + b[i] for i in range(len(b))]

    variances: list[list[float]] = []

    def norm(vs: list[list[float]], name: str) -> list[list[float]]:
        out, var_row = [], []
        for v in vs:
            mu = sum(v) / d
            var = sum((a - mu) ** 2 for a in v) / d
            var_row.append(var)
            z = 1 / math.sqrt(var + cfg.ln_eps)
            g = p[name + ".weight"] if cfg.ln_affine else [1.0] * d
            b = p[name + ".bias"] if cfg.ln_affine else [0.0] * d
            out.append([g[i] * (v[i] - mu) * z + b[i] for i in range(d)])
        variances.append(var_row)
        return out

    def attention(ys: list[list[float]], pre: str) -> list[list[float]]:
        w, b = p[pre + "in_proj_weight"], p[pre + "in_proj_bias"]
        qkv = [lin(w, b, y) for y in ys]
        out = []
        for i in range(s):
            concat = []
            for hh in range(h_count):
                lo = hh * dh
                sc = [
                    sum(qkv[i][lo + e] * qkv[j][d + lo + e] for e in range(dh)) / math.sqrt(dh)
                    for j in range(s)
                ]
                m = max(sc)
                ex = [math.exp(c - m) for c in sc]
                tot = sum(ex)
                concat += [
                    sum(ex[j] / tot * qkv[j][2 * d + lo + e] for j in range(s)) for e in range(dh)
                ]
            out.append(lin(p[pre + "out_proj.weight"], p[pre + "out_proj.bias"], concat))
        return out

    def mlp(ys: list[list[float]], pre: str) -> list[list[float]]:
        res = []
        for y in ys:
            hid = [max(0.0, a) for a in lin(p[pre + "linear1.weight"], p[pre + "linear1.bias"], y)]
            res.append(lin(p[pre + "linear2.weight"], p[pre + "linear2.bias"], hid))
        return res

    def add(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
        return [[u + v for u, v in zip(r1, r2, strict=True)] for r1, r2 in zip(a, b, strict=True)]

    ys = [emb(n) for n in range(s)]
    for layer in range(cfg.n_layers):
        pre = f"layers.{layer}."
        if cfg.norm_first:
            hs = add(ys, attention(norm(ys, pre + "norm1"), pre + "self_attn."))
            ys = add(hs, mlp(norm(hs, pre + "norm2"), pre))
        else:
            hs = norm(add(ys, attention(ys, pre + "self_attn.")), pre + "norm1")
            ys = norm(add(hs, mlp(hs, pre)), pre + "norm2")
    if cfg.norm_first:
        ys = norm(ys, "final_norm")
    t = sum(a * b for a, b in zip(p["readout.weight"], ys[-1], strict=True)) + float(
        p["readout.bias"]
    )
    return t, variances


CONFIGS = [
    ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=0.0),
    ModelConfig(d_model=8, n_layers=1, n_heads=4, ln_eps=1e-5, norm_first=True),
    ModelConfig(
        d_model=6,
        n_layers=2,
        n_heads=3,
        pos_encoding="learned",
        embedding="concat",
        eos=False,
        max_len=9,
        d_ff=7,
    ),
    ModelConfig(
        d_model=5, n_layers=2, n_heads=1, ln_affine=False, norm_first=True, pos_encoding="none"
    ),
    ModelConfig(d_model=10, n_layers=1, n_heads=2, embedding="concat"),  # odd D' = 5 sinusoid
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_forward_matches_scalar_implementation(cfg: ModelConfig) -> None:
    p = init_params(cfg, "gaussian", seed=11, scale=0.8)
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(4, 7))
    res = forward(p, bits, diagnostics=True)
    for b in range(bits.shape[0]):
        t, var = naive_forward(p, list(bits[b]))
        assert res.T[b] == pytest.approx(t, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(res.var[b], np.array(var), rtol=1e-10, atol=1e-14)
    w = p["readout.weight"]
    np.testing.assert_allclose(res.y_readout @ w + p["readout.bias"], res.T, rtol=1e-14)


def test_blowup_diagnostics_follow_their_definitions() -> None:
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-3)
    p = init_params(cfg, "uniform", seed=2)
    res = forward(p, np.eye(6, dtype=np.uint8), diagnostics=True)
    assert res.var.shape == (6, 4, 7) and res.tau.shape == (6, 4)
    z = 1 / np.sqrt(res.var + 1e-3)
    np.testing.assert_allclose(res.z, z)
    np.testing.assert_allclose(res.tau, (1 + z).max(axis=2))
    np.testing.assert_allclose(res.beta, (1 + z).max(axis=2).prod(axis=1))
    inv_std = 1 / np.sqrt(res.var * 8 / 7)  # unbiased, no eps
    hr = inv_std[:, :2, :].max(axis=2).prod(axis=1) * inv_std[:, 2:, -1].prod(axis=1)
    np.testing.assert_allclose(res.beta_hr, hr)
    assert np.all(res.z <= 1 / np.sqrt(1e-3))  # Lemma 3.2's cap, the formula of z itself


def test_chunked_blowup_diagnostics_are_the_whole_batchs_bit_for_bit(monkeypatch) -> None:
    """forward's diagnostics of a large batch go chunk by chunk (no batch-sized temporaries):
    every number equal to the one-call result, across chunk boundaries, with zero variances
    (eps = 0: z = inf), NaN variances and a ragged last chunk."""
    import importlib

    fw = importlib.import_module(
        "verify.model.plain.forward"
    )  # (verify.model.forward: the function)
    rng = np.random.default_rng(5)
    var = rng.random((1000, 4, 7)) * 10.0 ** rng.integers(-12, 3, (1000, 4, 7))
    var[3, 1, 2] = 0.0
    var[517, :, 0] = np.nan
    var[999, 2, :] = 0.0
    mask = np.ones((4, 7), dtype=bool)
    mask[2:, :-1] = False
    for eps in (0.0, 1e-5):
        whole = fw.blowup_diagnostics(var, eps, 8, mask)
        monkeypatch.setattr(fw, "_DIAGNOSTICS_CHUNK", 64)
        chunked = fw.blowup_diagnostics_chunked(var, eps, 8, mask)
        for a, b in zip(whole, chunked, strict=True):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)  # NaN where NaN, every other bit equal


def test_eps_zero_constant_layer_norm_input_is_undefined() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, pos_encoding="none", ln_eps=0.0)
    p = init_params(cfg, "gaussian", seed=0)
    # every row of the token table constant, attention and MLP output constant => var = 0
    arrays = dict(p)
    arrays["token_embedding"] = np.ones((3, 4))
    arrays["layers.0.self_attn.out_proj.weight"] = np.zeros((4, 4))
    arrays["layers.0.self_attn.out_proj.bias"] = np.full(4, 0.5)
    res = forward(Params(cfg, arrays), np.zeros((2, 3), dtype=np.uint8), diagnostics=True)
    assert np.all(np.isnan(res.T)) and np.all(res.undefined)
    assert np.all(res.var[:, 0, :] == 0) and np.all(np.isinf(res.z[:, 0, :]))
    assert np.all(np.isinf(res.tau[:, 0]))
    # norms after an undefined one have undefined (NaN) inputs, so beta is not a number either
    assert np.all(np.isnan(res.var[:, 1, :])) and not np.any(np.isfinite(res.beta))


def test_forward_on_worker_threads_agrees_with_one_string_at_a_time(monkeypatch) -> None:
    """Chunks of 1024 strings on two worker threads (each with a one-thread BLAS) give what a
    single string alone gives, and the caller's numpy error state reaches the workers."""
    fwd = importlib.import_module("verify.model.plain.forward")
    monkeypatch.setattr(fwd, "_cores", lambda: 2)
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-3)
    p = init_params(cfg, "gaussian", seed=5, scale=0.8)
    bits = np.random.default_rng(1).integers(0, 2, size=(2 * 1024 + 37, 6))
    res = forward(p, bits, diagnostics=True)
    for b in range(0, bits.shape[0], 301):
        one = forward(p, bits[b : b + 1], diagnostics=True)  # one chunk: no pool
        assert res.T[b] == pytest.approx(one.T[0], rel=1e-12, abs=1e-13)
        np.testing.assert_allclose(res.var[b], one.var[0], rtol=1e-12)
    seen = []
    real = fwd.forward_dense

    def spy(*args):
        seen.append(np.geterr()["over"])
        return real(*args)

    monkeypatch.setattr(fwd, "forward_dense", spy)
    with np.errstate(over="raise"):
        forward(p, bits)
    assert seen == ["raise"] * 3


def test_forward_rejects_bad_bits() -> None:
    p = init_params(
        ModelConfig(d_model=4, n_layers=1, n_heads=1, pos_encoding="learned", max_len=4),
        "gaussian",
        seed=0,
    )
    with pytest.raises(ValidationError, match="bits"):
        forward(p, np.array([[0, 2, 1]]))
    with pytest.raises(ValidationError, match="max_len"):
        forward(p, np.zeros((1, 5), dtype=np.uint8))
    with pytest.raises(ValidationError, match="params"):
        forward({}, np.zeros((1, 3)))
    assert forward(p, [0, 1, 1]).T.shape == (1,)
