"""Near-tight constructions for the explicit eps > 0 constants (C_infl of Lemma 2.9, C_Lip of
Lemma 3.1, the packing radius of Prop 3.5): one construction per step of the derivations in
docs/derivations.md, each built so that the step it targets is nearly an equality, and
full-model constructions in the regimes where each factor of a constant is needed.

Every construction computes a measured quantity and its bound; the bound always comes from
:mod:`verify.theory.bounds` (through its factor functions, looked up at call time), never from a
number written here. That is what lets a weakened factor (tests/test_mutations.py) show up as a
violation of the check that uses it.

- :class:`StepRow`: one comparison with the regime and the factor it targets.
- Unit steps of Lemma 2.9: the layer norm's endpoint bound, attention at another position
  (concentrated attention: the softmax weight e^{2R}, the value term; radial change: the
  reweighting term), two heads (the per-head sum), the MLP; the steps at the flipped position
  and the list of all steps (``infl_steps``) are in :mod:`verify.checks.infl_constructions`.
  The blocks are evaluated by the numpy transcriptions :func:`layer_norm`, :func:`mha`,
  :func:`ffn` of model-spec (tests/test_constructions.py checks them against
  ``verify.model.plain.forward``).
- Full-model constructions of Lemma 2.9 (:func:`ln_corner`, :func:`mlp_corner`,
  :func:`concentrated_attention`) evaluated with ``verify.model.plain.forward``.
- The constructions of Lemma 3.1 and Prop 3.5 are in :mod:`verify.checks.lipschitz_constructions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.model import ModelConfig, Params, forward, param_shapes
from verify.theory import bounds
from verify.theory.norms import parameter_norms

__all__ = [
    "StepRow",
    "best_by_factor",
    "build",
    "concentrated_attention",
    "factor_figure",
    "factor_table",
    "ffn",
    "influence",
    "layer_norm",
    "ln_corner",
    "mha",
    "mlp_corner",
    "outcome_rows",
]


@dataclass
class StepRow:
    """One measured-vs-bound comparison of a construction: the step (or the statement) it tests,
    the factor it makes nearly tight, the regime, and the numbers."""

    step: str
    factor: str
    regime: str
    measured: float
    bound: float
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.measured / self.bound if self.bound else math.inf

    @property
    def label(self) -> str:
        return f"{self.step} [{self.factor}; {self.regime}]"


# ----------------------------------------------------------------------------- spec blocks
def layer_norm(v: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """model-spec step 3 on the last axis: gamma (v - mean) / sqrt(var + eps) + beta."""
    c = v - v.mean(axis=-1, keepdims=True)
    var = (c * c).mean(axis=-1, keepdims=True)
    return gamma * c / np.sqrt(var + eps) + beta


def mha(y: np.ndarray, p: Params, layer: int = 0, rows: slice | None = None) -> np.ndarray:
    """model-spec step 4: multi-head attention of the sequence y (S, D) with layer ``layer``'s
    arrays (bidirectional, softmax(Q K^T / sqrt(d_h)) V per head, then W_o, b_o); ``rows``:
    only these query positions (default all)."""
    cfg = p.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    pre = f"layers.{layer}.self_attn."
    w, b = p[pre + "in_proj_weight"], p[pre + "in_proj_bias"]
    q, k, v = (y @ w[i * d : (i + 1) * d].T + b[i * d : (i + 1) * d] for i in range(3))
    q = q[rows] if rows is not None else q
    out = np.empty_like(q)
    for i in range(h):
        cols = slice(i * dh, (i + 1) * dh)
        s = q[:, cols] @ k[:, cols].T / math.sqrt(dh)
        s = np.exp(s - s.max(axis=1, keepdims=True))
        out[:, cols] = (s / s.sum(axis=1, keepdims=True)) @ v[:, cols]
    return out @ p[pre + "out_proj.weight"].T + p[pre + "out_proj.bias"]


def ffn(v: np.ndarray, p: Params, layer: int = 0) -> np.ndarray:
    """model-spec step 5: W_2 relu(W_1 v + b_1) + b_2."""
    pre = f"layers.{layer}."
    hid = np.maximum(v @ p[pre + "linear1.weight"].T + p[pre + "linear1.bias"], 0.0)
    return hid @ p[pre + "linear2.weight"].T + p[pre + "linear2.bias"]


def build(cfg: ModelConfig, arrays: dict[str, np.ndarray]) -> Params:
    """Parameters of ``cfg``: zeros, layer-norm gains 1, overridden by ``arrays``."""
    out = {}
    for name, shape in param_shapes(cfg).items():
        fill = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
        out[name] = np.full(shape, fill)
    for name, a in arrays.items():
        if name not in out:
            raise KeyError(name)
        out[name] = np.asarray(a, dtype=np.float64).reshape(out[name].shape)
    return Params(cfg, out)


def _in_proj(d: int, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray) -> np.ndarray:
    return np.concatenate([wq, wk, wv]).reshape(3 * d, d)


def _e(d: int, i: int) -> np.ndarray:
    out = np.zeros(d)
    out[i] = 1.0
    return out


# ----------------------------------------------------------------------------- Lemma 2.9 steps
def step_layer_norm(eps: float = 1e-2, var: float = 0.9) -> StepRow:
    """Step 2: ||LN(u) - LN(v)|| <= (g/4) (1+z_u)(1+z_v) ||u - v||. Equal variances (the
    harmonic factor is then z) and z near 1 (where z <= (1+z)^2/4 is an equality)."""
    d = 4
    c = math.sqrt(var)
    u, v = c * np.array([1.0, -1, 1, -1]), c * np.array([1.0, 1, -1, -1])
    gam, bet = np.ones(d), np.zeros(d)
    meas = float(np.linalg.norm(layer_norm(u, gam, bet, eps) - layer_norm(v, gam, bet, eps)))
    z = 1.0 / math.sqrt(var + eps)
    bound = bounds.infl_ln_factor(1.0) * (1 + z) * (1 + z) * float(np.linalg.norm(u - v))
    return StepRow(
        "Lemma 2.9 step 2: layer norm, endpoint bound",
        "layer-norm factor g/4",
        f"equal variances, z = {z:.4f}",
        meas,
        bound,
    )


def _attention_step_bound(p: Params, ys: list[np.ndarray], a: float, bt: float):
    lay = parameter_norms(p).layers[0]
    y_in = max(float(np.linalg.norm(y, axis=1).max()) for y in ys)
    return bounds.attention_influence(lay, y_in, p.config.d_head, a, bt)


def _attention_cfg(n_heads: int) -> ModelConfig:
    return ModelConfig(d_model=4, n_layers=1, n_heads=n_heads, d_ff=4, ln_eps=1e-2)


def _reader_attention(cfg: ModelConfig, query_axis: int, scale: float) -> Params:
    """One attention layer whose heads all read one axis: head h's query reads e_{query_axis},
    its key and value read e1 (first row of the head; query and key scaled by ``scale``, value
    by 1), and W_o = I."""
    d, dh = cfg.d_model, cfg.d_head
    wq, wk, wv = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    for h in range(cfg.n_heads):
        wq[h * dh, query_axis] = scale
        wk[h * dh, 0] = scale
        wv[h * dh, 0] = 1.0
    return build(
        cfg,
        {
            "layers.0.self_attn.in_proj_weight": _in_proj(d, wq, wk, wv),
            "layers.0.self_attn.out_proj.weight": np.eye(d),
        },
    )


def step_attention_concentrated(r: float, seq_len: int, n_heads: int = 1) -> StepRow:
    """Step 3, another position m (the readout): S ||Δ MHA_m|| <= e^{2R} (V + 2 v_c G_k) a.

    The query at m is aligned with the key of the flipped position n after the flip (logit +R),
    every other key is anti-aligned (logit -R), so p_mn is close to its cap e^{2R}/S when
    S >> e^{2R}; the flip also changes n's value by V a (values along the key axis). Measured
    over bound tends to 1/(1 + 2R): tight for small R (the value term and e^{2R}); at large R
    it is what removing e^{2R} would break. ``n_heads`` = 2: two identical heads of width 2
    and W_o = I, so the per-head Minkowski sum sqrt(sum_h c_h^2) is attained."""
    cfg = _attention_cfg(n_heads)
    d, dh = cfg.d_model, cfg.d_head
    # R = s^2 Y^2 / sqrt(d_h) with Y = 1; queries read e2, keys and values e1
    p = _reader_attention(cfg, 1, math.sqrt(r * math.sqrt(dh)))
    n = 0
    y = np.tile(-_e(d, 0), (seq_len, 1))
    y[-1] = _e(d, 1)  # the readout (query) position
    y2 = y.copy()
    y2[n] = _e(d, 0)  # the flip: key and value of n turn to +e1
    a = float(np.linalg.norm(y2[n] - y[n]))
    last = slice(seq_len - 1, seq_len)
    meas = seq_len * float(np.linalg.norm(mha(y2, p, rows=last)[0] - mha(y, p, rows=last)[0]))
    bound = _attention_step_bound(p, [y, y2], a, 0.0)[1]
    factor = "per-head sum (2 heads)" if n_heads > 1 else "e^{2R}, value term V, W_o"
    return StepRow(
        "Lemma 2.9 step 3: attention at another position, S ||Δo_m||",
        factor,
        f"concentrated attention, R = {r:g}, S = {seq_len}",
        meas,
        bound,
        {"R": r, "S": seq_len, "heads": n_heads},
    )


def step_attention_radial(r: float, seq_len: int, eps: float = 1e-3) -> StepRow:
    """Step 3, another position m, with the flipped position's key and value both near their
    maxima: y_n moves radially from (1 - eps) Y e1 to Y e1 (W_k and W_v read e1, so its logit
    goes from (1 - eps) R to R and its value from (1 - eps) V Y to V Y), every other position
    sits at -Y e1 (logit -R, value -V Y) and the query reads e2. In the linear regime
    S p_mn ~ e^{2R}, Δp_mn ~ p_mn eps R and ||v_n - v_bar|| ~ 2 V Y: the value term and the
    reweighting term 2 v_c G_k of the bound are both attained (ratio -> 1 as S >> e^{2R},
    eps -> 0), which is what halving the reweighting term would break."""
    cfg = _attention_cfg(1)
    d, dh = cfg.d_model, cfg.d_head
    p = _reader_attention(cfg, 1, math.sqrt(r * math.sqrt(dh)))
    n = 0
    y = np.tile(-_e(d, 0), (seq_len, 1))
    y[-1] = _e(d, 1)
    y[n] = (1.0 - eps) * _e(d, 0)
    y2 = y.copy()
    y2[n] = _e(d, 0)
    a = float(np.linalg.norm(y2[n] - y[n]))
    last = slice(seq_len - 1, seq_len)
    meas = seq_len * float(np.linalg.norm(mha(y2, p, rows=last)[0] - mha(y, p, rows=last)[0]))
    bound = _attention_step_bound(p, [y, y2], a, 0.0)[1]
    return StepRow(
        "Lemma 2.9 step 3: attention at another position, S ||Δo_m||",
        "softmax reweighting 2 v_c G_k (with e^{2R}, V)",
        f"radial change of the attended position, R = {r:g}, S = {seq_len}",
        meas,
        bound,
        {"R": r, "S": seq_len, "eps": eps},
    )


def step_mlp() -> StepRow:
    """Step 4: ||Δ FFN|| <= ||W_2|| ||W_1|| ||Δ||, every ReLU active and W_2 W_1 = 3 I on the
    direction of the change (up to a 0.1 component on a shorter axis)."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=1e-2)
    p = build(
        cfg,
        {
            "layers.0.linear1.weight": np.diag([2.0, 2.0, 2.0, 1.8]),
            "layers.0.linear1.bias": np.full(4, 10.0),
            "layers.0.linear2.weight": 1.5 * np.eye(4),
        },
    )
    u = np.array([0.3, -0.2, 0.1, 0.4])
    delta = 1e-3 * np.array([1.0, 0.0, 0.0, 0.1])
    meas = float(np.linalg.norm(ffn(u + delta, p) - ffn(u, p)))
    lay = parameter_norms(p).layers[0]
    bound = bounds.infl_ffn_factor(lay) * float(np.linalg.norm(delta))
    return StepRow(
        "Lemma 2.9 step 4: MLP, ||Δ FFN|| <= F ||Δ||",
        "MLP factor F = ||W_2|| ||W_1||",
        "every ReLU active, W_2 W_1 aligned",
        meas,
        bound,
    )


