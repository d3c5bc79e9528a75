"""Near-tight constructions for C_Lip (Lemma 3.1) and the packing radius (Prop 3.5).

- Per-group constructions (:func:`lip_group_rows`): perturbing one parameter group g alone,
  |ΔT| <= L_g ||Δθ_g|| is the derivation's own intermediate inequality
  (``lipschitz_coefficients``). The "transparent" models keep every layer-norm input at variance
  ~0 (z = eps^{-1/2}: the Jacobian factor attained) and every block linear; the saturated models
  keep a norm's input variance >> eps (its output at norm ~ sqrt(D)).
- :func:`readout_pair`: a pair of parameters for which C_Lip (Cauchy-Schwarz over the readout
  groups) is nearly attained; it also makes the packing step of Prop 3.5 nearly tight.

Every bound comes from :mod:`verify.theory.bounds` (its factor functions are looked up at call
time, so that a weakened factor shows up here; tests/test_mutations.py).
"""

from __future__ import annotations

import math

import numpy as np

from verify.checks.constructions import StepRow, _e, _in_proj, build
from verify.model import ModelConfig, Params, forward, param_shapes
from verify.theory import bounds
from verify.theory.norms import max_norms, parameter_norms

__all__ = [
    "group_ratio",
    "group_slices",
    "lip_group_rows",
    "mlp_model",
    "mlp_weight_model",
    "readout_pair",
    "reweighting_model",
    "saturated_model",
    "transparent_model",
]


def group_slices(cfg: ModelConfig) -> dict[str, tuple[str, slice]]:
    """Parameter group of ``lipschitz_coefficients`` -> (array name, flat slice of the array)."""
    out: dict[str, tuple[str, slice]] = {}
    d, dh = cfg.d_model, cfg.d_head
    for name, shape in param_shapes(cfg).items():
        size = int(np.prod(shape)) if shape else 1
        if "in_proj" in name:
            pre = name.split("self_attn")[0]
            cols = 1 if name.endswith("bias") else d
            for j, qkv in enumerate("qkv"):
                for i in range(cfg.n_heads):
                    rows = (j * d + i * dh, j * d + (i + 1) * dh)
                    tag = "b" if name.endswith("bias") else "w"
                    out[f"{pre}{qkv}{i}.{tag}"] = (name, slice(rows[0] * cols, rows[1] * cols))
        else:
            out[name] = (name, slice(0, size))
    return out


def group_ratio(
    p: Params, group: str, direction: np.ndarray, x: np.ndarray, step: float = 1e-4
) -> tuple[float, float]:
    """(|ΔT| / ||Δθ_g||, L_g) for θ' = θ + step * direction on group g only (``direction`` has
    the group's size); L_g from the summary of both endpoints (valid on the segment)."""
    name, sl = group_slices(p.config)[group]
    a = p[name].copy()
    flat = a.reshape(-1)
    d = step * direction / float(np.linalg.norm(direction))
    flat[sl] += d
    q = p.with_arrays({name: flat.reshape(a.shape)})
    bits = np.asarray(x, dtype=np.uint8)[None]
    dt = abs(float(forward(q, bits).T[0] - forward(p, bits).T[0]))
    lg = bounds.lipschitz_coefficients(max_norms(parameter_norms(p), parameter_norms(q)))
    return dt / float(np.linalg.norm(d)), lg.get(group, 0.0)


