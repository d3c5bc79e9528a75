"""Near-tight constructions for C_infl (Lemma 2.9) at the flipped position and through the pre-LN
layer norms, and the list of all unit steps of C_infl (:func:`infl_steps`).

- :func:`step_attention_at_flip`: the query of the flipped position n turns (keys and values of
  the other positions +-Y): the query part of the logit change alone (ratio -> 2/3).
- :func:`step_attention_at_flip_split`: the query and the key of n turn apart (W_q, W_k rotate
  the change into each other's direction), S = 2 so that p_n = 1/2: the logit changes are
  +2x a at n and -x a at the other position, the values +-V Y, so Cov_p(Δs, v) reaches
  v_c (max Δs - min Δs) / 2, the term of the bound (docs/derivations.md, Lemma 2.9, step 3).
- :func:`pre_ln_corner`: pre-LN, the change passes through norm2, the MLP and the final norm at
  z ~ 1, while norm1 is off the path and saturated (z ~ 0, so its factor of beta is ~1): the
  layer-norm factors of the pre-LN recursion are attained (the plain layer-norm corner reaches
  1/16 pre-LN: the residual stream skips norm1 and norm2 while beta beta' counts them).

Every bound comes from :mod:`verify.theory.bounds` (factor functions looked up at call time).
"""

from __future__ import annotations

import math

import numpy as np

from verify.checks.constructions import (
    StepRow,
    _attention_cfg,
    _attention_step_bound,
    _e,
    _in_proj,
    _reader_attention,
    build,
    corner_config,
    mha,
    step_attention_concentrated,
    step_attention_radial,
    step_layer_norm,
    step_mlp,
)
from verify.model import Params

__all__ = ["infl_steps", "pre_ln_corner", "step_attention_at_flip", "step_attention_at_flip_split"]


def _at_flip_row(p: Params, y: np.ndarray, y2: np.ndarray, n: int) -> tuple[float, float]:
    """(||Δ MHA_n||, the step-3 bound at n with a = ||y2_n - y_n||, bt = 0)."""
    a = float(np.linalg.norm(y2[n] - y[n]))
    at = slice(n, n + 1)
    meas = float(np.linalg.norm(mha(y2, p, rows=at)[0] - mha(y, p, rows=at)[0]))
    return meas, _attention_step_bound(p, [y, y2], a, 0.0)[0]


def step_attention_at_flip(qky2: float, seq_len: int, a: float = 1e-4) -> StepRow:
    """Step 3, the flipped position n: ||Δ MHA_n|| <= (V + v_c (G_q + G_k / 2)) a (first layer,
    bt = 0). n's query turns (its input moves by a along the query axis, key and value of n stay
    0); the other positions alternate keys and values +-Y along one axis, so the query change
    moves softmax weight from the negative to the positive values: logit changes +-x a
    (x = QKY^2 / sqrt(d_h)) at uniform weights, Cov_p(Δs, v) = x a v_c. Measured over bound
    tends to x / (1 + 1.5 x) -> 2/3: the key part G_k / 2 of the term needs a key change at n
    (:func:`step_attention_at_flip_split`)."""
    cfg = _attention_cfg(1)
    d = cfg.d_model
    p = _reader_attention(cfg, 2, math.sqrt(qky2))
    n = seq_len - 1
    signs = np.where(np.arange(seq_len) % 2 == 0, 1.0, -1.0)
    y = signs[:, None] * _e(d, 0)[None, :]
    y[n] = 0.0
    y2 = y.copy()
    y2[n] = a * _e(d, 2)
    meas, bound = _at_flip_row(p, y, y2, n)
    return StepRow(
        "Lemma 2.9 step 3: attention at the flipped position, ||Δo_n||",
        "softmax reweighting at the flipped position, v_c range(Δs)/2",
        f"query change only, QKY^2 = {qky2:g}, S = {seq_len}",
        meas,
        bound,
        {"QKY^2": qky2, "S": seq_len},
    )


