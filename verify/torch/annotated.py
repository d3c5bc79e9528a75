"""Models written the annotated transformer's way (Bhattamishra et al.'s classifier and much
research code), mapped to the spec's arrays exactly, not approximated.

Recognised (:func:`recognise`), at any prefix, by the names and shapes of a state_dict:

- encoder layers ``<enc>layers.<l>.``: attention as four separate linears ``self_attn.linears.
  0..3`` (q, k, v, out) or ``self_attn.{q,k,v,out}_proj``; the MLP ``feed_forward.w_1, w_2``;
  the sublayer norms ``sublayer.0.norm``, ``sublayer.1.norm`` (gains ``a_2`` or ``weight``,
  biases ``b_2`` or ``bias``); a final norm ``<enc>norm``;
- a token table (V, D), V >= 3 rows; a learned position table (P, 1, D) or (P, D);
- a head (2, D) + (2,): two classes, or (1, D) + (1,): one logit.

The conversion (:func:`convert`): q/k/v concatenated into ``in_proj_weight`` (exact); the spec's
token rows 0, 1, eos are ``scale * lut[id]`` for the ids of '0', '1' and the end token
(``token_ids``); position rows 0..N of the table (the end token at position N); the two-class
head becomes T = logit_1 - logit_0, so the spec's label "1 iff T > 0" is argmax with ties going
to class 0 (torch.argmax returns the first maximal index). Nothing is rounded without its
radius: the difference w_1 - w_0 and b_1 - b_0 are rounded to float64 with their exact rounding
error (TwoSum) as the radius, and ``scale * lut`` (scale = sqrt(D): exact only when it is a
power of two) with the radius 2U |value| (sqrt(D) and the product each rounded once: the error
is at most 2u/(1-u)^2 |value| <= 2U |value|, U = 2^-52). ``truth_table(..., radius=...)``
certifies every label for every parameter in those balls.

The token ids ('0', '1', end) are the user's data convention: a flag, never probed (the module
computes the same on any map's own ids). What else the names cannot tell (norm placement: the
annotated transformer's ``SublayerConnection`` is pre-LN, x + f(norm(x)), but a post-LN variant
has the same names; the layer-norm formula; eps; heads; the embedding scale) comes from flags
or, with the user's module, by probing: every combination the flags leave open is run through
the spec's float64 pass on a few strings and kept only if it matches the module's own outputs;
exactly one must remain (:func:`probe`). The module's ``forward(src, lengths)`` with src (S, B)
token ids (sequence first) is called through ``annotated_probe.SequenceFirstAdapter``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.model.arithmetic.rounding import ETA, U
from verify.model.spec.config import ModelConfig
from verify.model.spec.params import Params

_ATTN = {
    "self_attn.linears.0": "q", "self_attn.linears.1": "k", "self_attn.linears.2": "v",
    "self_attn.linears.3": "o", "self_attn.q_proj": "q", "self_attn.k_proj": "k",
    "self_attn.v_proj": "v", "self_attn.out_proj": "o",
}  # fmt: skip
_MLP = {"feed_forward.w_1": "w1", "feed_forward.w_2": "w2"}
_NORMS = {"sublayer.0.norm": "norm1", "sublayer.1.norm": "norm2"}
_PART = {"weight": "weight", "bias": "bias", "a_2": "weight", "b_2": "bias"}
_LAYER_KEY = re.compile(r"^(?P<enc>.*?)layers\.(?P<l>\d+)\.(?P<sub>.+)\.(?P<part>\w+)$")
MARKERS = (".linears.", ".sublayer.", "feed_forward.w_", ".a_2", ".b_2")
LAYER_ARRAYS = ("q", "k", "v", "o", "w1", "w2", "norm1", "norm2")


@dataclass
class Structure:
    """The arrays of a recognised state_dict, by role (values: (name, array))."""

    layers: list[dict[str, dict[str, tuple[str, np.ndarray]]]]
    final_norm: dict[str, tuple[str, np.ndarray]] | None
    token: tuple[str, np.ndarray]
    position: tuple[str, np.ndarray]
    head: dict[str, tuple[str, np.ndarray]]
    found: tuple[str, ...] = field(default=())

    @property
    def d_model(self) -> int:
        return int(self.token[1].shape[1])

    @property
    def classes(self) -> int:
        return int(self.head["weight"][1].shape[0])


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if not value.is_floating_point():
            return np.asarray(value.numpy())
        return value.to(dtype=__import__("torch").float64).numpy().copy()
    return np.asarray(value, dtype=np.float64)


def _unrecognised(what: str, keys: tuple[str, ...]) -> ValidationError:
    return ValidationError(
        "CHECKPOINT",
        "a structure check-model can map (annotated-transformer layers: self_attn.linears.0-3,"
        " feed_forward.w_1/w_2, sublayer.0/1.norm)",
        f"not recognised: {what}",
        f"{len(keys)} keys; --show-keys lists them",
    )


def is_annotated(state: Mapping[str, Any]) -> bool:
    """True if the names are the annotated transformer's (its markers, MARKERS)."""
    return any(m in name for name in state for m in MARKERS)


