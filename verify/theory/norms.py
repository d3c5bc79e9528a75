"""Parameter-norm summaries for the explicit eps > 0 constants (arXiv 2606.08768, Lemma 2.9,
3.1, 3.2, Cor 3.3, 3.4, Prop 3.5; the bounds themselves are in :mod:`verify.theory.bounds`).

Every constant is a function of a :class:`ParamNorms` summary, which comes either from one
parameter vector (:func:`parameter_norms`), from the elementwise max over several
(:func:`max_norms`), or from the box (:func:`box_norms`: the supremum of every norm over the
box, each attained by some point of the box). Every bound is monotone in every norm, so the box
version bounds the per-parameter version at every point of Theta (an upper bound on its
supremum).

Choices (stated in docs/derivations.md):

- K, the number of layer norms on the path, is ``config.n_norms`` (:func:`n_layer_norms`): 2L
  post-LN (norm1 and norm2 of every layer), 2L + 1 pre-LN (plus final_norm). The blowup beta of
  model-spec multiplies one factor per norm, so the paper's exponent L becomes K.
- Matrices are measured in the spectral norm, biases in l2, layer-norm gains in sup norm.
- Norm on theta: the Euclidean norm on R^M; diam(Theta) = 2 B sqrt(M) for the box [-B, B]^M.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

from verify._threads import one_blas_thread
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, param_shapes
from verify.validation import check_real

__all__ = [
    "HeadNorms",
    "LayerNorms",
    "ParamNorms",
    "beta_lower_bound",
    "box_half_widths",
    "box_norms",
    "ln_input_norm_bounds",
    "max_norms",
    "n_layer_norms",
    "norms_of",
    "parameter_norms",
]


@dataclass(frozen=True)
class HeadNorms:
    """Spectral norms of one head's blocks of in_proj_weight and l2 norms of its biases."""

    wq: float
    wk: float
    wv: float
    bq: float
    bk: float
    bv: float


@dataclass(frozen=True)
class LayerNorms:
    """Norms of one encoder layer (spectral for matrices, l2 for biases, sup for LN gains)."""

    heads: tuple[HeadNorms, ...]
    wo: float
    bo: float
    w1: float
    b1: float
    w2: float
    b2: float
    g1: float  # ||gamma_1||_inf (1 without affine norms)
    n1: float  # ||beta_1||_2   (0 without affine norms)
    g2: float
    n2: float


@dataclass(frozen=True)
class ParamNorms:
    """Everything the explicit constants need to know about theta (or about a box)."""

    config: ModelConfig
    token_diff: float  # ||E[1] - E[0]||_2: the change of y^0_n when bit n flips
    emb_max: float  # max over tokens t and positions j of ||y^0_j|| (any N)
    layers: tuple[LayerNorms, ...]
    gf: float  # final_norm gain sup (pre-LN), 1 otherwise
    nf: float
    w: float  # ||readout.weight||_2
    omega: float  # |readout.bias|


def n_layer_norms(config: ModelConfig) -> int:
    """K, the number of layer norms on the path (= config.n_norms; see module doc)."""
    return config.n_norms


def _pos_max(config: ModelConfig, arrays: Mapping[str, np.ndarray] | None, box: float) -> float:
    """max_j ||P[j]||_2 over every position any input can use."""
    if config.pos_encoding == "none":
        return 0.0
    if config.pos_encoding == "sinusoidal":
        # each (sin, cos) pair has norm 1, an unpaired last sin column at most 1
        return math.sqrt(math.ceil(config.d_embed / 2))
    if arrays is None:
        return box * math.sqrt(config.d_embed)
    return float(np.linalg.norm(arrays["pos_embedding"], axis=1).max())


def _emb_max(config: ModelConfig, tok: np.ndarray | float, pos: float) -> float:
    if isinstance(tok, np.ndarray):
        tok_max = float(np.linalg.norm(tok, axis=1).max())
    else:
        tok_max = float(tok)
    if config.embedding == "concat":
        return math.hypot(tok_max, pos)
    return tok_max + pos