def transparent_model(n_heads: int = 1, *, y: float = 0.1, qk: float = 1.0, v: float = 1.0):
    """Post-LN, D = 4, no eos, no positions, MLP off; tokens +-y/2 (1,1,1,1) (zero variance,
    norm y); W_q, W_k, W_v read the all-ones direction; W_o = 1e-3 maps each head's value axis
    to a centred direction (head 2: an orthogonal one); norm2's gain 0.01 and bias (1,-1,1,-1)/2
    (the final vector is close to the bias, so ||Δw|| is met by Y_out); readout w =
    (1,-1,1,-1)/2 (2 heads: the unit sum of both heads' directions). Every layer-norm input
    has variance ~0, so both norms act with z = eps^{-1/2} (their Lipschitz factor attained)."""
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=n_heads, d_ff=4, ln_eps=1e-2, eos=False,
        pos_encoding="none", max_len=64,
    )  # fmt: skip
    d, dh = 4, cfg.d_head
    one = np.ones(d) / 2.0
    w_hat = np.array([1.0, -1, 1, -1]) / 2.0
    w_alt = np.array([1.0, 1, -1, -1]) / 2.0
    readout = w_hat if n_heads == 1 else (w_hat + w_alt) / math.sqrt(2.0)
    wq, wk, wv = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    wo = np.zeros((d, d))
    for h in range(n_heads):
        wq[h * dh] = qk * one
        wk[h * dh] = qk * one
        wv[h * dh + 1] = v * one
        wo[:, h * dh + 1] = 1e-3 * (w_hat if h == 0 else w_alt)
    tok = y * one
    return build(
        cfg,
        {
            "token_embedding": np.stack([-tok, tok, tok]),
            "layers.0.self_attn.in_proj_weight": _in_proj(d, wq, wk, wv),
            "layers.0.self_attn.out_proj.weight": wo,
            "layers.0.norm2.weight": np.full(d, 0.01),
            "layers.0.norm2.bias": w_hat,
            "readout.weight": readout,
        },
    )


def reweighting_model() -> Params:
    """:func:`transparent_model` with norm2 at gain 1 and bias 0, for the softmax-reweighting
    rows (W_q, W_k of head 0 on the alternating string): the logit changes are +-max|Δs| on two
    halves of weight ~1/2 and the values +-V Y, so the covariance bound max|Δs| V Y of Lemma
    3.1 step 3 is attained up to ~2.5e-5 (the logits +-R = +-0.005 tilt p off 1/2). T stays at
    the signal's scale (~5e-5, not ~1 as with norm2's bias), so |ΔT| is exact to ~1e-10
    relative, well inside that gap (no rounding allowance is needed)."""
    return transparent_model().with_arrays(
        {"layers.0.norm2.weight": np.ones(4), "layers.0.norm2.bias": np.zeros(4)}
    )


def saturated_model() -> Params:
    """Post-LN, attention and MLP off, eps = 1e-4, token rows along (3,-1,-1,-1) with variance
    >> eps (so the final vector has norm ~ sqrt(D) and a largest entry ~ sqrt(D - 1)); readout
    w = e1: the coefficients sqrt(D - 1) of a gain and Y_out of the readout weight are met."""
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=1e-4, eos=False, pos_encoding="none",
        max_len=64,
    )  # fmt: skip
    tok = 10.0 * np.array([3.0, -1, -1, -1])
    return build(cfg, {"token_embedding": np.stack([-tok, tok, tok]), "readout.weight": _e(4, 0)})


def mlp_model(s: float = 2.0) -> Params:
    """Post-LN, attention off, tokens along the all-ones direction (norm1 input variance 0);
    FFN with W_1 = I, every ReLU active (b_1 = 1), W_2 = s I and b_2 = -s b_1, so norm2's input
    is constant (variance 0): the MLP's factors ||W_1||, ||W_2|| are met between two norms at
    z = eps^{-1/2}. Readout w = (1,-1,1,-1)/2."""
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=1e-2, eos=False, pos_encoding="none",
        max_len=64,
    )  # fmt: skip
    one = np.ones(4)
    # a 1e-4 (1,1,-1,-1) part (orthogonal to the readout direction) keeps z just below
    # eps^{-1/2} at both norms, so that the rows stay clear of rounding (ratios ~1 - 5e-4)
    tok = 0.1 * one + 1e-4 * np.array([1.0, 1, -1, -1])
    return build(
        cfg,
        {
            "token_embedding": np.stack([-tok, tok, tok]),
            "layers.0.linear1.weight": np.eye(4),
            "layers.0.linear1.bias": one,
            "layers.0.linear2.weight": s * np.eye(4),
            "layers.0.linear2.bias": -s * one,
            "readout.weight": np.array([1.0, -1, 1, -1]) / 2.0,
        },
    )


