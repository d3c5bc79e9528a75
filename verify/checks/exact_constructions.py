"""Hand-built eps = 0 transformers that recognise a function exactly with a margin: MAJORITY
(every odd N), PARITY (one given N) and DICTATOR_i / FIRST (every N up to the position table),
used by Conj 5.5 and the in-action checks of Cor 5.1-5.4 (perturbed by Unif([-rho, rho]^M)).

All are one post-LN layer (H = 1, eps = 0, eos readout) of width D >= 4: the construction lives
in the first four coordinates (g = (1, -1, 0, 0), e = (0, 0, 1, -1), q = (0, 0, 1, 1)) and every
other parameter is 0 (they are perturbed all the same). With ``pos_encoding="learned"`` the
position table is a parameter (zero in the construction unless it carries the position, as for
DICTATOR); fixed sinusoidal encodings are not used: at eps = 0 the eos input would carry
PE(N + 1), of size O(1), against signals of size 1/N.
"""

from __future__ import annotations

import math

import numpy as np

from verify.model import ModelConfig, Params, param_shapes
from verify.validation import check_int

__all__ = ["dictator_params", "majority_params", "parity_params", "subset_parity_params"]

MLP_GAIN = 100.0  # amplitude A of PARITY's MLP output against |h| <= sqrt(D)
ATTENTION_LOGIT = 12.0  # score of the attended positions (the others score 0)


def _vec(d: int, head: tuple[float, ...]) -> np.ndarray:
    v = np.zeros(d)
    v[: len(head)] = head
    return v


def _base(
    d_model: int, pos_encoding: str, max_len: int, d_ff: int | None = None
) -> tuple[ModelConfig, dict[str, np.ndarray]]:
    d = check_int("d_model", d_model, minimum=4)
    cfg = ModelConfig(
        d_model=d,
        n_layers=1,
        n_heads=1,
        ln_eps=0.0,
        pos_encoding=pos_encoding,
        max_len=max_len,
        d_ff=d_ff,
    )
    arr = {k: np.zeros(s) for k, s in param_shapes(cfg).items()}
    for norm in ("norm1", "norm2"):
        arr[f"layers.0.{norm}.weight"] = np.ones(d)
    return cfg, arr


def majority_params(d_model: int = 4, pos_encoding: str = "none", max_len: int = 64) -> Params:
    """MAJORITY at every odd N with margin sqrt(2) (D = 4): tokens E[1] = g, E[0] = -g,
    E[eos] = 0; uniform attention (W_q = W_k = 0, W_v = W_o = I) makes the eos input r g,
    r = (#1 - #0)/(N+1); the eps = 0 layer norm maps it to sign(r) sqrt(D/2) g whatever |r|
    (the blowup is z ~ N); the MLP is zero, norm2 the identity on it, w = g/2."""
    cfg, arr = _base(d_model, pos_encoding, max_len)
    d = cfg.d_model
    g = _vec(d, (1.0, -1.0))
    arr["token_embedding"][0] = -g
    arr["token_embedding"][1] = g
    arr["layers.0.self_attn.in_proj_weight"][2 * d : 3 * d] = np.eye(d)
    arr["layers.0.self_attn.out_proj.weight"] = np.eye(d)
    arr["readout.weight"] = g / 2
    return Params(cfg, arr)


def _parity_feature(n_bits: int, d: int) -> np.ndarray:
    """phi_c = h_0 at the eos position for c ones (c = 0..N): the eos input of norm1 is
    r g + kappa e, r = (2c - N)/(N + 1), kappa = (N + 2)/(N + 1) (eos attends to itself too),
    centred, variance (2 r^2 + 2 kappa^2)/D, so phi = r sqrt(D / (2 r^2 + 2 kappa^2))."""
    c = np.arange(n_bits + 1)
    r = (2 * c - n_bits) / (n_bits + 1)
    kappa = (n_bits + 2) / (n_bits + 1)
    return r * np.sqrt(d / (2 * r * r + 2 * kappa * kappa))


def _parity_mlp(arr: dict[str, np.ndarray], phi: np.ndarray, q: np.ndarray) -> None:
    """Layer 0's MLP: the piecewise-linear interpolant of (phi_c, s_c), s_c = +1 for odd c,
    -1 for even c (c = 0..len(phi)-1), along q with amplitude MLP_GAIN, from ReLUs reading h_0:
    unit 0 is relu(phi - phi_0 + 1) (linear on the data), unit j the kink at phi_j."""
    c = np.arange(phi.size)
    s = np.where(c % 2 == 1, 1.0, -1.0)
    slopes = np.diff(s) / np.diff(phi)  # slope of the interpolant on [phi_j, phi_j+1]
    knots = np.concatenate([[phi[0] - 1.0], phi[1:-1]])
    weights = np.concatenate([[slopes[0]], np.diff(slopes)])
    w1 = np.zeros((knots.size, q.size))
    w1[:, 0] = 1.0
    arr["layers.0.linear1.weight"] = w1
    arr["layers.0.linear1.bias"] = -knots
    arr["layers.0.linear2.weight"] = MLP_GAIN * np.outer(q, weights)
    arr["layers.0.linear2.bias"] = MLP_GAIN * (s[0] - slopes[0]) * q