@one_blas_thread
def parameter_norms(params: Params) -> ParamNorms:
    """The norm summary of one parameter vector (BLAS on one thread: at D = 128 its SVDs took
    5-14 s with a two-thread BLAS on 2 busy cores, 0.1 s on one; the same numbers)."""
    if not isinstance(params, Params):
        raise ValidationError("params", "a verify.model.Params", type(params).__name__)
    cfg = params.config
    cfg.require_spec_layout("the papers' norm summaries")
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head

    def spec(a: np.ndarray) -> float:
        return float(np.linalg.norm(a, 2)) if a.size else 0.0

    def l2(a: np.ndarray) -> float:
        return float(np.linalg.norm(np.ravel(a)))

    layers = []
    for layer in range(cfg.n_layers):
        p = f"layers.{layer}."
        w_in, b_in = params[p + "self_attn.in_proj_weight"], params[p + "self_attn.in_proj_bias"]
        heads = []
        for i in range(h):
            rows = [slice(j * d + i * dh, j * d + (i + 1) * dh) for j in range(3)]
            heads.append(HeadNorms(*(spec(w_in[r]) for r in rows), *(l2(b_in[r]) for r in rows)))
        if cfg.ln_affine:
            gains = [
                (
                    float(np.abs(params[p + nm + ".weight"]).max()),
                    l2(params[p + nm + ".bias"]),
                )
                for nm in ("norm1", "norm2")
            ]
        else:
            gains = [(1.0, 0.0), (1.0, 0.0)]
        layers.append(
            LayerNorms(
                heads=tuple(heads),
                wo=spec(params[p + "self_attn.out_proj.weight"]),
                bo=l2(params[p + "self_attn.out_proj.bias"]),
                w1=spec(params[p + "linear1.weight"]),
                b1=l2(params[p + "linear1.bias"]),
                w2=spec(params[p + "linear2.weight"]),
                b2=l2(params[p + "linear2.bias"]),
                g1=gains[0][0],
                n1=gains[0][1],
                g2=gains[1][0],
                n2=gains[1][1],
            )
        )
    if cfg.norm_first and cfg.ln_affine:
        gf = float(np.abs(params["final_norm.weight"]).max())
        nf = l2(params["final_norm.bias"])
    else:
        gf, nf = 1.0, 0.0
    tok = params["token_embedding"]
    if cfg.pos_encoding == "learned" and cfg.embedding == "add":
        pos_rows = params["pos_embedding"]
        emb_max = float(np.linalg.norm(tok[:, None, :] + pos_rows[None], axis=2).max())
    else:
        emb_max = _emb_max(cfg, tok, _pos_max(cfg, params, 0.0))
    return ParamNorms(
        config=cfg,
        token_diff=l2(tok[1] - tok[0]),
        emb_max=emb_max,
        layers=tuple(layers),
        gf=gf,
        nf=nf,
        w=l2(params["readout.weight"]),
        omega=abs(float(params["readout.bias"])),
    )


def max_norms(first: ParamNorms, *others: ParamNorms) -> ParamNorms:
    """Elementwise max of norm summaries of one config: a summary valid for every point of the
    convex hull of the parameter vectors (every norm is convex)."""
    out = first
    for other in others:
        if other.config != out.config:
            raise ValidationError("norms", "summaries of one configuration", other.config)
        out = _elementwise(out, other)
    return out