def mlp_weight_model(b1: float = 1.0) -> Params:
    """Post-LN, attention off, norm1 saturated (its output h ~ 2 e for token 1, e =
    (1,-1,1,-1)/2, ||h|| = sqrt(D) (1 - 5e-5) ~ Y), a rank-one FFN: W_1 = u e^T and b_1 = b1 u
    with u = (1,1,1,1)/2 (||W_1|| = 1; W_1 h + b_1 = (||h|| + b1) u has every entry positive,
    so every ReLU is active and ||r|| = ||W_1 h|| + ||b_1|| = ||W_1|| ||h|| + ||b_1||), W_2 =
    -e u^T and b_2 = b1 e (||W_2|| = 1; FFN(h) = -h, so norm2's input is 0 on the all-ones
    string: z = eps^{-1/2}); readout w = e. The coefficients ||W_1|| Y + ||b_1|| of ||ΔW_2|| and
    Y of ||ΔW_1|| are met up to ||h|| / Y. (W_1 = [I; -I] instead loses 1/sqrt(2): ReLU keeps
    half of W_1 h, ||r|| = ||h|| against ||W_1|| Y = sqrt(2) Y.)"""
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=1e-2, eos=False, pos_encoding="none",
        max_len=64,
    )  # fmt: skip
    e = np.array([1.0, -1, 1, -1]) / 2.0
    u = np.ones(4) / 2.0
    tok = 20.0 * e
    return build(
        cfg,
        {
            "token_embedding": np.stack([-tok, tok, tok]),
            "layers.0.linear1.weight": np.outer(u, e),
            "layers.0.linear1.bias": b1 * u,
            "layers.0.linear2.weight": -np.outer(e, u),
            "layers.0.linear2.bias": b1 * e,
            "readout.weight": e,
        },
    )


def lip_group_rows(n_bits: int = 16) -> list[StepRow]:
    """Per-group rows of Lemma 3.1: |ΔT| / ||Δθ_g|| against L_g, one construction per factor."""
    rows: list[StepRow] = []
    w_hat = np.array([1.0, -1, 1, -1]) / 2.0
    ones_x = np.ones(n_bits, dtype=np.uint8)
    alt_x = (np.arange(n_bits) % 2).astype(np.uint8)

    def add(p, group, dirn, x, factor, regime, step=1e-4):
        ratio, lg = group_ratio(p, group, dirn, x, step)
        rows.append(StepRow(f"Lemma 3.1: |ΔT|/||Δθ_g|| for g = {group}", factor, regime, ratio, lg))

    t1 = transparent_model()
    reg = "transparent model (LN inputs at variance ~0)"
    y_r = forward(t1, ones_x[None]).y_readout[0]
    add(t1, "readout.weight", y_r, ones_x, "readout weight coefficient Y_out", reg)
    # 0.05 off the readout direction: the row stays clear of rounding (ratio ~0.9988)
    tilt = w_hat + 0.05 * np.array([1.0, 1, -1, -1]) / 2.0
    add(t1, "layers.0.norm2.bias", tilt, ones_x, "layer-norm bias coefficient 1", reg)
    add(t1, "layers.0.linear2.bias", w_hat, ones_x, "layer-norm Jacobian eps^-1/2 (1 norm)", reg)
    add(
        t1,
        "layers.0.self_attn.out_proj.bias",
        w_hat,
        ones_x,
        "layer-norm Jacobian eps^-1/2 (2 norms)",
        reg,
    )
    o_dir = np.zeros(4)
    o_dir[1] = 1.0
    add(
        t1,
        "layers.0.self_attn.out_proj.weight",
        np.outer(w_hat, o_dir).reshape(-1),
        ones_x,
        "out_proj weight coefficient sqrt(sum_h vbar_h^2)",
        reg,
    )
    ones4 = np.ones(4) / 2.0
    add(
        t1,
        "layers.0.v0.w",
        np.outer(o_dir, ones4).reshape(-1),
        ones_x,
        "value term (W_v) and W_o",
        reg,
    )
    add(t1, "layers.0.v0.b", o_dir, ones_x, "value term (b_v)", reg)
    head0 = np.zeros(4)
    head0[0] = 1.0
    # softmax reweighting: on the alternating string the logit changes are +-max|Δs| with
    # weight ~1/2 each and the values +-V Y, so Cov_p(Δs, v) = max|Δs| V Y is attained
    t_rw = reweighting_model()
    rw_reg = reg + ", norm2 gain 1, alternating string"
    for grp, side in (("q0", "query"), ("k0", "key")):
        qk_dir = np.outer(head0, ones4).reshape(-1)
        add(t_rw, f"layers.0.{grp}.w", qk_dir, alt_x, f"softmax reweighting ({side})", rw_reg)
    add(t1, "token_embedding", np.stack([0 * w_hat, w_hat, 0 * w_hat]).reshape(-1), ones_x,
        "embedding coefficient 1", reg)  # fmt: skip
    # two heads: an all-ones change of the token row is erased by the norms on the residual
    # path and passes through both heads' values: the per-head Minkowski sum is met, up to the
    # residual's share 1 / (1 + ||W_o|| sqrt(2) V) = 1 / 1415 of the bound; the token rows
    # (1e-9) and the step (1e-7) keep both norms' inputs at variance << eps (linear regime)
    t2 = transparent_model(2, y=1e-9, qk=0.0, v=1e6)
    add(t2, "token_embedding", np.stack([0 * ones4, ones4, 0 * ones4]).reshape(-1), ones_x,
        "per-head sum (2 heads)", "transparent model, 2 heads, ||W_o|| V = 1e3",
        step=1e-7)  # fmt: skip
    ts = saturated_model()
    sat = "saturated final norm (variance >> eps)"
    add(ts, "layers.0.norm2.weight", _e(4, 0), ones_x, "gain coefficient sqrt(D - 1)", sat)
    y_s = forward(ts, ones_x[None]).y_readout[0]
    add(ts, "readout.weight", y_s, ones_x, "readout weight coefficient Y_out", sat)
    tm = mlp_model()
    mreg = "linear MLP between two norms at variance 0"
    add(tm, "layers.0.linear1.bias", w_hat, ones_x, "MLP factor ||W_2||", mreg)
    add(tm, "layers.0.self_attn.out_proj.bias", w_hat, ones_x, "MLP factor 1 + ||W_2|| ||W_1||",
        mreg)  # fmt: skip
    tw = mlp_weight_model()
    e_dir = np.array([1.0, -1, 1, -1]) / 2.0  # norm1's output direction for token 1
    u_dir = np.ones(4) / 2.0  # the hidden pre-activation direction (every unit active)
    wreg = "saturated norm1, rank-one FFN(h) = -h with every ReLU active, norm2 at variance 0"
    add(tw, "layers.0.linear2.weight", np.outer(e_dir, u_dir).reshape(-1), ones_x,
        "MLP weight coefficient ||W_1|| Y + ||b_1||", wreg)  # fmt: skip
    # ΔW_1 = u e^T: Δ(W_1 h) = ||h|| u, all units active, W_2 u = -e (||W_2 u|| = ||W_2||)
    add(tw, "layers.0.linear1.weight", np.outer(u_dir, e_dir).reshape(-1), ones_x,
        "MLP weight coefficient Y of ||ΔW_1||", wreg)  # fmt: skip
    return rows


