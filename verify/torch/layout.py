"""The layout choices of a torch transformer that change the function it computes, and which of
them the certified passes cover.

A layout is (norm placement, final layer norm, activation). The certified passes
(docs/model-spec.md) compute all four norm layouts users train: the spec's two (post-LN without a
final norm, torch's default layer; pre-LN followed by a final norm) and the project's extension
(pre-LN without a final norm, nn.TransformerEncoder's default ``norm=None``; post-LN followed by
a final norm). Activation: ReLU only; GELU is refused in one line (no certified enclosure of erf
in the passes), as is anything else, instead of being certified as a ReLU model.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.errors import ValidationError

try:  # the optional extra
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # pragma: no cover - without torch
    nn = None  # type: ignore[assignment]

__all__ = ["ACTIVATIONS", "Layout", "check_supported", "module_layout"]

ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class Layout:
    """What a module tells of its layout; None where it does not (e.g. no
    nn.TransformerEncoderLayer found, so its code is not readable as one)."""

    norm_first: bool | None = None
    final_norm: bool | None = None
    activation: str | None = None


def check_supported(norm_first: bool, final_norm: bool, activation: str, where: str = "") -> None:
    """Raise a one-line ValidationError unless the certified passes compute this layout."""
    at = f" ({where})" if where else ""
    if activation != "relu":
        why = (
            "GELU is refused: the certified passes have no rigorous enclosure of erf, so a"
            " GELU model would be certified as a ReLU one"
            if activation == "gelu"
            else "the spec and the certified passes compute relu only"
        )
        raise ValidationError(f"activation{at}", "relu", activation, why)


def _activation_name(layer: nn.TransformerEncoderLayer) -> str:
    """relu, gelu, or the name of whatever else the layer applies."""
    act = layer.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu or isinstance(act, nn.GELU):
        return "gelu"
    return getattr(act, "__name__", type(act).__name__)


def module_layout(module: nn.Module) -> Layout:
    """The layout of ``module`` as far as its nn.TransformerEncoderLayer modules (at any depth)
    and its final norms (an nn.TransformerEncoder's ``norm``, a ``final_norm`` attribute) tell.

    Layers that disagree among themselves are refused (one line). With no encoder layer found,
    nothing is told (all None)."""
    layers = [
        (n, m) for n, m in module.named_modules() if isinstance(m, nn.TransformerEncoderLayer)
    ]
    if not layers:
        return Layout()
    first_name, first = layers[0]
    for name, layer in layers[1:]:
        for what, a, b in (
            ("norm_first", first.norm_first, layer.norm_first),
            ("activation", _activation_name(first), _activation_name(layer)),
        ):
            if a != b:
                raise ValidationError(f"{name}.{what}", f"{a} (as {first_name})", b)
    finals = [
        sub.norm
        for sub in module.modules()
        if isinstance(sub, nn.TransformerEncoder) and sub.norm is not None
    ]
    if isinstance(getattr(module, "final_norm", None), nn.LayerNorm):
        finals.append(module.final_norm)
    return Layout(bool(first.norm_first), bool(finals), _activation_name(first))
