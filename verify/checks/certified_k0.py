"""K_0 (the number of zero-sensitivity strings) and recognition, read off certified truth tables
(Thm 4.5, Cor 4.6, Conj 5.5 and Cor 5.1-5.4 in action, the random-init experiment), and the
growth fit of K_0(N).

A certified table labels each string 1 / 0, certified undecided inside the margin, or uncertain
(``LABEL_UNCERTAIN``); nothing here guesses an uncertain bit: K_0 comes as (lower, upper) bounds
and recognition as True / False / None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from verify.model import Params
from verify.model.truth_table import (
    LABEL_UNCERTAIN,
    LABEL_UNDECIDED,
    CertifiedTruthTable,
    truth_table,
)

__all__ = [
    "fit_growth",
    "k0_at_margin",
    "k0_bounds",
    "k0_over_models",
    "k0_table",
    "recognises",
]


def k0_bounds(table: CertifiedTruthTable) -> tuple[int, int]:
    """(lower, upper) bounds on K_0 of the computed function from certified labels: x is
    certainly zero-sensitive if x and its N neighbours are certified with one label, possibly
    so if no certified neighbour disagrees. Equal when every bit is certified."""
    n = table.n
    lab = table.label.astype(np.int16)
    cert = table.certified & (lab != LABEL_UNCERTAIN)
    idx = np.arange(1 << n)
    sure = cert.copy()
    possible = np.ones(1 << n, dtype=bool)
    for bit in range(n):
        nb = idx ^ (1 << bit)
        both = cert & cert[nb]
        sure &= both & (lab == lab[nb])
        possible &= ~(both & (lab != lab[nb]))
    return int(np.count_nonzero(sure)), int(np.count_nonzero(possible))


def k0_table(params: Params, n: int) -> tuple[int, int, int]:
    """(K_0 lower, K_0 upper, uncertain bits) of the certified truth table at margin 0."""
    table = truth_table(params, n)
    lo, hi = k0_bounds(table)
    return lo, hi, table.n_uncertain


def k0_at_margin(params: Params, n: int, margin: float) -> tuple[bool | None, int, int]:
    """(recognised, K_0 lower, K_0 upper): whether T(theta, .) recognises its own function with
    margin xi (every string certified with |T| >= xi: True; some certified inside: False; else
    None) and, if it does, the K_0 bounds of that function (else (0, 0))."""
    table = truth_table(params, n, margin=margin)
    lab = table.label
    if np.any(table.certified & (lab == LABEL_UNDECIDED)):
        return False, 0, 0
    if not bool(np.all(table.certified & (lab >= 0))):
        return None, 0, 0
    lo, hi = k0_bounds(table)
    return True, lo, hi


def k0_over_models(
    models: Sequence[Params], ns: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """(K_0 lower, K_0 upper) arrays of shape (models, len(ns)) and the total number of uncertain
    bits, from each model's certified truth table at margin 0 at each N (models in order)."""
    k0_lo = np.zeros((len(models), len(ns)), dtype=np.int64)
    k0_hi = np.zeros_like(k0_lo)
    n_unc = 0
    for mi, params in enumerate(models):
        for j, n in enumerate(ns):
            k0_lo[mi, j], k0_hi[mi, j], u = k0_table(params, n)
            n_unc += u
    return k0_lo, k0_hi, n_unc


def recognises(table: CertifiedTruthTable, target: np.ndarray) -> bool | None:
    """True if every string is certified with the target's label (margin of ``table``), False if
    some certified label (or certified 'undecided') differs, None if only uncertain bits stop
    it."""
    lab = table.label
    wrong = table.certified & (lab != target)
    if np.any(wrong):
        return False
    return True if bool(np.all(table.certified)) else None


def fit_growth(ns: Sequence[int], k0: Sequence[float]) -> dict[str, float]:
    """Least-squares fits of log K_0 against N (exponential, K_0 ~ A b^N) and against log N
    (polynomial, K_0 ~ A N^c), with their residual sums of squares (on log K_0)."""
    from scipy.stats import linregress

    n = np.asarray(ns, dtype=float)
    y = np.log(np.asarray(k0, dtype=float))
    out: dict[str, float] = {}
    for name, x in (("exponential", n), ("polynomial", np.log(n))):
        fit = linregress(x, y)
        resid = y - (fit.intercept + fit.slope * x)
        out[f"{name}_rate"] = float(fit.slope)
        out[f"{name}_rate_stderr"] = float(fit.stderr) if n.size > 2 else math.nan
        out[f"{name}_sse"] = float(resid @ resid) if n.size > 2 else 0.0
    out["exponential_base"] = math.exp(out["exponential_rate"])
    return out
