"""The user's own outputs against the spec pass: a model is certified only if it is the user's.

``module_outputs(module, bits)`` runs a torch module on bit strings (in float64 when a float64
copy of it runs, else in its own dtype); ``compare_outputs`` compares outputs with the spec
pass's T on the same strings and ``check_same_model`` raises :class:`ModelMismatchError` (one
line: the first differing string and the largest difference) when they differ beyond a
float-rounding tolerance; ``comparison_strings`` picks the strings (all of them for N <= 12,
otherwise a seeded sample plus the strings nearest the threshold).

Tolerance: ``sqrt(u) (1 + max |T_spec|)`` with u the unit roundoff of the dtype the outputs were
computed in (1.5e-8 relative for float64, 3.5e-4 for float32). Measured on the models of
tests/_torch_layouts.py (D = 12, L = 2, N = 6, seeds 0-2, 2026-12-02): the user's module run in
float64 differs from the spec pass by at most 5.8e-16 (3.5e-16 relative), in float32 by at most
2.1e-7; reading it with a wrong layout moves T by 0.058-0.77 (pre-LN without a final norm read as
post-LN), 0.18-0.32 (post-LN with a final norm read as pre-LN), 0.041-0.13 (GELU read as ReLU).
A model whose T is ill-conditioned (eps = 0 and a near-constant layer-norm input) can differ by
more than the tolerance in honest rounding: it is then refused, never certified.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from verify.errors import ModelMismatchError, ValidationError
from verify.torch.requirement import require_torch

__all__ = [
    "Comparison",
    "ModelMismatchError",
    "bit_string",
    "check_same_model",
    "compare_outputs",
    "comparison_strings",
    "module_outputs",
]

EXHAUSTIVE_MAX_N = 12  # compare on all strings up to here


def bit_string(row: np.ndarray) -> str:
    """'x_1 x_2 ... x_N' as a string of 0/1, x_1 first."""
    return "".join(str(int(b)) for b in row)


@dataclass(frozen=True)
class Comparison:
    """Outputs of the user's model and of the spec pass on ``compared`` strings."""

    compared: int
    dtype: str  # the dtype the user's outputs were computed in
    tolerance: float
    largest: float  # max |T_user - T_spec|
    first_bad: str | None  # the first string (in the order compared) beyond the tolerance
    first_user: float | None
    first_spec: float | None
    source: str  # "module" or "reference logits"

    @property
    def agrees(self) -> bool:
        """Every compared output within the tolerance."""
        return self.first_bad is None

    def message(self) -> str:
        """One line: what differs, where, by how much."""
        if self.agrees:
            return (
                f"the {self.source} agree with the spec pass on all {self.compared} strings"
                f" compared (largest difference {self.largest:.3g}, tolerance {self.tolerance:.3g},"
                f" {self.dtype})"
            )
        return (
            f"the {self.source} differ from the spec model read from the weights: first at"
            f" string {self.first_bad} (x_1 first; user {self.first_user:.6g}, spec"
            f" {self.first_spec:.6g}), largest difference {self.largest:.3g} over"
            f" {self.compared} strings (tolerance {self.tolerance:.3g}, {self.dtype});"
            " nothing certified"
        )


def _unit_roundoff(dtype: str) -> float:
    return float(np.finfo(np.dtype(dtype)).eps) / 2.0


def compare_outputs(
    t_user: np.ndarray, t_spec: np.ndarray, bits: np.ndarray, dtype: str, source: str
) -> Comparison:
    """Compare the user's outputs with the spec pass's, string by string (module doc)."""
    t_user = np.asarray(t_user, dtype=np.float64).reshape(-1)
    t_spec = np.asarray(t_spec, dtype=np.float64).reshape(-1)
    if t_user.shape != t_spec.shape:
        raise ValidationError(source, f"{t_spec.shape[0]} outputs", t_user.shape[0])
    finite = np.isfinite(t_spec)
    scale = 1.0 + (float(np.max(np.abs(t_spec[finite]))) if finite.any() else 0.0)
    tol = float(np.sqrt(_unit_roundoff(dtype))) * scale
    with np.errstate(invalid="ignore"):
        diff = np.abs(t_user - t_spec)
    both_nan = np.isnan(t_user) & np.isnan(t_spec)
    bad = ~(diff <= tol) & ~both_nan
    largest = float(np.nanmax(np.where(both_nan, 0.0, diff))) if diff.size else 0.0
    if np.isnan(diff[~both_nan]).any():
        largest = float("nan")
    first = int(np.flatnonzero(bad)[0]) if bad.any() else None
    return Comparison(
        compared=int(t_user.size),
        dtype=dtype,
        tolerance=tol,
        largest=largest,
        first_bad=None if first is None else bit_string(bits[first]),
        first_user=None if first is None else float(t_user[first]),
        first_spec=None if first is None else float(t_spec[first]),
        source=source,
    )