def recognise(state: Mapping[str, Any]) -> Structure:
    """The :class:`Structure` of an annotated-transformer state_dict; anything not recognised
    raises ValidationError naming it in one short line."""
    found = tuple(state)
    layers: dict[int, dict[str, dict[str, tuple[str, np.ndarray]]]] = {}
    enc_prefixes: set[str] = set()
    left: dict[str, np.ndarray] = {}
    for name, value in state.items():
        m = _LAYER_KEY.match(name)
        role = None
        if m and m["part"] in _PART:
            role = _ATTN.get(m["sub"]) or _MLP.get(m["sub"]) or _NORMS.get(m["sub"])
        if role is None:
            if m:
                raise _unrecognised(f"{name} (in an encoder layer)", found)
            left[name] = _array(value)
            continue
        enc_prefixes.add(m["enc"])
        slot = layers.setdefault(int(m["l"]), {}).setdefault(role, {})
        slot[_PART[m["part"]]] = (name, _array(value))
    if not layers:
        raise _unrecognised("no encoder layer (<encoder>.layers.<l>.*)", found)
    if len(enc_prefixes) > 1:
        raise _unrecognised(f"encoder layers under several prefixes {sorted(enc_prefixes)}", found)
    enc = enc_prefixes.pop()
    ordered = [layers[i] for i in sorted(layers)]
    for index, layer in zip(sorted(layers), ordered, strict=True):
        for role in LAYER_ARRAYS:
            if set(layer.get(role, {})) != {"weight", "bias"}:
                raise _unrecognised(f"layer {index}'s {role} (a weight and a bias)", found)
    final = {}
    for part in ("a_2", "b_2", "weight", "bias"):
        name = f"{enc}norm.{part}"
        if name in left:
            final[_PART[part]] = (name, left.pop(name))
    if final and set(final) != {"weight", "bias"}:
        raise _unrecognised(f"the final norm {enc}norm (a gain and a bias)", found)
    d = ordered[0]["q"]["weight"][1].shape[1]
    heads = [
        n for n, a in left.items()
        if n.endswith("weight") and a.ndim == 2 and a.shape[1] == d and a.shape[0] in (1, 2)
        and n[: -len("weight")] + "bias" in left
    ]  # fmt: skip
    if len(heads) != 1:
        raise _unrecognised(f"a head Linear(D, 2) or Linear(D, 1) (candidates: {heads})", found)
    wname = heads[0]
    bname = wname[: -len("weight")] + "bias"
    head = {"weight": (wname, left.pop(wname)), "bias": (bname, left.pop(bname))}
    tokens = [n for n, a in left.items() if a.ndim == 2 and a.shape[1] == d and a.shape[0] >= 3]
    positions = [
        n for n, a in left.items()
        if (a.ndim == 3 and a.shape[1:] == (1, d)) or (a.ndim == 2 and a.shape[1] == d)
    ]  # fmt: skip
    if len(tokens) > 1:  # a 2-d position table is also (P, D): the one named like positions
        positions = [n for n in positions if n not in tokens or re.search(r"pos|pe\b", n)]
        tokens = [n for n in tokens if n not in positions]
    if len(tokens) != 1:
        raise _unrecognised(f"one token table (V >= 3, D = {d}) (candidates: {tokens})", found)
    token = (tokens[0], left.pop(tokens[0]))
    positions = [n for n in positions if n in left]
    if len(positions) != 1:
        raise _unrecognised(f"one position table (P, 1, D) (candidates: {positions})", found)
    position = (positions[0], left.pop(positions[0]))
    if left:
        raise _unrecognised(", ".join(sorted(left)), found)
    return Structure(ordered, final or None, token, position, head, found)