def parity_params(
    n_bits: int, d_model: int = 4, pos_encoding: str = "learned", max_len: int | None = None
) -> Params:
    """PARITY at one N with margin about sqrt(2): uniform attention gives the eos a feature
    phi_c strictly increasing in the number of ones c (:func:`_parity_feature`); an MLP of N
    ReLUs interpolates (phi_c, +-1) piecewise linearly (+1 for odd c) along q with amplitude A,
    so norm2 normalises A s q + h to about s sqrt(D/2) q / ... and w = q / 2 reads s sqrt(2)."""
    n = check_int("n_bits", n_bits, minimum=1)
    cfg, arr = _base(d_model, pos_encoding, max_len or max(n, 1), d_ff=n)
    d = cfg.d_model
    g, e, q = _vec(d, (1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, 1.0))
    arr["token_embedding"][0] = -g
    arr["token_embedding"][1] = g
    arr["token_embedding"][2] = e
    arr["layers.0.self_attn.in_proj_weight"][2 * d : 3 * d] = np.eye(d)
    arr["layers.0.self_attn.out_proj.weight"] = np.eye(d)
    _parity_mlp(arr, _parity_feature(n, d), q)
    arr["readout.weight"] = q / 2
    return Params(cfg, arr)


def dictator_params(i: int, max_len: int, d_model: int = 4, negate: bool = False) -> Params:
    """DICTATOR x_i (FIRST: i = 1; ``negate``: NOT x_i) at every N in [i, max_len] with margin
    about sqrt(D/2)/... (learned positions): position i's table row is p = a q; the query is the
    constant lambda q-hat (in_proj bias), keys project on q, so position i scores
    ATTENTION_LOGIT and every other position 0; values project on g, so the eos input is about
    +-g + e, which norm1 maps to +-sqrt(D/4) g + ..., read by w = +-g/2."""
    i = check_int("i", i, minimum=1)
    cfg, arr = _base(d_model, "learned", check_int("max_len", max_len, minimum=i))
    d = cfg.d_model
    g, e, q = _vec(d, (1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, 1.0))
    qhat = q / math.sqrt(2.0)
    arr["token_embedding"][0] = -g
    arr["token_embedding"][1] = g
    arr["token_embedding"][2] = e
    arr["pos_embedding"][i - 1] = qhat  # positions counted from 0
    w = arr["layers.0.self_attn.in_proj_weight"]
    w[d : 2 * d] = np.outer(qhat, qhat)  # W_k: projection on q
    w[2 * d : 3 * d] = np.outer(g, g) / 2.0  # W_v: projection on g
    # score = (lambda qhat) . (qhat qhat^T y) / sqrt(d_h) = lambda / sqrt(D) at position i
    arr["layers.0.self_attn.in_proj_bias"][:d] = ATTENTION_LOGIT * math.sqrt(d) * qhat
    arr["layers.0.self_attn.out_proj.weight"] = np.eye(d)
    arr["readout.weight"] = (-g if negate else g) / 2
    return Params(cfg, arr)


def subset_parity_params(subset: list[int], max_len: int, d_model: int = 4) -> Params:
    """The parity of the bits in ``subset`` (1-based; m-sparse PARITY) at every N in
    [max(subset), max_len], learned positions: the subset's table rows are q-hat, the query is
    the constant lambda q-hat, so the eos attends (almost) uniformly to the m subset positions;
    values project on g, so the eos input is e + r g, r = (2c - m)/m for c ones in the subset;
    norm1 gives phi_c = r sqrt(D / (2 r^2 + 2)), and the MLP of :func:`_parity_mlp` with m
    ReLUs maps it to +-1 along q (w = q/2)."""
    m = len(subset)
    cfg, arr = _base(d_model, "learned", check_int("max_len", max_len, minimum=max(subset)), m)
    d = cfg.d_model
    g, e, q = _vec(d, (1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, -1.0)), _vec(d, (0.0, 0.0, 1.0, 1.0))
    qhat = q / math.sqrt(2.0)
    arr["token_embedding"][0] = -g
    arr["token_embedding"][1] = g
    arr["token_embedding"][2] = e
    for i in subset:
        arr["pos_embedding"][i - 1] = qhat
    w = arr["layers.0.self_attn.in_proj_weight"]
    w[d : 2 * d] = np.outer(qhat, qhat)
    w[2 * d : 3 * d] = np.outer(g, g) / 2.0
    arr["layers.0.self_attn.in_proj_bias"][:d] = ATTENTION_LOGIT * math.sqrt(d) * qhat
    arr["layers.0.self_attn.out_proj.weight"] = np.eye(d)
    c = np.arange(m + 1)
    r = (2 * c - m) / m
    _parity_mlp(arr, r * np.sqrt(d / (2 * r * r + 2)), q)
    arr["readout.weight"] = q / 2
    return Params(cfg, arr)