# ----------------------------------------------------------------------------- Lemma 2.9 models
def influence(p: Params, n_bits: int, flip: int, x: np.ndarray | None = None):
    """(I_n, the Lemma 2.9 bound, the off-position bound bt_L beta beta' / S) for flipping bit
    ``flip`` of x (default all zeros) of length ``n_bits``."""
    if x is None:
        x = np.zeros(n_bits, dtype=np.uint8)
    xn = x.copy()
    xn[flip] ^= 1
    r = forward(p, np.stack([x, xn]), diagnostics=True)
    meas = float(np.linalg.norm(r.y_readout[0] - r.y_readout[1]))
    cfg = p.config
    at_r = (not cfg.eos) and flip == n_bits - 1
    a, bt = bounds.c_infl_parts(p)  # the norms and the recursion once
    c = max(a, bt)  # = bounds.c_infl(p): rounding to float64 is monotone, so it keeps the max
    bound = float(bounds.lemma_2_9_bound(c, r.beta[0], r.beta[1], n_bits, at_r))
    off = bt * float(r.beta[0] * r.beta[1]) / cfg.seq_len(n_bits)
    return meas, bound, off


def corner_config(n_bits: int, eps: float, norm_first: bool = False) -> ModelConfig:
    """The corners' architecture: D = d_ff = 4, one layer and head, no eos (the readout sits on
    the last bit, so flipping it costs 1/N + 1), no positional encoding."""
    return ModelConfig(
        d_model=4,
        n_layers=1,
        n_heads=1,
        d_ff=4,
        ln_eps=eps,
        norm_first=norm_first,
        eos=False,
        pos_encoding="none",
        max_len=max(n_bits, 8),
    )


