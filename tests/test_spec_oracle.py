"""An independent oracle for ``docs/model-spec.md``, checked against ``verify.model.plain.forward``.

The oracle below is written from the spec text alone, deliberately plain (Python loops over
positions, heads and coordinates, ``math`` functions), sharing no code with ``verify.model``
beyond the parameter names and shapes of the spec's table (``param_shapes``). It is compared with
``forward`` on random parameters for every combination of the spec's options, and both are
compared with closed forms on hand-checkable models.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.model import ModelConfig, Params, forward, param_shapes
from verify.strategies import SPEC_OPTION_GRID

RTOL = 1e-12


# ---------------------------------------------------------------------- the oracle
def _layer_norm(v: list[float], eps: float, gain, bias) -> tuple[list[float], float]:
    """Spec step 3: gamma * (v - mean) / sqrt(var + eps) + beta, var the population variance."""
    d = len(v)
    mean = sum(v) / d
    var = sum((a - mean) ** 2 for a in v) / d
    out = [(a - mean) / math.sqrt(var + eps) for a in v]
    if gain is not None:
        out = [g * o + b for g, o, b in zip(gain, out, bias, strict=True)]
    return out, var


def _affine(w: np.ndarray, b: np.ndarray, v: list[float]) -> list[float]:
    """w v + b for a (rows, cols) matrix w, plain loops."""
    return [sum(w[i][j] * v[j] for j in range(len(v))) + b[i] for i in range(len(b))]


def _position_row(cfg: ModelConfig, arrays: dict, n: int) -> list[float]:
    """Spec step 2: row n (counted from 0) of the positional encoding, width D'."""
    width = cfg.d_embed
    if cfg.pos_encoding == "learned":
        return list(arrays["pos_embedding"][n])
    if cfg.pos_encoding == "none":
        return [0.0] * width
    row = []
    for j in range(width):
        i = j // 2
        angle = n / 10000 ** (2 * i / width)
        row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
    return row


def _attention(cfg: ModelConfig, arrays: dict, p: str, ys: list[list[float]]) -> list[list[float]]:
    """Spec step 4, head by head, position by position."""
    d, h = cfg.d_model, cfg.n_heads
    dh = d // h
    w_in, b_in = arrays[p + "self_attn.in_proj_weight"], arrays[p + "self_attn.in_proj_bias"]
    q = [_affine(w_in[:d], b_in[:d], y) for y in ys]
    k = [_affine(w_in[d : 2 * d], b_in[d : 2 * d], y) for y in ys]
    v = [_affine(w_in[2 * d :], b_in[2 * d :], y) for y in ys]
    s = len(ys)
    out = []
    for i in range(s):
        concat: list[float] = []
        for head in range(h):
            cols = range(head * dh, (head + 1) * dh)
            scores = [sum(q[i][c] * k[j][c] for c in cols) / math.sqrt(dh) for j in range(s)]
            top = max(scores)
            weights = [math.exp(a - top) for a in scores]
            total = sum(weights)
            concat += [sum(weights[j] * v[j][c] for j in range(s)) / total for c in cols]
        out.append(
            _affine(
                arrays[p + "self_attn.out_proj.weight"],
                arrays[p + "self_attn.out_proj.bias"],
                concat,
            )
        )
    return out


def _ffn(arrays: dict, p: str, v: list[float]) -> list[float]:
    """Spec step 5: W_2 relu(W_1 v + b_1) + b_2."""
    hidden = [
        max(a, 0.0) for a in _affine(arrays[p + "linear1.weight"], arrays[p + "linear1.bias"], v)
    ]
    return _affine(arrays[p + "linear2.weight"], arrays[p + "linear2.bias"], hidden)


