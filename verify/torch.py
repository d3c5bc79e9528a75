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
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from verify.errors import ValidationError
from verify.model.config import ModelConfig
from verify.model.dense import sinusoidal_table
from verify.model.forward import check_bits
from verify.model.params import Params, param_shapes

try:  # the optional extra
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # pragma: no cover - exercised in a subprocess test without torch
    torch = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

TORCH_PIN = "torch==2.13.0"


class TorchUnavailableError(ImportError):
    """verify.torch was used but torch is not installed."""


def torch_available() -> bool:
    """True when torch can be imported."""
    return torch is not None


def _require_torch() -> None:
    if torch is None:
        raise TorchUnavailableError(
            "verify.torch needs PyTorch: install the optional extra with "
            f"`pip install '.[torch]'` (it pins {TORCH_PIN}, the CPU build; an unpinned torch "
            "pulls a multi-GB CUDA build)"
        )


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
            if config.norm_first:
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
            """y^L at the readout position (after final_norm pre-LN), shape (B, D)."""
            y = self.embed(bits)
            last = len(self.layers) - 1
            for index, layer in enumerate(self.layers):
                if readout_only and index == last:
                    yr = self._last_layer_readout(layer, y)
                    break
                y = layer(y)
            else:
                yr = y[:, -1]
            if self.config.norm_first:
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


def _encoder_layers(module: nn.Module) -> list[tuple[str, nn.TransformerEncoderLayer]]:
    """Every nn.TransformerEncoderLayer inside ``module`` (at any depth: ``module.layers``,
    ``module.encoder.layers`` of an nn.TransformerEncoder, ...), with its qualified name."""
    return [
        (name, sub)
        for name, sub in module.named_modules()
        if isinstance(sub, nn.TransformerEncoderLayer)
    ]


def _check_module_matches(module: nn.Module, config: ModelConfig) -> None:
    """Refuse a module whose layers compute something other than ``config`` says: every
    nn.TransformerEncoderLayer found at any depth (also inside an nn.TransformerEncoder) is
    compared on norm placement, layer-norm eps, heads and activation; an nn.TransformerEncoder's
    own final norm on its eps."""
    layers = _encoder_layers(module)
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
        if layer.activation_relu_or_gelu != 1 and layer.activation is not F.relu:
            raise ValidationError(f"{name}.activation", "relu", layer.activation)
        dropout = max(layer.dropout.p, layer.dropout1.p, layer.dropout2.p)
        if dropout and layer.training:
            raise ValidationError(f"{name}.dropout", "0, or the module in eval mode", dropout)
    finals = [
        (name, sub.norm)
        for name, sub in module.named_modules()
        if isinstance(sub, nn.TransformerEncoder) and sub.norm is not None
    ]
    final = getattr(module, "final_norm", None)
    if isinstance(final, nn.LayerNorm):
        finals.append(("final_norm", final))
    for name, norm in finals:
        if not config.norm_first:
            raise ValidationError(
                f"{name}.norm" if name != "final_norm" else name,
                "no final layer norm with a post-LN config (model-spec has none)",
                "a LayerNorm",
            )
        if isinstance(norm, nn.LayerNorm) and norm.eps != config.ln_eps:
            raise ValidationError(f"{name}.eps", f"{config.ln_eps} (config)", norm.eps)


def _plain_norm_names(config: ModelConfig) -> list[str]:
    """Names a torch model carries for norms that the spec, without ln_affine, does not."""
    if config.ln_affine:
        return []
    norms = [f"layers.{i}.{n}" for i in range(config.n_layers) for n in ("norm1", "norm2")]
    if config.norm_first:
        norms.append("final_norm")
    return [f"{n}.{part}" for n in norms for part in ("weight", "bias")]


_LAYER_KEY = re.compile(
    r"^(?P<prefix>.*?)(?P<index>\d+)\.(?P<rest>self_attn\.in_proj_weight|self_attn\.in_proj_bias|"
    r"self_attn\.out_proj\.weight|self_attn\.out_proj\.bias|linear1\.weight|linear1\.bias|"
    r"linear2\.weight|linear2\.bias|norm1\.weight|norm1\.bias|norm2\.weight|norm2\.bias)$"
)


