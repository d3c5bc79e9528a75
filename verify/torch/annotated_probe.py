"""The user's annotated-transformer module called the spec's way, and what its names cannot tell
read from it by probing (``verify.torch.annotated``'s module doc).

:class:`SequenceFirstAdapter` turns the spec's (B, N) bits into the module's input: token ids
('0', '1' by ``token_ids``, the end token appended), sequence first (S, B) when
``seq_first``, with ``lengths`` (B,) = S as a second argument when the forward takes one
(Bhattamishra et al.'s ``forward(src, lengths)``); a (B, 2) output becomes
logit_1 - logit_0 (label 1 iff class 1 wins argmax strictly; a tie is class 0), (B, 1) or (B,)
is taken as T.

:func:`probe` runs every candidate :class:`~verify.torch.annotated.Choice` the flags leave open
(embedding scale, layer-norm form, norm placement; not the token ids: the module computes the
same on any map's own ids, so which id is '0', '1' or the end token is the user's data
convention and a flag, ``--token-ids``)
through the spec's float64 pass on a few strings and keeps those that match the module's own
outputs there (within sqrt(u) (1 + max |T|), u = 2^-53, as ``verify.torch.compare``); exactly
one must remain. Every string is then compared again by check-model before anything is
certified.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import math
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.model.plain.forward import forward
from verify.torch.annotated import Choice, Structure, convert

try:  # the optional extra
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - without torch
    torch = None  # type: ignore[assignment]

PROBE_STRINGS = 16
TOLERANCE = math.sqrt(2.0**-53)


def takes_lengths(module: Any) -> bool:
    """True if the module's forward takes a second positional argument (``lengths``)."""
    try:
        sig = inspect.signature(module.forward)
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds for p in sig.parameters.values()) >= 2


if torch is not None:

    class SequenceFirstAdapter(nn.Module):
        """``forward(bits (B, N) int64) -> T (B,)`` through the user's module (module doc)."""

        def __init__(
            self, module: nn.Module, token_ids: tuple[int, int, int], *, seq_first: bool,
            lengths: bool,
        ) -> None:  # fmt: skip
            super().__init__()
            self.module = module
            self.token_ids = tuple(int(t) for t in token_ids)
            self.seq_first, self.lengths = seq_first, lengths

        def forward(self, bits: torch.Tensor) -> torch.Tensor:
            zero, one, end = self.token_ids
            ids = torch.where(bits == 1, one, zero).to(torch.int64)
            ids = torch.cat([ids, torch.full((ids.shape[0], 1), end, dtype=torch.int64)], dim=1)
            src = ids.t().contiguous() if self.seq_first else ids
            args = (src, torch.full((ids.shape[0],), ids.shape[1])) if self.lengths else (src,)
            out = self.module(*args)
            if out.dim() == 2 and out.shape[1] == 2:
                return out[:, 1] - out[:, 0]
            return out.reshape(ids.shape[0])


def module_attribute(module: Any, names: tuple[str, ...], owner: tuple[str, ...]) -> Any:
    """The value of the first attribute in ``names`` of a submodule that has all of ``owner``
    (e.g. a layer norm's ``eps`` next to its ``a_2``), or None; several different values
    raise (the model would not be one config)."""
    values = set()
    for sub in module.modules():
        if all(hasattr(sub, o) for o in owner):
            for name in names:
                value = getattr(sub, name, None)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    values.add(value)
                    break
    if len(values) > 1:
        raise ValidationError(names[0], "one value in every layer", sorted(values))
    return values.pop() if values else None


def probe(
    module: Any,
    structure: Structure,
    n_bits: int,
    *,
    token_ids: tuple[int, int, int],
    scale: str | None,
    ln_form: str | None,
    norm_first: bool | None,
    ln_eps: float,
    n_heads: int,
    seq_first: bool,
    seed: int = 0,
) -> tuple[Choice, int]:
    """(the one candidate matching the module's outputs, how many were tried); module doc."""
    maps = [token_ids]  # not probed: every map reproduces the module on its own ids
    scales = [scale] if scale else ["sqrt_d", "1"]
    forms = [ln_form] if ln_form else ["annotated", "torch"]
    places = [norm_first] if norm_first is not None else [True, False]
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(PROBE_STRINGS, n_bits)).astype(np.uint8)
    bits[0], bits[1] = 0, 1
    wide = copy.deepcopy(module).to(torch.float64).eval()
    lengths = takes_lengths(module)
    matches, tried = [], 0
    for ids in maps:
        adapter = SequenceFirstAdapter(wide, ids, seq_first=seq_first, lengths=lengths)
        try:
            with torch.no_grad():
                out = adapter(torch.from_numpy(bits.astype(np.int64))).numpy()
        except Exception:
            continue
        for sc, form, nf in itertools.product(scales, forms, places):
            tried += 1
            choice = Choice(tuple(ids), sc, form, nf, ln_eps, n_heads)
            params, _, _ = convert(structure, choice, n_bits)
            t = forward(params, bits).T
            if np.all(np.abs(t - out) <= TOLERANCE * (1 + np.max(np.abs(out)))):
                matches.append(choice)
    if len(matches) != 1:
        raise ValidationError(
            "--module",
            "a module whose outputs one reading of its arrays reproduces",
            f"{len(matches)} of {tried} readings match"
            + (": " + "; ".join(c.describe() for c in matches[:3]) if matches else ""),
            "give --token-ids, --embed-scale, --ln-form, --norm to fix them"
            if matches
            else "its forward is not the annotated transformer's as mapped (docs/torch.md)",
        )
    return matches[0], tried