def oracle(cfg: ModelConfig, arrays: dict, x: list[int]) -> tuple[float, list[list[float]]]:
    """(T(x), variances[k][n] of every layer norm's input) per model-spec, for one string."""
    tokens = list(x) + ([2] if cfg.eos else [])
    s = len(tokens)
    ys = []
    for n, t in enumerate(tokens):
        e, pos = list(arrays["token_embedding"][t]), _position_row(cfg, arrays, n)
        ys.append(
            [a + b for a, b in zip(e, pos, strict=True)] if cfg.embedding == "add" else e + pos
        )
    variances: list[list[float]] = []

    def norm(vs: list[list[float]], name: str) -> list[list[float]]:
        gain = arrays[name + ".weight"] if cfg.ln_affine else None
        bias = arrays[name + ".bias"] if cfg.ln_affine else None
        results = [_layer_norm(v, cfg.ln_eps, gain, bias) for v in vs]
        variances.append([var for _, var in results])
        return [out for out, _ in results]

    for layer in range(cfg.n_layers):
        p = f"layers.{layer}."
        if cfg.norm_first:
            att = _attention(cfg, arrays, p, norm(ys, p + "norm1"))
            hs = [[a + b for a, b in zip(y, m, strict=True)] for y, m in zip(ys, att, strict=True)]
            ff = [_ffn(arrays, p, v) for v in norm(hs, p + "norm2")]
            ys = [[a + b for a, b in zip(h, f, strict=True)] for h, f in zip(hs, ff, strict=True)]
        else:
            att = _attention(cfg, arrays, p, ys)
            hs = norm(
                [[a + b for a, b in zip(y, m, strict=True)] for y, m in zip(ys, att, strict=True)],
                p + "norm1",
            )
            ys = norm(
                [[a + b for a, b in zip(h, _ffn(arrays, p, h), strict=True)] for h in hs],
                p + "norm2",
            )
    if cfg.final_norm:  # the spec: pre-LN only; the project's extension: either (model-spec)
        ys = norm(ys, "final_norm")
    y_r = ys[s - 1]
    w = arrays["readout.weight"]
    terms = [w[i] * y_r[i] for i in range(cfg.d_model)]
    return sum(terms) + float(arrays["readout.bias"]), variances


# ---------------------------------------------------------------------- random configurations
ALL_OPTIONS = list(SPEC_OPTION_GRID)


