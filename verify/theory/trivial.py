"""Trivial bounds: what holds for nothing-saying reasons at a given size. A statement's bound
that is no better than these is *vacuous* there (``Row(..., trivial=...)``, see
``verify.registry.results.Row.vacuous``).

- The output swing. The last operation before the readout is a layer norm (post-LN: norm2 of
  the last layer; pre-LN: final_norm): y = g * u + b with u = (v - mean v) / sqrt(var v + eps),
  so |u|^2 = D var / (var + eps) <= D at every eps >= 0 (where defined). Hence, for one
  parameter vector and any two strings, |T(x) - T(x')| = |(w * g) . (u - u')|
  <= 2 sqrt(D) |w * g|_2 (:func:`output_swing_bound`), |T(x)| <= sqrt(D) |w * g|_2 + |w . b +
  omega| (:func:`output_abs_bound`), and the readout vector moves by at most
  |y - y'| <= 2 sqrt(D) max|g| (:func:`readout_swing_bound`).
- Counting: there are 2^(2^N) Boolean functions on N bits (:func:`log10_all_functions`).
- H&R Cor 5's left side: on a sensitive edge of a function recognised with margin xi,
  2 xi <= |T(x) - T(x^n)| <= the output swing, so 2 xi as_N(f) <= swing as_N(f)
  (:func:`sensitivity_swing_bound`; the edge form: swing times the sensitive edges).
- Probabilities are at most 1 (``trivial=1.0``); counts of sampled models at most the sample.
"""

from __future__ import annotations

import math

import numpy as np

from verify.model import Params
from verify.validation import check_int

__all__ = [
    "last_norm_affine",
    "log10_all_functions",
    "output_abs_bound",
    "output_swing_bound",
    "readout_swing_bound",
    "sensitivity_swing_bound",
]


def last_norm_affine(params: Params) -> tuple[np.ndarray, np.ndarray]:
    """Gain and bias (g, b) of the layer norm whose output the readout reads (ones and zeros
    without ``ln_affine``)."""
    cfg = params.config
    cfg.require_spec_layout("the trivial output bound (a layer norm before the readout)")
    d = cfg.d_model
    if not cfg.ln_affine:
        return np.ones(d), np.zeros(d)
    name = "final_norm" if cfg.norm_first else f"layers.{cfg.n_layers - 1}.norm2"
    return np.asarray(params[f"{name}.weight"], float), np.asarray(params[f"{name}.bias"], float)


def output_swing_bound(params: Params) -> float:
    """2 sqrt(D) |w * g|_2: no two strings' outputs differ by more (module doc)."""
    g, _ = last_norm_affine(params)
    w = np.asarray(params["readout.weight"], float)
    return 2.0 * math.sqrt(params.config.d_model) * float(np.linalg.norm(w * g))


def output_abs_bound(params: Params) -> float:
    """sqrt(D) |w * g|_2 + |w . b + omega|: a bound on |T(x)| for every string x."""
    g, b = last_norm_affine(params)
    w = np.asarray(params["readout.weight"], float)
    omega = float(np.asarray(params["readout.bias"]))
    return math.sqrt(params.config.d_model) * float(np.linalg.norm(w * g)) + abs(
        float(w @ b) + omega
    )


def readout_swing_bound(params: Params) -> float:
    """2 sqrt(D) max|g|: no two strings' readout vectors are further apart (module doc)."""
    g, _ = last_norm_affine(params)
    return 2.0 * math.sqrt(params.config.d_model) * float(np.max(np.abs(g)))


def log10_all_functions(n_bits: int) -> float:
    """log10 of 2^(2^N), the number of Boolean functions on N bits."""
    return (1 << check_int("n_bits", n_bits, minimum=0)) * math.log10(2.0)


def sensitivity_swing_bound(params: Params, avg_sensitivity: float, n_edges: float = 1.0) -> float:
    """output_swing_bound(params) * as_N(f) * ``n_edges``: a bound on 2 xi as_N(f) (and, with
    n_edges = 2^N, on the sum of |T(x) - T(x^n)| over the sensitive ordered edges) that holds
    for every model recognising f with margin xi: each sensitive edge moves T by at least 2 xi
    and at most the swing (module doc)."""
    return output_swing_bound(params) * float(avg_sensitivity) * float(n_edges)