def _elementwise(a: object, b: object) -> object:
    if isinstance(a, float):
        return max(a, b)  # type: ignore[type-var]
    if isinstance(a, tuple):
        return tuple(_elementwise(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, ModelConfig):
        return a
    kwargs = {f.name: _elementwise(getattr(a, f.name), getattr(b, f.name)) for f in fields(a)}  # type: ignore[arg-type]
    return type(a)(**kwargs)


def box_half_widths(config: ModelConfig, box: float | Mapping[str, float]) -> dict[str, float]:
    """Per-array half-widths B_name of the box (one float: the same B for every array)."""
    shapes = param_shapes(config)
    if isinstance(box, Mapping):
        missing = [name for name in shapes if name not in box]
        if missing:
            raise ValidationError("box", "a half-width for every parameter array", missing[:3])
        return {name: check_real(f"box[{name}]", box[name], minimum=0.0) for name in shapes}
    b = check_real("box", box, strictly_positive=True)
    return dict.fromkeys(shapes, b)


def box_norms(config: ModelConfig, box: float | Mapping[str, float]) -> ParamNorms:
    """Supremum of every norm over the box Theta = prod_name [-B_name, B_name]^{size}.

    A block of r x c entries in [-B, B] has spectral norm <= B sqrt(r c) (attained by the all-B
    block), a vector of n entries l2 norm <= B sqrt(n), a gain sup-norm <= B."""
    if not isinstance(config, ModelConfig):
        raise ValidationError("config", "a ModelConfig", type(config).__name__)
    config.require_spec_layout("the papers' norm summaries")
    bb = box_half_widths(config, box)
    d, h, dh, f, e = config.d_model, config.n_heads, config.d_head, config.d_ff, config.d_embed
    layers = []
    for layer in range(config.n_layers):
        p = f"layers.{layer}."
        bw, bbias = bb[p + "self_attn.in_proj_weight"], bb[p + "self_attn.in_proj_bias"]
        head = HeadNorms(*(3 * [bw * math.sqrt(dh * d)]), *(3 * [bbias * math.sqrt(dh)]))
        if config.ln_affine:
            g1, n1 = bb[p + "norm1.weight"], bb[p + "norm1.bias"] * math.sqrt(d)
            g2, n2 = bb[p + "norm2.weight"], bb[p + "norm2.bias"] * math.sqrt(d)
        else:
            g1, n1, g2, n2 = 1.0, 0.0, 1.0, 0.0
        layers.append(
            LayerNorms(
                heads=(head,) * h,
                wo=bb[p + "self_attn.out_proj.weight"] * d,
                bo=bb[p + "self_attn.out_proj.bias"] * math.sqrt(d),
                w1=bb[p + "linear1.weight"] * math.sqrt(f * d),
                b1=bb[p + "linear1.bias"] * math.sqrt(f),
                w2=bb[p + "linear2.weight"] * math.sqrt(f * d),
                b2=bb[p + "linear2.bias"] * math.sqrt(d),
                g1=g1,
                n1=n1,
                g2=g2,
                n2=n2,
            )
        )
    if config.norm_first and config.ln_affine:
        gf, nf = bb["final_norm.weight"], bb["final_norm.bias"] * math.sqrt(d)
    else:
        gf, nf = 1.0, 0.0
    bt = bb["token_embedding"]
    pos = _pos_max(config, None, bb.get("pos_embedding", 0.0))
    return ParamNorms(
        config=config,
        token_diff=2.0 * bt * math.sqrt(e),
        emb_max=_emb_max(config, bt * math.sqrt(e), pos),
        layers=tuple(layers),
        gf=gf,
        nf=nf,
        w=bb["readout.weight"] * math.sqrt(d),
        omega=bb["readout.bias"],
    )


def norms_of(source: Params | ParamNorms) -> ParamNorms:
    """A summary as given, or :func:`parameter_norms` of a parameter vector (validated)."""
    if isinstance(source, ParamNorms):
        return source
    return parameter_norms(source)  # validates


# ----------------------------------------------------------------------------- Lemma 3.2
def ln_input_norm_bounds(source: Params | ParamNorms) -> list[float]:
    """Lemma 3.2 (tightness, docs/derivations.md#lemma-32): upper bounds on ||d^k_n||_2, the
    input of layer norm k (K of them, path order), for every
    position and every input of any length: LN outputs are bounded by ||gamma||_inf sqrt(D) +
    ||beta||, attention outputs by ||W_o|| sqrt(sum_h (||W_v^h|| Y + ||b_v^h||)^2) + ||b_o||
    (convex combinations of values), MLPs by ||W_2|| (||W_1|| Y + ||b_1||) + ||b_2||."""
    nm = norms_of(source)
    cfg = nm.config
    rd = math.sqrt(cfg.d_model)

    def att(lay: LayerNorms, y_in: float) -> float:
        return lay.wo * math.sqrt(sum((h.wv * y_in + h.bv) ** 2 for h in lay.heads)) + lay.bo

    def mlp(lay: LayerNorms, y_in: float) -> float:
        return lay.w2 * (lay.w1 * y_in + lay.b1) + lay.b2

    out: list[float] = []
    r = nm.emb_max
    for lay in nm.layers:
        y1, y2 = lay.g1 * rd + lay.n1, lay.g2 * rd + lay.n2
        if cfg.norm_first:
            out.append(r)
            h = r + att(lay, y1)
            out.append(h)
            r = h + mlp(lay, y2)
        else:
            out.append(r + att(lay, r))
            out.append(y1 + mlp(lay, y1))
            r = y2
    if cfg.norm_first:
        out.append(r)
    return out


def beta_lower_bound(source: Params | ParamNorms) -> float:
    """Lemma 3.2 (tightness): prod_k (1 + (B_k^2 / D + eps)^{-1/2}) <= beta(theta, x) for every
    x, with B_k from :func:`ln_input_norm_bounds` (population variance <= ||d||^2 / D). Shows
    Lemma 3.2's bound is approached as the layer-norm inputs shrink."""
    nm = norms_of(source)
    d, eps = nm.config.d_model, nm.config.ln_eps
    out = 1.0
    for b in ln_input_norm_bounds(nm):
        v = b * b / d + eps
        out *= math.inf if v == 0 else 1.0 + v**-0.5
    return out


# ----------------------------------------------------------------------------- Lemma 3.1
class LinearForm:
    """A linear form sum_g c_g ||Δtheta_g||_2 over parameter groups (plus the zero form)."""

    __slots__ = ("c",)

    def __init__(self, c: dict[str, float] | None = None) -> None:
        self.c = dict(c or {})

    def __add__(self, other: LinearForm) -> LinearForm:
        out = dict(self.c)
        for k, v in other.c.items():
            out[k] = out.get(k, 0.0) + v
        return LinearForm(out)

    def __rmul__(self, s: float) -> LinearForm:
        return LinearForm({k: s * v for k, v in self.c.items()})

    @staticmethod
    def unit(group: str, s: float = 1.0) -> LinearForm:
        return LinearForm({group: s})

    @staticmethod
    def l2_combine(forms: list[LinearForm]) -> LinearForm:
        """Minkowski: sqrt(sum_h (sum_g c_hg d_g)^2) <= sum_g d_g sqrt(sum_h c_hg^2). Groups in
        sorted order (deterministic: no dependence on PYTHONHASHSEED)."""
        keys = sorted({k for f in forms for k in f.c})
        return LinearForm({k: math.sqrt(sum(f.c.get(k, 0.0) ** 2 for f in forms)) for k in keys})