_SPEC_TOP = frozenset(
    {
        "token_embedding",
        "pos_embedding",
        "readout.weight",
        "readout.bias",
        "final_norm.weight",
        "final_norm.bias",
    }
)


@dataclass(frozen=True)
class KeyMapping:
    """How a state_dict's names became model-spec names.

    ``renames``: (original name, spec name, note) for every array that was renamed or reshaped
    (note e.g. "reshaped (1, 16) -> (16,)"); ``found``: every name of the original state_dict.
    """

    renames: tuple[tuple[str, str, str], ...]
    found: tuple[str, ...]


def _keys_message(keys: object) -> str:
    names = list(keys)
    return f"{len(names)} keys found: " + ", ".join(names)


def _shape(value: object) -> tuple[int, ...]:
    return tuple(value.shape) if hasattr(value, "shape") else np.shape(value)


def _apply_user_map(
    state: Mapping[str, object], key_map: Mapping[str, str] | None, prefix: str | None
) -> dict[str, object]:
    """Strip ``prefix`` (names without it are dropped: a checkpoint's other entries), then
    rename by ``key_map``: an exact name, or a name prefix when the key ends in "." or "*"."""
    out: dict[str, object] = {}
    for name, value in state.items():
        if prefix:
            if not name.startswith(prefix):
                continue
            name = name[len(prefix) :]
        out[name] = value
    if not key_map:
        return out
    mapped: dict[str, object] = {}
    for name, value in out.items():
        new = name
        for old, repl in key_map.items():
            if old.endswith("*") and name.startswith(old[:-1]):
                new = repl.rstrip("*") + name[len(old) - 1 :]
                break
            if old.endswith(".") and name.startswith(old):
                new = repl + name[len(old) :]
                break
            if name == old:
                new = repl
                break
        if new in mapped:
            raise ValidationError("key_map", "names that stay distinct", f"two arrays map to {new}")
        mapped[new] = value
    return mapped