def ln_corner(n_bits: int, norm_first: bool = False, eps: float = 1e-3) -> Params:
    """Attention and MLP off, antipodal tokens with var + eps = 1 (z = 1 at every norm), gains 1,
    no eos (the readout bit is flipped): I_n / bound = N / (N + 1) post-LN. Pre-LN the residual
    stream skips norm1 and norm2, so beta counts 2 norms more than the path uses (ratio 1/16)."""
    cfg = corner_config(n_bits, eps, norm_first)
    tok = math.sqrt(1.0 - eps) * np.array([1.0, -1, 1, -1])
    return build(cfg, {"token_embedding": np.stack([-tok, tok, tok])})


def mlp_corner(n_bits: int, s: float = 3.0, eps: float = 1e-3) -> Params:
    """Post-LN, attention off, FFN(h) = s h on the stream (W_1 = s I, every ReLU active through
    b_1, b_2 = -W_2 b_1), gain 1/(1+s) at norm1 so that z = 1 at both norms: the MLP factor
    (1 + F) is attained and I_n / bound = N / (N + 1)."""
    cfg = corner_config(n_bits, eps)
    tok = math.sqrt(1.0 - eps) * np.array([1.0, -1, 1, -1])
    b1 = np.full(4, 10.0)
    return build(
        cfg,
        {
            "token_embedding": np.stack([-tok, tok, tok]),
            "layers.0.linear1.weight": s * np.eye(4),
            "layers.0.linear1.bias": b1,
            "layers.0.linear2.weight": np.eye(4),
            "layers.0.linear2.bias": -b1,
            "layers.0.norm1.weight": np.full(4, 1.0 / (1.0 + s)),
        },
    )


