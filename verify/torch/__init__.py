"""Bridge to PyTorch (optional extra ``torch``): the model of ``docs/model-spec.md`` built from
``torch.nn.TransformerEncoderLayer``, and parameters moved both ways without renaming.

``to_torch(params)`` returns a float64 :class:`SpecTransformer` whose ``state_dict()`` holds
exactly the arrays of the spec's parameter file (same names, same shapes), so
``module.load_state_dict({name: torch.from_numpy(a) for name, a in params.items()})`` and
``from_torch(module)`` move weights with no renaming. Its forward pass is the spec's:

    y^0_n = E[t_n] + P[n]   (or [E[t_n]; P[n]] with ``embedding="concat"``), positions from 0,
    y^l   = TransformerEncoderLayer_l(y^{l-1})   (batch_first, dropout 0, relu, eps = ln_eps),
    T(x)  = w . LN_f(y^L_r) + omega   (LN_f only pre-LN), r = S the last position.

Plain (non-affine) layer norm is a LayerNorm whose gain 1 and bias 0 are fixed non-persistent
buffers: torch's fused encoder-layer fast path needs a norm weight tensor (it fails with
``elementwise_affine=False``), and the buffers stay out of the state_dict, as the spec has no such
arrays. This module imports without torch; using it then raises :class:`TorchUnavailableError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from verify.errors import ValidationError
from verify.model.plain.forward import check_bits
from verify.model.plain.forward_numpy import sinusoidal_table
from verify.model.spec.config import ModelConfig
from verify.model.spec.ln_forms import require_torch_form
from verify.model.spec.params import Params, param_shapes
from verify.torch.layout import check_supported, module_layout
from verify.torch.mapping import (
    KeyMapping,
    _encoder_layers,
    _keys_message,
    infer_config,
    spec_state_dict,
)
from verify.torch.requirement import (
    TORCH_PIN,
    TorchUnavailableError,
    torch_available,
)
from verify.torch.requirement import require_torch as _require_torch

try:  # the optional extra
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # pragma: no cover - exercised in a subprocess test without torch
    torch = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

if torch is not None:

    class _PlainLayerNorm(nn.LayerNorm):
        """LayerNorm without trainable gain/bias: gain 1 and bias 0 held as non-persistent
        buffers (so the fused fast path has tensors to read, and the state_dict has none)."""

        def __init__(self, d_model: int, eps: float) -> None:
            super().__init__(d_model, eps=eps, elementwise_affine=True, dtype=torch.float64)
            del self.weight
            del self.bias
            self.register_buffer("weight", torch.ones(d_model, dtype=torch.float64), False)
            self.register_buffer("bias", torch.zeros(d_model, dtype=torch.float64), False)

    class _Readout(nn.Module):
        """T = w . y + omega with ``weight`` (D,) and a 0-d ``bias`` (the spec's shapes)."""

        def __init__(self, d_model: int) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(d_model, dtype=torch.float64))
            self.bias = nn.Parameter(torch.zeros((), dtype=torch.float64))

        def forward(self, y: Tensor) -> Tensor:
            return y @ self.weight + self.bias

    class SpecTransformer(nn.Module):
        """The spec's transformer in torch float64 (see the module docstring).

        ``forward(bits)`` takes a (B, N) 0/1 tensor or array and returns T, shape (B,).
        ``forward(bits, readout_only=True)`` computes the last layer at the readout position
        only (what T needs); the other layers run through ``nn.TransformerEncoderLayer``.
        """

        def __init__(self, config: ModelConfig) -> None:
            super().__init__()
            if not isinstance(config, ModelConfig):
                raise ValidationError("config", "a ModelConfig", type(config).__name__)
            require_torch_form(config, "SpecTransformer (its norms are nn.LayerNorm)")
            self.config = config
            d, e, f64 = config.d_model, config.d_embed, torch.float64
            self.token_embedding = nn.Parameter(torch.zeros(3, e, dtype=f64))
            if config.pos_encoding == "learned":
                self.pos_embedding = nn.Parameter(torch.zeros(config.max_len + 1, e, dtype=f64))
            self.layers = nn.ModuleList()
            for _ in range(config.n_layers):
                layer = nn.TransformerEncoderLayer(
                    d,
                    config.n_heads,
                    dim_feedforward=config.d_ff,
                    dropout=0.0,
                    activation="relu",
                    layer_norm_eps=config.ln_eps,
                    batch_first=True,
                    norm_first=config.norm_first,
                    dtype=f64,
                )
                if not config.ln_affine:
                    layer.norm1 = _PlainLayerNorm(d, config.ln_eps)
                    layer.norm2 = _PlainLayerNorm(d, config.ln_eps)
                self.layers.append(layer)
            if config.final_norm:
                self.final_norm = (
                    nn.LayerNorm(d, eps=config.ln_eps, dtype=f64)
                    if config.ln_affine
                    else _PlainLayerNorm(d, config.ln_eps)
                )
            self.readout = _Readout(d)
            self._sinusoidal: dict[int, Tensor] = {}
            self.eval()

        # ------------------------------------------------------------ pieces
        def positions(self, seq_len: int) -> Tensor | None:
            """The (S, D') positional rows for positions 0..S-1 (None without positions)."""
            kind = self.config.pos_encoding
            if kind == "learned":
                return self.pos_embedding[:seq_len]
            if kind == "sinusoidal":
                if seq_len not in self._sinusoidal:
                    table = sinusoidal_table(seq_len, self.config.d_embed)
                    self._sinusoidal[seq_len] = torch.from_numpy(table)
                return self._sinusoidal[seq_len].to(self.token_embedding.device)
            return None

        def tokens(self, bits: object) -> Tensor:
            """Validated (B, S) int64 tokens: the bits, then 2 (eos) if the config has eos."""
            t = _as_bits_tensor(bits, self.config, self.token_embedding.device)
            if self.config.eos:
                eos = torch.full((t.shape[0], 1), 2, dtype=torch.int64, device=t.device)
                t = torch.cat([t, eos], dim=1)
            return t

        def embed(self, bits: object) -> Tensor:
            """y^0, shape (B, S, D): token plus (or concatenated with) position rows."""
            t = self.tokens(bits)
            tok = self.token_embedding[t]
            pos = self.positions(t.shape[1])
            if self.config.embedding == "add":
                return tok if pos is None else tok + pos
            if pos is None:
                pos = tok.new_zeros((t.shape[1], self.config.d_embed))
            return torch.cat([tok, pos.expand(t.shape[0], -1, -1)], dim=2)

        def _last_layer_readout(self, layer: nn.TransformerEncoderLayer, y: Tensor) -> Tensor:
            """The layer's output at the last position only, (B, D), from its input (B, S, D)."""
            attn = layer.self_attn
            d, h = attn.embed_dim, attn.num_heads
            dh = d // h
            b, s, _ = y.shape
            a_in = layer.norm1(y) if layer.norm_first else y
            w, bias = attn.in_proj_weight, attn.in_proj_bias
            q = F.linear(a_in[:, -1], w[:d], bias[:d]).view(b, h, 1, dh)
            kv = F.linear(a_in, w[d:], bias[d:])
            k = kv[..., :d].view(b, s, h, dh).transpose(1, 2)
            v = kv[..., d:].view(b, s, h, dh).transpose(1, 2)
            scores = torch.softmax((q @ k.transpose(2, 3)) / math.sqrt(dh), dim=-1)
            heads = (scores @ v).reshape(b, d)
            mha = attn.out_proj(heads)
            yr = y[:, -1]
            if layer.norm_first:
                x = yr + mha
                return x + layer.linear2(F.relu(layer.linear1(layer.norm2(x))))
            x = layer.norm1(yr + mha)
            return layer.norm2(x + layer.linear2(F.relu(layer.linear1(x))))

        # ------------------------------------------------------------ forward
        def final_vector(self, bits: object, readout_only: bool = False) -> Tensor:
            """y^L at the readout position (after the final norm if any), shape (B, D)."""
            y = self.embed(bits)
            last = len(self.layers) - 1
            for index, layer in enumerate(self.layers):
                if readout_only and index == last:
                    yr = self._last_layer_readout(layer, y)
                    break
                y = layer(y)
            else:
                yr = y[:, -1]
            if self.config.final_norm:
                yr = self.final_norm(yr)
            return yr

        def forward(self, bits: object, readout_only: bool = False) -> Tensor:
            """T(x) = w . y^L_r + omega for each row of ``bits``, shape (B,)."""
            return self.readout(self.final_vector(bits, readout_only))