def readout_pair(b: float = 1e-7, tok: float = 100.0, eps: float = 1e-2):
    """Prop 3.5 / Lemma 3.1: a box in which only the token rows (half-width ``tok``) and the
    readout (half-width ``b``) may move; everything else is 0, no affine norms. The final vector
    at eos is y = LN(LN(E[eos])) ~ sqrt(D) (1,-1,1,-1)/2 whatever x is. theta_+- has w = +-b
    sign(y), omega = +-b: T = +-b (||y||_1 + 1) on every x, so theta_+ recognises the constant 1
    and theta_- the constant 0 with margin xi = b (||y||_1 + 1), at distance 2 b sqrt(D + 1).
    C_Lip of the box is ~ sqrt(Y_out^2 + 1) = sqrt(D + 1): the Cauchy-Schwarz step of Lemma 3.1
    and the packing step of Prop 3.5 are nearly equalities.

    Returns (config, box, theta_plus, theta_minus)."""
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=eps, ln_affine=False,
        pos_encoding="none", max_len=8,
    )  # fmt: skip
    box = {name: 0.0 for name in param_shapes(cfg)}
    box["token_embedding"] = tok
    box["readout.weight"] = b
    box["readout.bias"] = b
    row = tok * np.array([1.0, -1, 1, -1])
    base = {"token_embedding": np.stack([row, -row, row])}
    plus = build(cfg, {**base, "readout.weight": b * np.array([1.0, -1, 1, -1]),
                       "readout.bias": b})  # fmt: skip
    minus = build(cfg, {**base, "readout.weight": -b * np.array([1.0, -1, 1, -1]),
                        "readout.bias": -b})  # fmt: skip
    return cfg, box, plus, minus
