"""Hypothesis strategies for transformer configurations and parameters, including adversarial
ones that try to break the float64 pass and its certification.

Drawing whole parameter arrays is slow (~100 examples/s); these strategies draw a seed and a few
structured knobs (scheme, scale, degeneracy) and build the arrays from them (~300/s).

- :func:`configs`: small ModelConfigs over every option of model-spec.
- :func:`params`: ordinary random parameters (one of the four init schemes, moderate scale).
- :func:`adversarial_params`: one or more of
  ``near_constant``: layer-norm inputs of variance ~ delta^2 (delta down to 1e-60, or exactly 0)
  at eps = 0, built by making every embedding row and every sublayer output nearly constant;
  ``saturated``: query/key weights scaled up so the softmax is (nearly) one-hot;
  ``scale``: all parameters scaled by 10^k, k in [-6, 6];
  ``tie``: the readout bias moved so that T(x) of one string is (nearly) 0, or exactly 0
  (zero readout).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import strategies as st

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params
from verify.model.spec.config import EMBEDDINGS, POS_ENCODINGS
from verify.model.spec.init import SCHEMES

#: Every combination of the spec's discrete options, as tuples
#: (norm_first, ln_eps, eos, embedding, pos_encoding, ln_affine); eps = 1e-5 (torch's default)
#: and eps = 0. The agreement tests (torch, the plain oracle) run over all of them.
SPEC_OPTION_GRID: tuple[tuple[bool, float, bool, str, str, bool], ...] = tuple(
    itertools.product(
        (False, True), (1e-5, 0.0), (True, False), EMBEDDINGS, POS_ENCODINGS, (True, False)
    )
)

LAYOUTS = ("spec", "extended", "all")

ADVERSARIAL_KINDS = ("near_constant", "saturated", "scale", "tie")


@st.composite
def configs(
    draw: Any,
    *,
    max_d_head: int = 4,
    max_heads: int = 2,
    max_layers: int = 2,
    eps: tuple[float, ...] = (0.0, 1e-5, 1e-2),
    max_len: int = 8,
    layouts: str = "spec",
) -> ModelConfig:
    """Small configurations covering post-/pre-LN, eos, add/concat, every positional encoding,
    affine or plain layer norm, and the given epsilons. ``layouts``: "spec" (the spec's two norm
    layouts, what the papers' statements are about), "extended" (pre-LN without and post-LN with
    a final norm, docs/model-spec.md's extension) or "all"."""
    if layouts not in LAYOUTS:
        raise ValidationError("layouts", f"one of {LAYOUTS}", layouts)
    heads = draw(st.integers(1, max_heads))
    d_head = draw(st.integers(1, max_d_head))
    d = heads * d_head
    embedding = draw(st.sampled_from(["add", "concat"])) if d % 2 == 0 else "add"
    norm_first = draw(st.booleans())
    final_norm = None  # the spec's layout (no draw: the spec strategy's examples stay as they were)
    if layouts == "extended":
        final_norm = not norm_first
    elif layouts == "all":
        final_norm = draw(st.booleans())
    return ModelConfig(
        d_model=d,
        n_layers=draw(st.integers(1, max_layers)),
        n_heads=heads,
        d_ff=draw(st.integers(1, 2 * d)),
        ln_eps=draw(st.sampled_from(eps)),
        norm_first=norm_first,
        final_norm=final_norm,
        ln_affine=draw(st.booleans()),
        eos=draw(st.booleans()),
        pos_encoding=draw(st.sampled_from(["learned", "sinusoidal", "none"])),
        embedding=embedding,
        max_len=max_len,
    )


@st.composite
def params(
    draw: Any, config: st.SearchStrategy[ModelConfig] | None = None, max_scale: float = 1.5
) -> Params:
    """Parameters from one of the four init schemes with a drawn seed and scale."""
    cfg = draw(config if config is not None else configs())
    scheme = draw(st.sampled_from(SCHEMES))
    scale = draw(st.floats(0.1, max_scale))
    seed = draw(st.integers(0, 2**32 - 1))
    return init_params(cfg, scheme, seed, scale=scale)


def _near_constant(p: Params, delta: float, rng: np.random.Generator) -> Params:
    """Every embedding row and every sublayer output constant up to ``delta`` noise."""
    cfg = p.config
    arrays = {k: v.copy() for k, v in p.items()}
    base = rng.normal()

    def almost_const(shape: tuple[int, ...]) -> np.ndarray:
        return base + delta * rng.normal(size=shape)

    arrays["token_embedding"] = almost_const(arrays["token_embedding"].shape)
    if "pos_embedding" in arrays:
        arrays["pos_embedding"] = delta * rng.normal(size=arrays["pos_embedding"].shape)
    for layer in range(cfg.n_layers):
        pre = f"layers.{layer}."
        for w, b in (("self_attn.out_proj.weight", "self_attn.out_proj.bias"),
                     ("linear2.weight", "linear2.bias")):  # fmt: skip
            arrays[pre + w] = delta * rng.normal(size=arrays[pre + w].shape)
            arrays[pre + b] = almost_const(arrays[pre + b].shape)
        if cfg.ln_affine:
            for k in ("norm1", "norm2"):
                arrays[pre + k + ".bias"] = almost_const((cfg.d_model,))
    if cfg.ln_affine and cfg.final_norm:
        arrays["final_norm.bias"] = almost_const((cfg.d_model,))
    return Params(cfg, arrays)


@st.composite
def adversarial_params(
    draw: Any, config: st.SearchStrategy[ModelConfig] | None = None, n_bits: int = 3
) -> Params:
    """Parameters built to stress the float64 pass (see module doc). ``n_bits`` is the input
    length used to place a tie."""
    if config is None:
        config = configs(eps=(0.0, 0.0, 1e-5))
    p = draw(params(config))
    cfg = p.config
    kinds = draw(st.sets(st.sampled_from(ADVERSARIAL_KINDS), min_size=1, max_size=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if "near_constant" in kinds and cfg.pos_encoding != "sinusoidal":
        delta = draw(st.sampled_from([0.0, 1e-60, 1e-30, 1e-12, 1e-6]))
        p = _near_constant(p, delta, rng)
    if "saturated" in kinds:
        factor = draw(st.sampled_from([30.0, 300.0, 3000.0]))
        arrays = {k: v.copy() for k, v in p.items()}
        d = cfg.d_model
        for layer in range(cfg.n_layers):
            arrays[f"layers.{layer}.self_attn.in_proj_weight"][: 2 * d] *= factor
        p = Params(cfg, arrays)
    if "scale" in kinds:
        k = draw(st.integers(-6, 6))
        p = Params.unflatten(cfg, p.flatten() * 10.0**k)
    if "tie" in kinds:
        arrays = dict(p.items())
        if draw(st.booleans()):
            arrays["readout.weight"] = np.zeros(cfg.d_model)
            arrays["readout.bias"] = np.array(0.0)
        else:
            x = rng.integers(0, 2, size=(1, n_bits))
            t = forward(p, x).T[0]
            if np.isfinite(t):
                arrays["readout.bias"] = np.array(float(p["readout.bias"]) - t)
        p = Params(cfg, arrays)
    return p