def concentrated_attention(
    n_bits: int,
    scale: float = 3.0,
    emb: float = 1.0,
    eos_key: float = 1.0,
    value: float = 1.0,
    out: float = 1.0,
    eps: float = 1e-2,
    norm_first: bool = False,
) -> Params:
    """Issue 11's model: D = 4, eos, W_q = W_k = scale e1 e1^T; token 1 at
    emb (1, .3, -.2, -.1), token 0 at emb (-1, .3, -.2, -.1), eos at emb (eos_key, -.3, .2, .1):
    on x = 0...0 with bit n flipped to 1, the eos query attends to the one flipped token (logit
    +R against -R for the zeros). W_v = value I, W_o = out I, MLP off; post-LN, or pre-LN with
    ``norm_first``. The eos readout's change is carried by the softmax weight p_{eos,n}: the
    regime where the factor e^{2R} of C_infl is needed (without it the bound fails once
    N >> e^{2R}/(1 + 2R))."""
    cfg = ModelConfig(
        d_model=4,
        n_layers=1,
        n_heads=1,
        d_ff=4,
        ln_eps=eps,
        norm_first=norm_first,
        pos_encoding="none",
        max_len=8,
    )
    d = 4
    e1 = _e(d, 0)
    wqk = scale * np.outer(e1, e1)
    one = emb * np.array([1.0, 0.3, -0.2, -0.1])
    zero = emb * np.array([-1.0, 0.3, -0.2, -0.1])
    eos = emb * np.array([eos_key, -0.3, 0.2, 0.1])
    return build(
        cfg,
        {
            "token_embedding": np.stack([zero, one, eos]),
            "layers.0.self_attn.in_proj_weight": _in_proj(d, wqk, wqk, value * np.eye(d)),
            "layers.0.self_attn.out_proj.weight": out * np.eye(d),
        },
    )