def spec_state_dict(
    state: Mapping[str, object],
    *,
    key_map: Mapping[str, str] | None = None,
    prefix: str | None = None,
) -> tuple[dict[str, object], KeyMapping]:
    """A state_dict renamed to model-spec names, and how (see :class:`KeyMapping`).

    After ``prefix`` and ``key_map`` (applied first, see :func:`_apply_user_map`), names are
    recognised by structure, so a model built the usual way needs no hand renaming:

    - encoder layers: ``<anything>.<l>.self_attn.in_proj_weight`` etc. (the names of
      nn.TransformerEncoderLayer, e.g. ``encoder.layers.0...``) -> ``layers.<l>...``, layers
      renumbered from 0 in order;
    - the final norm of an nn.TransformerEncoder (``<encoder>.norm.weight/.bias``) ->
      ``final_norm.*``;
    - embeddings: the 2-d tables left over; the token table is the one with 2 or 3 rows (a 2-row
      table, no eos token, gets a zero third row, which is never read), the position table is
      the other one (or the one whose name says "pos");
    - the head: a (1, D) or (D,) weight with a (1,) or () bias (nn.Linear(D, 1)) -> ``readout.*``
      (reshaped).

    Names already in model-spec form pass unchanged. Anything else raises ValidationError naming
    it and listing every key found.
    """
    _require_torch()
    if not isinstance(state, Mapping):
        raise ValidationError("state_dict", "a mapping name -> tensor", type(state).__name__)
    found = tuple(state)
    work = _apply_user_map(state, key_map, prefix)
    if not work:
        raise ValidationError(
            "state_dict", f"arrays (after prefix {prefix!r})", _keys_message(found)
        )
    out: dict[str, object] = {}
    renames: list[tuple[str, str, str]] = []
    left: dict[str, object] = {}

    def put(old: str, new: str, value: object, note: str = "") -> None:
        if new in out:
            raise ValidationError(old, f"a single array for {new}", _keys_message(found))
        out[new] = value
        if old != new or note:
            renames.append((old, new, note))

    # encoder layers, at any prefix; renumbered in order of appearance of their index
    layer_prefixes: dict[str, list[int]] = {}
    for name in list(work):
        if name in _SPEC_TOP or (name.startswith("layers.") and _LAYER_KEY.match(name)):
            value = work.pop(name)  # already a model-spec name
            shp = _shape(value)
            if name == "readout.weight" and len(shp) == 2 and shp[0] == 1:
                put(name, name, _reshape(value, (shp[1],)), f"reshaped {shp} -> ({shp[1]},)")
            elif name == "readout.bias" and shp == (1,):
                put(name, name, _reshape(value, ()), "reshaped (1,) -> ()")
            else:
                put(name, name, value)
    for name, value in work.items():
        m = _LAYER_KEY.match(name)
        if m:
            layer_prefixes.setdefault(m["prefix"], [])
            if int(m["index"]) not in layer_prefixes[m["prefix"]]:
                layer_prefixes[m["prefix"]].append(int(m["index"]))
        else:
            left[name] = value
    if len(layer_prefixes) > 1:
        raise ValidationError(
            "state_dict",
            "encoder layers under one prefix",
            f"prefixes {sorted(layer_prefixes)}; {_keys_message(found)}",
        )
    encoder_prefix = ""
    for lp, indices in layer_prefixes.items():
        order = {old: new for new, old in enumerate(sorted(indices))}
        for name, value in work.items():
            m = _LAYER_KEY.match(name)
            if m:
                put(name, f"layers.{order[int(m['index'])]}.{m['rest']}", value)
        encoder_prefix = lp[: -len("layers.")] if lp.endswith("layers.") else ""
    # an nn.TransformerEncoder's final norm
    for part in ("weight", "bias"):
        for cand in (f"{encoder_prefix}norm.{part}", f"final_norm.{part}"):
            if cand in left and encoder_prefix and f"final_norm.{part}" not in out:
                put(cand, f"final_norm.{part}", left.pop(cand))
                break
    # the head: nn.Linear(D, 1) or the spec's readout
    heads = []
    for name, value in left.items() if "readout.weight" not in out else ():
        if name.endswith(".weight") and len(_shape(value)) in (1, 2):
            shp = _shape(value)
            if len(shp) == 2 and shp[0] != 1:
                continue
            bias = name[: -len("weight")] + "bias"
            if bias in left and int(np.prod(_shape(left[bias]))) == 1:
                heads.append((name, bias))
    if len(heads) > 1:
        named = [h for h in heads if h[0] == "readout.weight"]
        heads = named or heads
    if len(heads) > 1:
        raise ValidationError(
            "state_dict",
            "one readout head (a Linear(D, 1)); use key_map to name it",
            f"candidates {[h[0] for h in heads]}; {_keys_message(found)}",
        )
    for wname, bname in heads:
        w, b = left.pop(wname), left.pop(bname)
        d = int(np.prod(_shape(w)))
        note_w = f"reshaped {_shape(w)} -> ({d},)" if _shape(w) != (d,) else ""
        note_b = f"reshaped {_shape(b)} -> ()" if _shape(b) != () else ""
        put(wname, "readout.weight", _reshape(w, (d,)), note_w)
        put(bname, "readout.bias", _reshape(b, ()), note_b)
    # embeddings: the remaining 2-d tables
    tables = {n: v for n, v in left.items() if len(_shape(v)) == 2}
    token = (
        [n for n in tables if _shape(tables[n])[0] in (2, 3) and "pos" not in n.lower()]
        if "token_embedding" not in out
        else []
    )
    if len(token) > 1:
        token = [n for n in token if "tok" in n.lower()] or token
    if len(token) == 1:
        name = token[0]
        value = left.pop(name)
        rows = _shape(value)[0]
        note = ""
        if rows == 2:
            value = _pad_rows(value, 3)
            note = "padded with a zero eos row (2 -> 3 rows; no eos token)"
        put(name, "token_embedding", value, note)
        tables.pop(name)
    elif len(token) > 1:
        raise ValidationError(
            "state_dict",
            "one token table (2 or 3 rows); use key_map to name it",
            f"candidates {token}; {_keys_message(found)}",
        )
    pos = (
        [n for n in tables if n == "pos_embedding"]
        or [n for n in tables if "pos" in n.lower()]
        or list(tables)
    )
    if len(pos) == 1:
        put(pos[0], "pos_embedding", left.pop(pos[0]))
    elif len(pos) > 1:
        raise ValidationError(
            "state_dict",
            "one position table; use key_map to name it",
            f"candidates {pos}; {_keys_message(found)}",
        )
    if left:
        raise ValidationError(
            ", ".join(left),
            "names model-spec knows or can map (layers, embeddings, a Linear(D, 1) head);"
            " pass key_map or prefix",
            _keys_message(found),
        )
    return out, KeyMapping(tuple(renames), found)