def _random_params(cfg: ModelConfig, seed: int) -> Params:
    """Gaussian arrays (norm gains around 1), drawn here, not by verify.model.spec.init."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in param_shapes(cfg).items():
        scale = 1.0 / math.sqrt(shape[-1]) if len(shape) == 2 else 0.5
        arrays[name] = rng.normal(0.0, scale, size=shape)
        if "norm" in name and name.endswith("weight"):
            arrays[name] += 1.0
    return Params(cfg, arrays)


@pytest.mark.parametrize(
    "norm_first,eps,eos,embedding,pos,affine",
    ALL_OPTIONS,
    ids=[
        f"{'pre' if nf else 'post'}-eps{e:g}-{'eos' if eo else 'last'}-{em}-{p}-"
        f"{'affine' if a else 'plain'}"
        for nf, e, eo, em, p, a in ALL_OPTIONS
    ],
)
def test_forward_matches_oracle(norm_first, eps, eos, embedding, pos, affine) -> None:
    index = ALL_OPTIONS.index((norm_first, eps, eos, embedding, pos, affine))
    _check_against_oracle(index, norm_first, None, eps, eos, embedding, pos, affine)


# the project's extension of the spec (docs/model-spec.md): the two other final-norm layouts
EXTENDED_OPTIONS = [o for o in ALL_OPTIONS if o[3] == "add" and o[4] != "none"]


@pytest.mark.parametrize(
    "norm_first,eps,eos,embedding,pos,affine",
    EXTENDED_OPTIONS,
    ids=[
        f"{'pre-no-final' if nf else 'post-final'}-eps{e:g}-{'eos' if eo else 'last'}-{p}-"
        f"{'affine' if a else 'plain'}"
        for nf, e, eo, em, p, a in EXTENDED_OPTIONS
    ],
)
def test_extended_layouts_match_oracle(norm_first, eps, eos, embedding, pos, affine) -> None:
    """Pre-LN without a final norm and post-LN followed by one."""
    index = EXTENDED_OPTIONS.index((norm_first, eps, eos, embedding, pos, affine))
    _check_against_oracle(500 + index, norm_first, not norm_first, eps, eos, embedding, pos, affine)


def _check_against_oracle(
    index: int,
    norm_first: bool,
    final_norm: bool | None,
    eps: float,
    eos: bool,
    embedding: str,
    pos: str,
    affine: bool,
) -> None:
    heads = 1 + index % 2  # odd and even head counts
    cfg = ModelConfig(
        final_norm=final_norm,
        d_model=4,
        n_layers=2,
        n_heads=heads,
        d_ff=6,
        ln_eps=eps,
        norm_first=norm_first,
        ln_affine=affine,
        eos=eos,
        pos_encoding=pos,
        embedding=embedding,
        max_len=7,
    )
    params = _random_params(cfg, seed=index)
    rng = np.random.default_rng(1000 + index)
    n_bits = int(rng.integers(1, 6))
    bits = rng.integers(0, 2, size=(3, n_bits)).astype(np.uint8)
    result = forward(params, bits, diagnostics=True)
    arrays = dict(params.items())
    w = arrays["readout.weight"]
    for b in range(bits.shape[0]):
        t_oracle, variances = oracle(cfg, arrays, [int(v) for v in bits[b]])
        # Tolerance unit: the size of the terms summed into T, sum |w_i y_i| + |omega|.
        scale = float(np.abs(w * result.y_readout[b]).sum() + abs(arrays["readout.bias"]))
        err = abs(result.T[b] - t_oracle)
        print(f"string {b}: forward T={result.T[b]:.17g} oracle T={t_oracle:.17g} err={err:.2e}")
        assert err <= RTOL * scale, (err, scale)
        np.testing.assert_allclose(result.var[b], np.array(variances), rtol=1e-10, atol=0)
        z = 1.0 / np.sqrt(np.array(variances) + eps)
        beta = float(np.prod((1.0 + z).max(axis=1)))
        np.testing.assert_allclose(result.beta[b], beta, rtol=1e-10)


# ---------------------------------------------------------------------- hand-checkable cases
def _zero_arrays(cfg: ModelConfig) -> dict[str, np.ndarray]:
    arrays = {name: np.zeros(shape) for name, shape in param_shapes(cfg).items()}
    for name in arrays:
        if "norm" in name and name.endswith("weight"):
            arrays[name][:] = 1.0
    return arrays


def test_d2_layer_norm_reads_last_bit() -> None:
    """D = 2, eps = 0: LN((a, b)) = (sign(a - b), sign(b - a)) exactly. With attention and MLP
    zero, post-LN gives y^1_r = LN(LN(E[x_N])) = LN(E[x_N]); E[1] = (1, 0), E[0] = (0, 1),
    w = (1, 0), omega = 0.25, so T = 1.25 if x_N = 1 and -0.75 if x_N = 0."""
    cfg = ModelConfig(
        d_model=2,
        n_layers=1,
        n_heads=1,
        d_ff=3,
        ln_eps=0.0,
        ln_affine=False,
        eos=False,
        pos_encoding="none",
    )
    arrays = _zero_arrays(cfg)
    arrays["token_embedding"][:2] = [[0.0, 1.0], [1.0, 0.0]]
    arrays["readout.weight"][:] = [1.0, 0.0]
    arrays["readout.bias"] = np.array(0.25)
    bits = np.array([[0, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1]], dtype=np.uint8)
    expected = np.where(bits[:, -1] == 1, 1.25, -0.75)
    result = forward(Params(cfg, arrays), bits, diagnostics=True)
    print("forward T", result.T, "hand", expected)
    np.testing.assert_array_equal(result.T, expected)
    for b in range(len(bits)):
        assert oracle(cfg, arrays, list(bits[b]))[0] == expected[b]
    # The LN inputs are E[x_n] (var 1/4) and then LN(E[x_n]) = (+-1, -+1) (var 1): z = 2, 1.
    np.testing.assert_array_equal(result.var[:, 0, :], 0.25)
    np.testing.assert_array_equal(result.var[:, 1, :], 1.0)
    np.testing.assert_array_equal(result.beta, (1 + 2.0) * (1 + 1.0))


@pytest.mark.parametrize("affine", [True, False])
def test_uniform_attention_pre_ln_is_majority(affine: bool) -> None:
    """Pre-LN, D = 2, one head, W_q = W_k = 0 (uniform attention), W_v = W_o = I, MLP zero,
    E[1] = (1, 0), E[0] = (0, 1), E[eos] = 0, no positions, w = (1, 0), omega = 0.
    LN_1 maps a bit to c (1, -1) or -c (1, -1), c = (1/2) / sqrt(1/4 + eps), and eos to 0, so
    h_r = a (1, -1) with a = c (2k - N) / (N + 1), k the number of ones; LN_f then gives
    T = a / sqrt(a^2 + eps): positive iff 2k > N (majority)."""
    eps = 1e-5
    cfg = ModelConfig(
        d_model=2,
        n_layers=1,
        n_heads=1,
        d_ff=3,
        ln_eps=eps,
        norm_first=True,
        ln_affine=affine,
        eos=True,
        pos_encoding="none",
    )
    arrays = _zero_arrays(cfg)
    arrays["token_embedding"][:] = [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    arrays["layers.0.self_attn.in_proj_weight"][4:6] = np.eye(2)
    arrays["layers.0.self_attn.out_proj.weight"][:] = np.eye(2)
    arrays["readout.weight"][:] = [1.0, 0.0]
    n_bits = 5
    bits = np.array([[(i >> n) & 1 for n in range(n_bits)] for i in range(2**n_bits)], np.uint8)
    c = 0.5 / math.sqrt(0.25 + eps)
    ones = bits.sum(axis=1).astype(np.int64)
    a = c * (2 * ones - n_bits) / (n_bits + 1)
    expected = a / np.sqrt(a * a + eps)
    result = forward(Params(cfg, arrays), bits)
    err = np.abs(result.T - expected).max()
    print(f"max |forward - closed form| = {err:.2e}, T range [{expected.min()}, {expected.max()}]")
    assert err <= RTOL
    assert np.array_equal(result.T > 0, 2 * ones > n_bits)
    for b in (0, 7, 31):
        assert abs(oracle(cfg, arrays, list(bits[b]))[0] - expected[b]) <= RTOL


@pytest.mark.parametrize("embedding", ["add", "concat"])
def test_sinusoidal_positions_by_hand(embedding: str) -> None:
    """Tokens zero, attention and MLP zero, post-LN, eps = 0, plain LN: LN is idempotent, so
    y^1_r = LN(P[r]) with r = S - 1 counted from 0 and P[r, 2i] = sin(r / 10000^(2i/D')),
    P[r, 2i+1] = cos(...) (D' = D, or D/2 after the zero token half with concat)."""
    d = 4
    cfg = ModelConfig(
        d_model=d,
        n_layers=1,
        n_heads=2,
        d_ff=3,
        ln_eps=0.0,
        ln_affine=False,
        eos=True,
        pos_encoding="sinusoidal",
        embedding=embedding,
    )
    arrays = _zero_arrays(cfg)
    w = np.array([0.5, -1.0, 2.0, 0.25])
    arrays["readout.weight"][:] = w
    arrays["readout.bias"] = np.array(-0.125)
    n_bits = 3
    r = n_bits  # eos at position N (0-based)
    width = d if embedding == "add" else d // 2
    pos = [
        math.sin(r / 10000 ** (2 * (j // 2) / width))
        if j % 2 == 0
        else math.cos(r / 10000 ** (2 * (j // 2) / width))
        for j in range(width)
    ]
    v = np.array(pos if embedding == "add" else [0.0] * width + pos)
    ln = (v - v.mean()) / math.sqrt(((v - v.mean()) ** 2).mean())
    expected = float(w @ ln - 0.125)
    result = forward(Params(cfg, arrays), np.array([[1, 0, 1]], dtype=np.uint8))
    print(f"forward T={result.T[0]:.17g}, by hand {expected:.17g}")
    assert abs(result.T[0] - expected) <= RTOL * float(np.abs(w * ln).sum() + 0.125)
