"""Summaries of many measurements: the worst comparison per label, a log-log slope."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from verify.registry import Row

__all__ = [
    "Worst", "definitional", "loglog_fit", "loglog_slope", "loglog_slope_ci", "mean_ci",
    "slope_row",
]  # fmt: skip


class Worst:
    """The worst (largest measured/bound) comparison seen under each label, in first-seen order.

    With ``trivial=`` (the trivial bound of that comparison, e.g. the output swing of its model)
    each comparison is counted as vacuous or informative; a label's row carries its worst
    comparison's trivial bound only when *every* comparison under the label was vacuous (then
    the row is vacuous), and the counts in ``extra``."""

    def __init__(self) -> None:
        self.best: dict[str, tuple[float, float, float, dict[str, Any]]] = {}
        self.trivial: dict[str, float | None] = {}
        self.counts: dict[str, list[int]] = {}  # label -> [informative, vacuous]

    def add(
        self,
        label: str,
        measured: float,
        bound: float,
        info: dict | None = None,
        trivial: float | None = None,
    ) -> None:
        ratio = Row(label, measured, bound).ratio
        if trivial is not None:
            counts = self.counts.setdefault(label, [0, 0])
            counts[bool(bound >= trivial)] += 1
        if label not in self.best or ratio > self.best[label][0]:
            self.best[label] = (ratio, float(measured), float(bound), info or {})
            self.trivial[label] = None if trivial is None else float(trivial)

    def rows(self) -> list[Row]:
        """One row per label: its worst comparison (``extra`` holds the info given with it)."""
        out = []
        for k, (_, m, b, info) in self.best.items():
            extra = dict(info)
            trivial = None
            if k in self.counts:
                informative, vacuous = self.counts[k]
                extra["comparisons informative/vacuous"] = [informative, vacuous]
                trivial = self.trivial[k] if informative == 0 else None
            out.append(Row(k, m, b, extra=extra, trivial=trivial))
        return out

    def worst_ratio(self) -> float:
        """The largest measured/bound over every label (nan when nothing was added)."""
        return max((v[0] for v in self.best.values()), default=math.nan)


def definitional(rows: list[Row]) -> list[Row]:
    """``rows`` marked definitional (true of every model by construction, e.g. z <= eps^-1/2):
    they can fail only through a bug and are never counted as holding (Row.definitional)."""
    for r in rows:
        r.definitional = True
    return rows


def loglog_fit(ns: list[int], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope of log y against log N and its standard error
    (``scipy.stats.linregress``; nan with fewer than three points)."""
    from scipy.stats import linregress

    lx, ly = np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float))
    fit = linregress(lx, ly)
    return float(fit.slope), float(fit.stderr) if lx.size > 2 else math.nan


def loglog_slope(ns: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y against log N (:func:`loglog_fit` without the error)."""
    return loglog_fit(ns, ys)[0]


def mean_ci(values: Sequence[float], *, confidence: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean (``scipy.stats.t.interval`` with the standard error
    ``scipy.stats.sem``): mean +- t_{n-1} s / sqrt(n). Chosen over a bootstrap because the
    toolkit's means are over a handful of models or seeds (3 at the quick budget), where a
    bootstrap has only a few distinct resamples; it assumes a roughly normal mean. (v, v) when
    every value is equal, (nan, nan) for one value (drawn without an interval)."""
    from scipy.stats import sem, t

    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1:  # one value says nothing about the spread
        return math.nan, math.nan
    if np.all(v == v[0]):
        return float(v[0]), float(v[0])
    lo, hi = t.interval(confidence, v.size - 1, loc=float(v.mean()), scale=float(sem(v)))
    return float(lo), float(hi)


def loglog_slope_ci(
    ns: list[int], ys: list[float], confidence: float = 0.95
) -> tuple[float, tuple[float, float]]:
    """Least-squares slope of log y against log N and its t interval at ``confidence``
    (scipy.stats.linregress; NaN interval with fewer than 3 points)."""
    from scipy import stats  # lazy: scipy.stats costs ~1 s to import

    slope, stderr = loglog_fit(ns, ys)
    if len(ns) < 3:
        return slope, (math.nan, math.nan)
    half = float(stats.t.ppf(0.5 + confidence / 2, len(ns) - 2)) * stderr
    return slope, (slope - half, slope + half)


def slope_row(label: str, ns: list[int], ys: list[float], *, trivial: float | None = None) -> Row:
    """N-independence as a row: the log-log slope of ``ys`` against N (point estimate, 95%
    interval beside it) against 0. Never decisive: a quantity bounded in N can still rise at
    the tested N, so a positive slope leaves the check undecided, never violated."""
    slope, ci = loglog_slope_ci(ns, ys)
    extra = {"N": list(ns), "values": [float(y) for y in ys]}
    return Row(label, slope, 0.0, ci=ci, extra=extra, decisive=False, trivial=trivial)