# ----------------------------------------------------------------------------- check outcome
def best_by_factor(rows: list[StepRow]) -> dict[str, float]:
    """The largest measured/bound per factor, in first-seen order."""
    out: dict[str, float] = {}
    for r in rows:
        out[r.factor] = max(out.get(r.factor, -math.inf), r.ratio)
    return out


def factor_table(rows: list[StepRow]) -> list[str]:
    """Notes: per factor, the regime that reached the best ratio (the report's small table)."""
    best: dict[str, StepRow] = {}
    for r in rows:
        if r.factor not in best or r.ratio > best[r.factor].ratio:
            best[r.factor] = r
    lines = ["best measured/bound per factor (factor | regime | ratio):"]
    lines += [f"{f} | {r.regime} | {r.ratio:.4g}" for f, r in best.items()]
    return lines


def factor_figure(name: str, title: str, rows: list[StepRow]):
    """The best measured/bound per factor as its distance from 1 (kind "ratios": log-scale
    bars of 1 - ratio, each annotated with the ratio; 1 = the step is attained)."""
    from verify.registry import FigureData

    best = best_by_factor(rows)
    return FigureData(
        name,
        title,
        "ratios",
        {
            "series": [
                {"label": "best measured / bound", "x": list(best), "y": list(best.values())},
            ],
            "xlabel": "1 - measured/bound (log; shorter: nearly attained)",
        },
    )


def outcome_rows(rows: list[StepRow]):
    """Registry rows (label with factor and regime; the info in ``extra``)."""
    from verify.registry import Row

    return [
        Row(r.label, r.measured, r.bound, extra={"factor": r.factor, "regime": r.regime, **r.info})
        for r in rows
    ]