@dataclass(frozen=True)
class Choice:
    """What the names cannot tell (module doc): set by a flag, or probed."""

    token_ids: tuple[int, int, int]  # ids of '0', '1' and the end token
    scale: str  # "sqrt_d" or "1"
    ln_form: str
    norm_first: bool
    ln_eps: float
    n_heads: int

    def describe(self) -> str:
        z, o, e = self.token_ids
        return (
            f"token ids '0' = {z}, '1' = {o}, end = {e}; embeddings times"
            f" {'sqrt(D)' if self.scale == 'sqrt_d' else '1'};"
            f" {'pre' if self.norm_first else 'post'}-LN; layer norm {self.ln_form},"
            f" eps {self.ln_eps:g}; {self.n_heads} heads"
        )


def _two_diff(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fl(a - b), its exact rounding error) by TwoSum (round to nearest)."""
    s = a - b
    bb = s - a
    err = (a - (s - bb)) + (-b - bb)
    return s, err


def _scaled(table: np.ndarray, d: int, scale: str) -> tuple[np.ndarray, np.ndarray]:
    """(fl(fl(sqrt(D)) table), radius) with radius 0 when sqrt(D) is a power of two (exact),
    else 2U |value| + ETA (module doc); scale "1": the table, radius 0."""
    if scale == "1":
        return table.copy(), np.zeros_like(table)
    s = math.sqrt(d)
    out = s * table
    exact = s == 2.0 ** round(math.log2(s)) and np.all(np.isfinite(out))
    if exact and (not np.any(out) or np.min(np.abs(out[out != 0])) > 1e-290):
        return out, np.zeros_like(out)
    return out, 2 * U * np.abs(out) + ETA


def convert(structure: Structure, choice: Choice, n_bits: int) -> tuple[Params, dict, list[str]]:
    """(Params, parameter radii name -> array (only the non-zero ones), notes on what was
    rounded) of ``structure`` for strings of ``n_bits`` (module doc)."""
    st, d = structure, structure.d_model
    cfg = ModelConfig(
        d_model=d, n_layers=len(st.layers), n_heads=choice.n_heads,
        d_ff=int(st.layers[0]["w1"]["weight"][1].shape[0]), ln_eps=choice.ln_eps,
        norm_first=choice.norm_first, final_norm=st.final_norm is not None, eos=True,
        pos_encoding="learned", max_len=n_bits, ln_form=choice.ln_form,
    )  # fmt: skip
    vocab = st.token[1].shape[0]
    if max(choice.token_ids) >= vocab or len(set(choice.token_ids)) != 3:
        raise ValidationError("--token-ids", f"three distinct ids below {vocab}", choice.token_ids)
    arrays: dict[str, np.ndarray] = {}
    radius: dict[str, np.ndarray] = {}
    notes: list[str] = []
    table, r = _scaled(st.token[1][list(choice.token_ids)], d, choice.scale)
    arrays["token_embedding"] = table
    if np.any(r):
        radius["token_embedding"] = r
        notes.append(f"{st.token[0]} times sqrt({d}) rounded: carried with radius 2U |value|")
    pos = st.position[1].reshape(st.position[1].shape[0], -1)
    if pos.shape[0] < n_bits + 1:
        rows = pos.shape[0]
        raise ValidationError("-N", f"at most {rows - 1} (the position table's rows - 1)", n_bits)
    arrays["pos_embedding"] = pos[: n_bits + 1].copy()
    for index, layer in enumerate(st.layers):
        p = f"layers.{index}."
        arrays[p + "self_attn.in_proj_weight"] = np.concatenate(
            [layer[k]["weight"][1] for k in "qkv"], axis=0
        )
        arrays[p + "self_attn.in_proj_bias"] = np.concatenate([layer[k]["bias"][1] for k in "qkv"])
        for spec, role in (("self_attn.out_proj", "o"), ("linear1", "w1"), ("linear2", "w2"),
                           ("norm1", "norm1"), ("norm2", "norm2")):  # fmt: skip
            for part in ("weight", "bias"):
                arrays[f"{p}{spec}.{part}"] = layer[role][part][1].copy()
    if st.final_norm is not None:
        for part in ("weight", "bias"):
            arrays[f"final_norm.{part}"] = st.final_norm[part][1].copy()
    w, b = st.head["weight"][1], st.head["bias"][1]
    if st.classes == 2:
        arrays["readout.weight"], ew = _two_diff(w[1], w[0])
        arrays["readout.bias"], eb = (np.asarray(v).reshape(()) for v in _two_diff(b[1:2], b[0:1]))
        for name, err in (("readout.weight", ew), ("readout.bias", eb)):
            if np.any(err):
                radius[name] = np.abs(err)
                notes.append(f"{name} = class 1 - class 0 rounded: carried with its exact error")
    else:
        arrays["readout.weight"], arrays["readout.bias"] = w.reshape(d).copy(), b.reshape(())
    return Params(cfg, arrays), radius, notes