else:  # pragma: no cover - without torch

    class SpecTransformer:  # type: ignore[no-redef]
        """Placeholder: constructing it without torch raises TorchUnavailableError."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            _require_torch()


def _as_bits_tensor(bits: object, config: ModelConfig, device: Any) -> Tensor:
    """(B, N) 0/1 bits (tensor or array-like) as an int64 tensor, validated as forward() does."""
    if isinstance(bits, torch.Tensor):
        bits = bits.detach().cpu().numpy()
    arr = check_bits(bits)
    config.check_n_bits(arr.shape[1])
    return torch.from_numpy(arr.astype(np.int64)).to(device)


# ---------------------------------------------------------------------- conversions
def to_torch(params: Params) -> SpecTransformer:
    """A float64 :class:`SpecTransformer` (in eval mode) holding a copy of ``params``."""
    _require_torch()
    if not isinstance(params, Params):
        raise ValidationError("params", "a verify.model Params", type(params).__name__)
    module = SpecTransformer(params.config)
    state = {name: torch.tensor(np.array(a, dtype=np.float64)) for name, a in params.items()}
    module.load_state_dict(state, strict=True)
    return module


def _check_module_matches(module: nn.Module, config: ModelConfig) -> None:
    """Refuse a module whose layers compute something other than ``config`` says: every
    nn.TransformerEncoderLayer found at any depth (also inside an nn.TransformerEncoder) is
    compared on norm placement, layer-norm eps and heads; the layout (norm placement, final norm,
    activation) must be one the certified passes compute (:mod:`verify.torch.layout`); an
    nn.TransformerEncoder's own final norm is compared on its eps."""
    layers = _encoder_layers(module)
    if layers:  # nn.TransformerEncoderLayer's norms are nn.LayerNorm: torch's form
        require_torch_form(config, "a module of nn.TransformerEncoderLayer")
    if layers and len(layers) != config.n_layers:
        names = ", ".join(name for name, _ in layers)
        raise ValidationError("n_layers", f"{config.n_layers} (config)", f"{len(layers)}: {names}")
    for index, (qualified, layer) in enumerate(layers):
        name = qualified or f"layers.{index}"
        if layer.norm_first != config.norm_first:
            raise ValidationError(
                f"{name}.norm_first", f"{config.norm_first} (config)", layer.norm_first
            )
        for norm in ("norm1", "norm2"):
            eps = getattr(layer, norm).eps
            if eps != config.ln_eps:
                raise ValidationError(f"{name}.{norm}.eps", f"{config.ln_eps} (config)", eps)
        if layer.self_attn.num_heads != config.n_heads:
            raise ValidationError(
                f"{name}.self_attn.num_heads",
                f"{config.n_heads} (config)",
                layer.self_attn.num_heads,
            )
        dropout = max(layer.dropout.p, layer.dropout1.p, layer.dropout2.p)
        if dropout and layer.training:
            raise ValidationError(f"{name}.dropout", "0, or the module in eval mode", dropout)
    layout = module_layout(module)
    if layout.norm_first is not None:
        check_supported(layout.norm_first, bool(layout.final_norm), str(layout.activation))
    finals = [
        (name, sub.norm)
        for name, sub in module.named_modules()
        if isinstance(sub, nn.TransformerEncoder) and sub.norm is not None
    ]
    final = getattr(module, "final_norm", None)
    if isinstance(final, nn.LayerNorm):
        finals.append(("final_norm", final))
    if layers and bool(finals) != config.final_norm:
        raise ValidationError(
            "final norm",
            f"{'a' if config.final_norm else 'no'} final LayerNorm (config)",
            ", ".join(name or "norm" for name, _ in finals) or "none",
        )
    for name, norm in finals:
        if isinstance(norm, nn.LayerNorm) and norm.eps != config.ln_eps:
            raise ValidationError(f"{name}.eps", f"{config.ln_eps} (config)", norm.eps)