def step_attention_at_flip_split(x: float = 100.0, a: float = 1e-7) -> StepRow:
    """Step 3, the flipped position n, with the whole reweighting term attained. D = d_h = 4,
    one head, Y = 1, V = 1, W_o = I, W_q = s (e0 e0^T + e1 e2^T), W_k = s (e1 e0^T + e0 e2^T)
    (Q = K = s, x = s^2 / sqrt(d_h)), W_v = e3 e0^T. Two positions (S = 2): the other one at
    -e0, n at e0 moving to e0 + a e2. Before the change q_n = s e0, k_n = s e1, k_other = -s e1:
    both logits 0, p_n = 1/2. The change turns q_n by s a e1 and k_n by s a e0, so Δs_n =
    (q_n . Δk_n + Δq . k'_n) / sqrt(d_h) = 2 x a (= (Q k + q K) a / sqrt(d_h), both parts at
    their maximum) and Δs_other = Δq . k_other / sqrt(d_h) = -x a (= -Q k a / sqrt(d_h)): the
    range 3 x a of the logit changes is the bound's (2 G_q + G_k) a. The values are +-V Y, so
    Cov_p(Δs, v) = (1/4) 3 x a 2 = 1.5 x a = v_c range / 2 (Popoviciu's variance bound and
    Cauchy-Schwarz both equalities). n's value does not change (W_v e2 = 0), so the value term
    V a of the bound is not met: measured / bound = 1.5 x / (1 + 1.5 x) (0.993 at x = 100).
    Against the old term 2 v_c G = 4 x v_c the ratio would be 3/8."""
    cfg = _attention_cfg(1)
    d = cfg.d_model
    s = math.sqrt(x * math.sqrt(cfg.d_head))
    wq, wk, wv = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    wq[0, 0], wq[1, 2] = s, s
    wk[1, 0], wk[0, 2] = s, s
    wv[3, 0] = 1.0
    p = build(
        cfg,
        {
            "layers.0.self_attn.in_proj_weight": _in_proj(d, wq, wk, wv),
            "layers.0.self_attn.out_proj.weight": np.eye(d),
        },
    )
    n = 1
    y = np.stack([-_e(d, 0), _e(d, 0)])
    y2 = y.copy()
    y2[n] = _e(d, 0) + a * _e(d, 2)
    meas, bound = _at_flip_row(p, y, y2, n)
    return StepRow(
        "Lemma 2.9 step 3: attention at the flipped position, ||Δo_n||",
        "softmax reweighting at the flipped position, v_c range(Δs)/2",
        f"query and key of n turn apart, QKY^2/sqrt(d_h) = {x:g}, S = 2",
        meas,
        bound,
        {"x": x, "S": 2, "a": a},
    )


def infl_steps(seq_len: int) -> list[StepRow]:
    """The unit steps of C_infl, each nearly tight in its regime (docs/derivations.md#teeth)."""
    rows = [step_layer_norm()]
    for r in (0.002, 0.5, 2.0):
        rows.append(step_attention_concentrated(r, seq_len))
    rows.append(step_attention_concentrated(0.002, seq_len, n_heads=2))
    rows.append(step_attention_radial(1.0, seq_len))
    rows.append(step_attention_at_flip(4.0, seq_len))
    rows.append(step_attention_at_flip_split())
    rows.append(step_mlp())
    return rows


def pre_ln_corner(
    n_bits: int, s: float = 1000.0, big: float = 2000.0, c: float = 1e-6, eps: float = 1.0
) -> Params:
    """Pre-LN, no eos, eps = 1, D = 4. Token t = big w + (2t - 1) c e (w = (1,1,-1,-1)/2,
    e = (1,-1,1,-1)/2): norm1's input has variance ~big^2 / 4, so z_1 ~ 2 / big and norm1's
    factor of beta is (1 + z_1)^2 ~ 1; attention is off except b_o = -big w, which cancels the
    big part, so norm2 sees +-c e (variance << eps: z ~ 1, the norm acts as ~P) and the MLP
    FFN(h) = s h (W_1 = I with every ReLU active through b_1, W_2 = s I, b_2 = -s b_1) carries the
    change through norm2 into the final norm, also at z ~ 1. The bound's monomial
    lambda_f lambda_2 F a0 rho_1 rho_2 rho_f is then met: I_n / bound -> (1 + s) / (4 + s) / (1 +
    z_1)^2 * N / (N + 1) (the residual monomial a0, which skips norm2, carries 4 / (4 + s) of
    the bound)."""
    cfg = corner_config(n_bits, eps, norm_first=True)
    w = np.array([1.0, 1, -1, -1]) / 2.0
    e = np.array([1.0, -1, 1, -1]) / 2.0
    b1 = np.full(4, 1e-4)
    return build(
        cfg,
        {
            "token_embedding": np.stack([big * w - c * e, big * w + c * e, big * w]),
            "layers.0.self_attn.out_proj.bias": -big * w,
            "layers.0.linear1.weight": np.eye(4),
            "layers.0.linear1.bias": b1,
            "layers.0.linear2.weight": s * np.eye(4),
            "layers.0.linear2.bias": -s * b1,
        },
    )