def check_same_model(comparison: Comparison) -> Comparison:
    """``comparison`` if it agrees; otherwise raise ModelMismatchError with its one line."""
    if not comparison.agrees:
        raise ModelMismatchError(comparison.message())
    return comparison


def _call(module: object, bits: np.ndarray, eos: bool | None, chunk: int) -> np.ndarray:
    import torch

    out = []
    for start in range(0, bits.shape[0], chunk):
        x = torch.from_numpy(bits[start : start + chunk].astype(np.int64))
        if eos is not None:
            x = torch.cat([x, torch.full((x.shape[0], 1), 2, dtype=torch.int64)], dim=1)
        with torch.no_grad():
            t = module(x)
        if not isinstance(t, torch.Tensor):
            raise ValidationError("module output", "a tensor of logits", type(t).__name__)
        if t.dim() == 2 and t.shape[1] == 1:
            t = t[:, 0]
        if tuple(t.shape) != (x.shape[0],):
            raise ValidationError(
                "module output", f"shape ({x.shape[0]},) or ({x.shape[0]}, 1)", tuple(t.shape)
            )
        out.append(t.detach().to("cpu", torch.float64).numpy())
    return np.concatenate(out) if out else np.zeros(0)


def module_outputs(
    module: object, bits: np.ndarray, *, tokens: bool = False, chunk: int = 1024
) -> tuple[np.ndarray, str, np.ndarray]:
    """(outputs in float64 where possible, the dtype they were computed in, outputs in the
    module's own dtype) of ``module`` (eval mode, no gradients) on ``bits`` (B, N), x_1 in
    column 0. The module is called with an int64 (B, N) tensor of the bits, or with
    ``tokens=True`` an int64 (B, N + 1) tensor of the bits followed by the eos token 2; it must
    return (B,) or (B, 1) logits (T(x), positive for 1). A call that fails raises
    ValidationError with the module's own error on one line."""
    require_torch()
    import torch

    eos = True if tokens else None
    module.eval()
    params = [p for p in module.parameters() if p.is_floating_point()]
    own = str(params[0].dtype).replace("torch.", "") if params else "float64"
    try:
        native = _call(module, bits, eos, chunk)
    except ValidationError:
        raise
    except Exception as exc:  # the user's own forward
        raise ValidationError(
            "module",
            "a forward taking an int64 (B, N) tensor of bits"
            + (" with the eos token 2 appended" if tokens else " (or --module-input tokens)"),
            f"{type(exc).__name__}: {exc}".splitlines()[0][:200],
        ) from exc
    if own == "float64":
        return native, own, native
    try:
        wide = copy.deepcopy(module).to(torch.float64)
        return _call(wide, bits, eos, chunk), "float64", native
    except Exception:  # a forward that builds tensors of its own dtype: keep the module's
        return native, own, native


def comparison_strings(
    n_bits: int, t_all: np.ndarray | None, seed: int, sample: int = 4096, near: int = 256
) -> np.ndarray:
    """Sorted indices of the strings to compare: every one of the 2^N for N <= 12; otherwise
    ``sample`` drawn uniformly with ``seed`` plus the ``near`` with the smallest |T| of the spec
    pass (``t_all``, all 2^N values; NaN counts as nearest)."""
    total = 1 << n_bits
    if n_bits <= EXHAUSTIVE_MAX_N:
        return np.arange(total)
    rng = np.random.default_rng(seed)
    chosen = rng.choice(total, size=min(sample, total), replace=False)
    if t_all is not None and near > 0:
        key = np.where(np.isnan(t_all), -1.0, np.abs(t_all))
        chosen = np.concatenate([chosen, np.argsort(key, kind="stable")[:near]])
    return np.unique(chosen)
