"""Summaries of many measurements: the worst comparison per label, a log-log slope."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify.registry import Row

__all__ = ["Worst", "loglog_slope"]


class Worst:
    """The worst (largest measured/bound) comparison seen under each label, in first-seen order."""

    def __init__(self) -> None:
        self.best: dict[str, tuple[float, float, float, dict[str, Any]]] = {}

    def add(self, label: str, measured: float, bound: float, info: dict | None = None) -> None:
        ratio = Row(label, measured, bound).ratio
        if label not in self.best or ratio > self.best[label][0]:
            self.best[label] = (ratio, float(measured), float(bound), info or {})

    def rows(self) -> list[Row]:
        """One row per label: its worst comparison (``extra`` holds the info given with it)."""
        return [Row(k, m, b, extra=info) for k, (_, m, b, info) in self.best.items()]

    def worst_ratio(self) -> float:
        """The largest measured/bound over every label (nan when nothing was added)."""
        return max((v[0] for v in self.best.values()), default=math.nan)


def loglog_slope(ns: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y against log N."""
    lx, ly = np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0])
