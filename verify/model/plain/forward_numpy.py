"""The straightforward vectorised float64 forward pass (numpy), every position in every layer.

This is the plain pass of model-spec "Forward pass", written for clarity; the fast Numba path
(``verify.model.per_string``, ``verify.model.exhaustive``) and the high-precision / rigorous passes
are checked against it.
"""

from __future__ import annotations

import numpy as np

from verify.model.spec.config import ModelConfig
from verify.model.spec.ln_forms import coefficient


def sinusoidal_table(n_positions: int, width: int) -> np.ndarray:
    """P[n, 2i] = sin(n / 10000^(2i/width)), P[n, 2i+1] = cos(same), n = 0..n_positions-1."""
    pos = np.arange(n_positions, dtype=np.float64)[:, None]
    even = np.arange(0, width, 2, dtype=np.float64)
    angle = pos / np.power(10000.0, even / width)[None, :]
    table = np.zeros((n_positions, width))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle[:, : width // 2])
    return table


def position_table(config: ModelConfig, arrays: dict[str, np.ndarray], seq_len: int) -> np.ndarray:
    """Rows 0..S-1 of the positional encoding (zeros for "none"), width D' = config.d_embed."""
    if config.pos_encoding == "learned":
        return arrays["pos_embedding"][:seq_len]
    if config.pos_encoding == "sinusoidal":
        return sinusoidal_table(seq_len, config.d_embed)
    return np.zeros((seq_len, config.d_embed))


def embed(config: ModelConfig, arrays: dict[str, np.ndarray], bits: np.ndarray) -> np.ndarray:
    """y^0 (B, S, D): token rows (0, 1, eos=2) plus or concatenated with positions."""
    b, n = bits.shape
    tokens = bits.astype(np.int64)
    if config.eos:
        tokens = np.concatenate([tokens, np.full((b, 1), 2, dtype=np.int64)], axis=1)
    s = tokens.shape[1]
    tok = arrays["token_embedding"][tokens]
    pos = np.broadcast_to(position_table(config, arrays, s)[None], tok.shape)
    if config.embedding == "add":
        return tok + pos
    return np.concatenate([tok, pos], axis=2)


def layer_norm(
    v: np.ndarray,
    eps: float,
    gain: np.ndarray | None,
    bias: np.ndarray | None,
    form: str = "torch",
) -> tuple[np.ndarray, np.ndarray]:
    """(LN(v), population variance of v) over the last axis, LN of ``form``
    (``verify.model.spec.ln_forms``: torch's or the annotated one); at eps = 0 a zero variance
    gives NaN (0/0), never a number."""
    mean = v.mean(axis=-1, keepdims=True)
    c = v - mean
    var = (c * c).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = c * coefficient(var, eps, v.shape[-1], form)[..., None]
    if gain is not None:
        out = out * gain + bias
    return out, var


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x W^T + b over the last axis of x (..., n) with W (m, n): one matrix product over all
    leading axes (a stacked product runs one small GEMM per leading index, ~2x slower)."""
    out = x.reshape(-1, x.shape[-1]) @ w.T
    return out.reshape(x.shape[:-1] + (w.shape[0],)) + b


def mha(
    y: np.ndarray,
    w_in: np.ndarray,
    b_in: np.ndarray,
    w_o: np.ndarray,
    b_o: np.ndarray,
    n_heads: int,
) -> np.ndarray:
    """torch.nn.MultiheadAttention (no mask): softmax(Q_h K_h^T / sqrt(d_h)) V_h, out_proj."""
    b, s, d = y.shape
    dh = d // n_heads
    qkv = linear(y, w_in, b_in)
    q, k, v = (
        qkv[..., i * d : (i + 1) * d].reshape(b, s, n_heads, dh).transpose(0, 2, 1, 3)
        for i in range(3)
    )  # (b, h, s, dh)
    scores = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(dh)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    att = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    return linear(att, w_o, b_o)


def ffn(
    h: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    """W_2 relu(W_1 h + b_1) + b_2."""
    return linear(np.maximum(linear(h, w1, b1), 0.0), w2, b2)


def forward_dense(
    config: ModelConfig, arrays: dict[str, np.ndarray], bits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T (B,), layer-norm input variances (B, K, S), readout vector (B, D)) for a batch."""
    eps = config.ln_eps
    y = embed(config, arrays, bits)
    b, s, _ = y.shape
    variances = np.empty((b, config.n_norms, s))

    def norm(v: np.ndarray, name: str, k: int) -> np.ndarray:
        gain = arrays.get(name + ".weight") if config.ln_affine else None
        bias = arrays.get(name + ".bias") if config.ln_affine else None
        out, variances[:, k, :] = layer_norm(v, eps, gain, bias, config.ln_form)
        return out

    for layer in range(config.n_layers):
        p = f"layers.{layer}."
        att_args = (
            arrays[p + "self_attn.in_proj_weight"],
            arrays[p + "self_attn.in_proj_bias"],
            arrays[p + "self_attn.out_proj.weight"],
            arrays[p + "self_attn.out_proj.bias"],
            config.n_heads,
        )
        ff_args = (
            arrays[p + "linear1.weight"],
            arrays[p + "linear1.bias"],
            arrays[p + "linear2.weight"],
            arrays[p + "linear2.bias"],
        )
        if config.norm_first:
            h = y + mha(norm(y, p + "norm1", 2 * layer), *att_args)
            y = h + ffn(norm(h, p + "norm2", 2 * layer + 1), *ff_args)
        else:
            h = norm(y + mha(y, *att_args), p + "norm1", 2 * layer)
            y = norm(h + ffn(h, *ff_args), p + "norm2", 2 * layer + 1)
    if config.final_norm:
        y = norm(y, "final_norm", 2 * config.n_layers)
    y_r = np.ascontiguousarray(y[:, -1, :])
    t = y_r @ arrays["readout.weight"] + arrays["readout.bias"]
    return t, variances, y_r
