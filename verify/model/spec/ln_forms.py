"""The layer-norm forms a model may use (config field ``ln_form``), written once.

- ``"torch"`` (the contract, model-spec): LN(v) = gamma (v - mean) / sqrt(var + eps) + beta with
  the biased (population) variance var = sum (v_i - mean)^2 / D and eps inside the square root.
- ``"annotated"`` (the annotated-transformer form of research code, e.g. Bhattamishra et al.):
  LN(v) = a (v - mean) / (std + eps) + b with the unbiased std = sqrt(sum (v_i - mean)^2 / (D - 1))
  and eps added to the std (needs D >= 2).

Both are z (v - mean) times the gain plus the bias, with the coefficient
z = 1/sqrt(var + eps) (torch) or z = 1/(sqrt(var D/(D-1)) + eps) (annotated). That coefficient
is "z" of the blowup diagnostics for either form (the paper's z = 1/sqrt(var + eps) is the torch
case): the factor by which the norm scales its centred input. The reported variance stays the
population variance of the input in both forms.

The reference contexts (``verify.model.generic.reference``: mpmath, arb, the float64 MidRad
pass), the numpy float64 passes, the Numba kernels (per-string, exhaustive) and the double-
double kernel compute both forms (the kernels from the flag
``stages.bundles.Scalars.ln_annotated``, with the radius rules of docs/model.md), and so does
the sub-cube pass (its affine arithmetic has the square root of the unbiased variance). The
Numba forward (diagnostics) kernel and the torch modules compute torch's form only and refuse any
other (:func:`require_torch_form`), so a model is never certified with a layer norm other than
its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verify.errors import ValidationError

LN_FORMS = ("torch", "annotated")
DEFAULT_LN_FORM = "torch"
LN_FORMULAS = {
    "torch": "gamma (v - mean) / sqrt(var_biased + eps) + beta",
    "annotated": "a (v - mean) / (std_unbiased + eps) + b",
}


def ln_formula(form: str, eps: float | None = None) -> str:
    """The formula of ``form`` as one line (with eps's value when given)."""
    text = f"LN(v) = {LN_FORMULAS[form]}"
    return text if eps is None else f"{text}, eps = {eps:g}"


def require_torch_form(config: Any, what: str) -> None:
    """Raise unless ``config.ln_form`` is torch's: ``what`` computes torch's layer norm only."""
    form = getattr(config, "ln_form", DEFAULT_LN_FORM)
    if form != "torch":
        raise ValidationError(
            "ln_form",
            "'torch' for " + what,
            form,
            f"{what} computes {LN_FORMULAS['torch']} only",
        )


def coefficient(var: np.ndarray, eps: float, d: int, form: str) -> np.ndarray:
    """The layer-norm coefficient z from the population variance ``var`` of inputs of width
    ``d`` (module doc), float64; NaN/inf where it is undefined/unbounded (var = 0 at eps = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "torch":
            return 1.0 / np.sqrt(var + eps)
        if d < 2:
            return np.full_like(np.asarray(var, dtype=np.float64), np.nan)
        return 1.0 / (np.sqrt(var * (d / (d - 1.0))) + eps)
