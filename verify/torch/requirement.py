"""Whether PyTorch (the optional extra ``torch``) is installed, and the one error that says so.

Its own module so that every part of :mod:`verify.torch` (the package face and ``mapping``,
``layout``, ``compare``) can require torch without importing the package face, which imports
them (no import cycle).
"""

from __future__ import annotations

try:  # the optional extra
    import torch
except ImportError:  # pragma: no cover - exercised in a subprocess test without torch
    torch = None  # type: ignore[assignment]

__all__ = ["TORCH_PIN", "TorchUnavailableError", "require_torch", "torch_available"]

TORCH_PIN = "torch==2.13.0"


class TorchUnavailableError(ImportError):
    """verify.torch was used but torch is not installed."""


def torch_available() -> bool:
    """True when torch can be imported."""
    return torch is not None


def require_torch() -> None:
    """Raise :class:`TorchUnavailableError` (how to install the extra) when torch is missing."""
    if torch is None:
        raise TorchUnavailableError(
            "verify.torch needs PyTorch: install the optional extra with "
            f"`pip install '.[torch]'` (it pins {TORCH_PIN}, the CPU build; an unpinned torch "
            "pulls a multi-GB CUDA build)"
        )