def _reshape(value: object, shape: tuple[int, ...]) -> object:
    if isinstance(value, torch.Tensor):
        return value.detach().reshape(shape)
    return np.asarray(value).reshape(shape)


def _pad_rows(value: object, rows: int) -> object:
    if isinstance(value, torch.Tensor):
        value = value.detach()
        pad = value.new_zeros((rows - value.shape[0], value.shape[1]))
        return torch.cat([value, pad], dim=0)
    arr = np.asarray(value)
    return np.concatenate([arr, np.zeros((rows - arr.shape[0], arr.shape[1]), arr.dtype)])


_OVERRIDES = ("n_heads", "ln_eps", "norm_first", "eos", "pos_encoding", "embedding", "ln_affine")


def infer_config(
    source: nn.Module | Mapping[str, object],
    *,
    key_map: Mapping[str, str] | None = None,
    prefix: str | None = None,
    **fields: Any,
) -> ModelConfig:
    """The ModelConfig of a torch model or state_dict, inferred where the weights tell.

    From the shapes: d_model, n_layers, d_ff, max_len (position rows - 1), embedding ("concat"
    when the tables are D/2 wide), pos_encoding ("learned" when a position table exists), eos
    (a 3-row token table). From an nn.Module also: n_heads, ln_eps, norm_first (of its
    nn.TransformerEncoderLayer modules, at any depth). ``fields`` override or complete these
    (names of ModelConfig). A bare state_dict does not tell n_heads or ln_eps: both are then
    required (no silent default: torch's LayerNorm eps is 1e-5, model-spec's default 0); without
    a position table, pos_encoding is required.
    """
    _require_torch()
    unknown = sorted(set(fields) - set(_OVERRIDES) - {"d_ff", "max_len", "d_model", "n_layers"})
    if unknown:
        raise ValidationError(unknown[0], f"one of {_OVERRIDES}", unknown[0])
    module = source if isinstance(source, nn.Module) else None
    state = source.state_dict() if module is not None else source
    spec, mapping = spec_state_dict(state, key_map=key_map, prefix=prefix)
    found = mapping.found
    if "readout.weight" not in spec:
        raise ValidationError("readout.weight", "a Linear(D, 1) head", _keys_message(found))
    d = int(_shape(spec["readout.weight"])[0])
    layers = sorted({int(k.split(".")[1]) for k in spec if k.startswith("layers.")})
    inferred: dict[str, Any] = {"d_model": d, "n_layers": len(layers)}
    if "layers.0.linear1.weight" in spec:
        inferred["d_ff"] = int(_shape(spec["layers.0.linear1.weight"])[0])
    if "token_embedding" in spec:
        width = int(_shape(spec["token_embedding"])[1])
        inferred["embedding"] = "concat" if width * 2 == d and width != d else "add"
        padded = any(
            new == "token_embedding" and "padded" in note for _, new, note in mapping.renames
        )
        inferred["eos"] = not padded
    if "pos_embedding" in spec:
        inferred["pos_encoding"] = "learned"
        inferred["max_len"] = int(_shape(spec["pos_embedding"])[0]) - 1
    inferred["ln_affine"] = True
    if module is not None:
        layer_mods = [m for _, m in _encoder_layers(module)]
        if layer_mods:
            first = layer_mods[0]
            inferred["n_heads"] = first.self_attn.num_heads
            inferred["ln_eps"] = float(first.norm1.eps)
            inferred["norm_first"] = bool(first.norm_first)
    else:
        inferred["norm_first"] = any(k.startswith("final_norm.") for k in spec)
    inferred.update(fields)
    for required, why in (
        ("n_heads", "the number of heads (a state_dict does not tell it)"),
        (
            "ln_eps",
            "the layer-norm eps (a state_dict does not tell it; torch's default is 1e-5,"
            " model-spec's 0: no default is assumed)",
        ),
        ("pos_encoding", "'sinusoidal' or 'none' (no position table found)"),
    ):
        if inferred.get(required) is None:
            raise ValidationError(required, why, f"missing; {_keys_message(found)}")
    return ModelConfig(**inferred)


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