def _plain_norm_names(config: ModelConfig) -> list[str]:
    """Names a torch model carries for norms that the spec, without ln_affine, does not."""
    if config.ln_affine:
        return []
    norms = [f"layers.{i}.{n}" for i in range(config.n_layers) for n in ("norm1", "norm2")]
    if config.final_norm:
        norms.append("final_norm")
    return [f"{n}.{part}" for n in norms for part in ("weight", "bias")]


def from_torch(
    module_or_state_dict: nn.Module | Mapping[str, object],
    config: ModelConfig | None = None,
    *,
    key_map: Mapping[str, str] | None = None,
    prefix: str | None = None,
    **fields: Any,
) -> Params:
    """Params from a torch module or state_dict (copies, float64).

    Names: model-spec names, or those of a model built the usual way (nn.Embedding tables,
    nn.TransformerEncoder, nn.Linear(D, 1) head): see :func:`spec_state_dict`; ``prefix`` and
    ``key_map`` handle anything else. Config: ``config`` if given (a SpecTransformer's own
    otherwise), else :func:`infer_config` with ``fields`` (for a bare state_dict ``n_heads`` and
    ``ln_eps`` are required). The module's encoder layers, found at any depth, must compute what
    the config says. Without ``ln_affine``, norm gains/biases present (a torch model with plain
    affine norms) are accepted only if exactly 1 and 0, then dropped; any other surplus or
    missing array, wrong shape or non-finite value raises ValidationError naming the array and
    listing the keys found.
    """
    _require_torch()
    source = module_or_state_dict
    if isinstance(source, nn.Module):
        own = getattr(source, "config", None) if isinstance(source, SpecTransformer) else None
        if config is None:
            config = own
        elif own is not None and own != config:
            raise ValidationError("config", f"the module's own config {own}", config)
        if config is None:
            config = infer_config(source, key_map=key_map, prefix=prefix, **fields)
        if not isinstance(config, ModelConfig):
            raise ValidationError("config", "a ModelConfig", type(config).__name__)
        _check_module_matches(source, config)
        state: Mapping[str, object] = source.state_dict()
    elif isinstance(source, Mapping):
        if config is None:
            config = infer_config(source, key_map=key_map, prefix=prefix, **fields)
        if not isinstance(config, ModelConfig):
            raise ValidationError("config", "a ModelConfig", type(config).__name__)
        state = source
    else:
        raise ValidationError(
            "module_or_state_dict", "a torch.nn.Module or a state_dict mapping", type(source)
        )
    if fields and config is not None:
        clash = {k: v for k, v in fields.items() if getattr(config, k, v) != v}
        if clash:
            name = next(iter(clash))
            raise ValidationError(name, f"{getattr(config, name)} (config)", clash[name])
    spec, mapping = spec_state_dict(state, key_map=key_map, prefix=prefix)
    arrays: dict[str, np.ndarray] = {}
    for name, value in spec.items():
        arrays[name] = _to_float64_array(name, value)
    for name in _plain_norm_names(config):
        if name in arrays:
            want = 1.0 if name.endswith("weight") else 0.0
            if not np.all(arrays[name] == want):
                raise ValidationError(
                    name, f"all {want} (config has ln_affine=False)", "other values"
                )
            del arrays[name]
    shapes = param_shapes(config)
    _pad_unread_position_row(arrays, config)
    for name, shape in shapes.items():
        if name in arrays and arrays[name].shape != shape:
            raise ValidationError(name, f"shape {shape}", arrays[name].shape)
    missing = [name for name in shapes if name not in arrays]
    extra = [name for name in arrays if name not in shapes]
    if missing or extra:
        what = missing[0] if missing else extra[0]
        raise ValidationError(
            what,
            f"the arrays of {config} (missing {missing}, surplus {extra})",
            _keys_message(mapping.found),
        )
    return Params(config, arrays)


