"""Model-spec names for a torch state_dict, and a ModelConfig inferred from a torch model.

``spec_state_dict`` renames the arrays of a model built the usual way (nn.Embedding tables,
nn.TransformerEncoder layers at any prefix, an nn.Linear(D, 1) head, reshaped) to the names of
docs/model-spec.md; ``infer_config`` reads D, L, d_ff, max_len, eos and the embedding kind from
the shapes and, from an nn.Module, heads, eps and norm placement from its layers. Re-exported by
:mod:`verify.torch` (optional extra ``torch``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.model.spec.config import ModelConfig
from verify.torch.requirement import require_torch as _require_torch

try:  # the optional extra
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - without torch
    torch = None  # type: ignore[assignment]

__all__ = ["KeyMapping", "infer_config", "spec_state_dict"]


def _encoder_layers(module: nn.Module) -> list[tuple[str, nn.TransformerEncoderLayer]]:
    """Every nn.TransformerEncoderLayer inside ``module`` (at any depth: ``module.layers``,
    ``module.encoder.layers`` of an nn.TransformerEncoder, ...), with its qualified name."""
    return [
        (name, sub)
        for name, sub in module.named_modules()
        if isinstance(sub, nn.TransformerEncoderLayer)
    ]


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
    _check_dense(state)
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
    spec_indices = sorted({int(n.split(".")[1]) for n in out if n.startswith("layers.")})
    for indices in [spec_indices, *layer_prefixes.values()]:
        if indices and sorted(indices) != list(range(len(indices))):
            raise ValidationError(
                "state_dict",
                "encoder layers numbered 0..L-1 (a layer left out would be skipped)",
                f"layer indices {sorted(indices)}; {_keys_message(found)}",
            )
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


def _check_dense(state: Mapping[str, object]) -> None:
    """Every tensor holds its values densely: a sparse or quantized tensor, or a meta tensor
    (a shape without data), is refused naming it."""
    for name, value in state.items():
        if not isinstance(value, torch.Tensor):
            continue
        if value.device.type == "meta":
            raise ValidationError(
                name, "a tensor holding values", "a meta tensor (a shape without data)"
            )
        if value.layout != torch.strided or value.is_quantized:
            raise ValidationError(
                name, "a dense float tensor", f"a {value.layout} tensor", "save tensor.to_dense()"
            )


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


_OVERRIDES = (
    "n_heads", "ln_eps", "norm_first", "final_norm", "eos", "pos_encoding", "embedding",
    "ln_affine", "threshold", "ln_form",
)  # fmt: skip


def infer_config(
    source: nn.Module | Mapping[str, object],
    *,
    key_map: Mapping[str, str] | None = None,
    prefix: str | None = None,
    **fields: Any,
) -> ModelConfig:
    """The ModelConfig of a torch model or state_dict, inferred where the weights tell.

    From the shapes: d_model, n_layers, d_ff, max_len (position rows - 1 with eos; the rows
    without eos, a table of N rows serving N bits), embedding ("concat"
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
    inferred["final_norm"] = any(k.startswith("final_norm.") for k in spec)
    inferred.update(fields)
    if "pos_embedding" in spec and "max_len" not in fields and not inferred.get("eos", True):
        # no eos: a table of R rows serves N = R bits (positions 0..N-1); the file keeps
        # max_len + 1 rows, the last one padded by from_torch and never read (model-spec)
        inferred["max_len"] = int(_shape(spec["pos_embedding"])[0])
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