def _pad_unread_position_row(arrays: dict[str, np.ndarray], config: ModelConfig) -> None:
    """Without eos, a learned table of exactly max_len rows (a torch model's N rows for N bits)
    gets a zero row max_len appended, in place: the file's layout (max_len + 1 rows). It is
    never read: without eos the sequence is the N <= max_len bits, positions 0..N-1
    (``ModelConfig.seq_len``, ``check_n_bits``), so no pass reads row max_len."""
    table = arrays.get("pos_embedding")
    if (
        table is not None
        and not config.eos
        and config.pos_encoding == "learned"
        and table.ndim == 2
        and table.shape[0] == config.max_len
    ):
        arrays["pos_embedding"] = np.concatenate([table, np.zeros((1, table.shape[1]))])


def _to_float64_array(name: str, value: object) -> np.ndarray:
    """A copy of a tensor/array as float64 (exact from float32/float64; others refused)."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            raise ValidationError(name, "a floating-point tensor", str(value.dtype))
        return value.detach().to(device="cpu", dtype=torch.float64).numpy().copy()
    arr = np.asarray(value)
    if arr.dtype.kind != "f":
        raise ValidationError(name, "a floating-point array", str(arr.dtype))
    return arr.astype(np.float64, copy=True)


__all__ = [
    "TORCH_PIN",
    "KeyMapping",
    "SpecTransformer",
    "TorchUnavailableError",
    "from_torch",
    "infer_config",
    "spec_state_dict",
    "to_torch",
    "torch_available",
]
