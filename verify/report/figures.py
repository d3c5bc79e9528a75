"""Draw a check's :class:`~verify.lemmas.registry.FigureData` as a PNG (matplotlib, Agg).

Kinds (see FigureData):

- ``"lines"``: ``{"series": [{"label", "x", "y", "style"?}], "xlabel", "ylabel", "logx"?,
  "logy"?}``; one line per series, matplotlib format string ``style`` (default ``"o-"``).
  On a log axis, values <= 0 (and NaN) are left out: the line has a gap there.
- ``"bars"``: ``{"series": [{"label", "x", "y", "yerr"?}], "xlabel", "ylabel", "logy"?}``;
  grouped bars, one group per distinct x (numbers or category names), error bars from ``yerr``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from verify.errors import ValidationError
from verify.lemmas.registry import FigureData

KINDS = ("lines", "bars")


def figure_filename(name: str, taken: set[str]) -> str:
    """A safe, unique ``<stem>.png`` for ``name`` (appends _2, _3, ... on collisions)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "figure"
    candidate, k = stem, 1
    while candidate in taken:
        k += 1
        candidate = f"{stem}_{k}"
    taken.add(candidate)
    return candidate + ".png"


def _series(fig: FigureData) -> list[dict[str, Any]]:
    if fig.kind not in KINDS:
        raise ValidationError(f"figure {fig.name!r} kind", "one of " + ", ".join(KINDS), fig.kind)
    series = fig.data.get("series") if isinstance(fig.data, dict) else None
    if not isinstance(series, Sequence) or isinstance(series, str) or not series:
        raise ValidationError(f"figure {fig.name!r} data['series']", "a non-empty list", series)
    for i, s in enumerate(series):
        if not isinstance(s, dict) or "x" not in s or "y" not in s:
            raise ValidationError(
                f"figure {fig.name!r} series[{i}]", "a dict with 'x' and 'y'", type(s).__name__
            )
        if len(s["x"]) != len(s["y"]):
            raise ValidationError(
                f"figure {fig.name!r} series[{i}]",
                "x and y of equal length",
                f"{len(s['x'])} and {len(s['y'])}",
            )
    return list(series)


def draw_figure(fig: FigureData, path: str | Path) -> Path:
    """Draw ``fig`` into the PNG file ``path``; raise ValidationError on malformed data."""
    series = _series(fig)
    data = fig.data
    path = Path(path)
    wide = len(series) > 6
    mfig, ax = plt.subplots(figsize=(8.0 if wide else 6.4, 4.2), dpi=110)
    try:
        if fig.kind == "lines":
            for s in series:
                x = np.asarray(s["x"], dtype=float)
                y = np.asarray(s["y"], dtype=float)
                # values a log axis cannot show become gaps (not lines plunging to the edge)
                if data.get("logy"):
                    y = np.where(y > 0, y, np.nan)
                if data.get("logx"):
                    x = np.where(x > 0, x, np.nan)
                ax.plot(x, y, s.get("style", "o-"), label=s.get("label"), markersize=4)
            if data.get("logx"):
                ax.set_xscale("log")
        else:
            cats: list[Any] = []
            for s in series:
                for v in s["x"]:
                    if v not in cats:
                        cats.append(v)
            width = 0.8 / len(series)
            for j, s in enumerate(series):
                pos = np.array([cats.index(v) for v in s["x"]], dtype=float)
                yerr = s.get("yerr")
                ax.bar(
                    pos - 0.4 + width * (j + 0.5),
                    np.asarray(s["y"], dtype=float),
                    width=width,
                    yerr=None if yerr is None else np.asarray(yerr, dtype=float).T,
                    capsize=3,
                    label=s.get("label"),
                )
            ax.set_xticks(range(len(cats)))
            names = [str(c) for c in cats]
            tilt = len(cats) > 6 or max(map(len, names)) * len(cats) > 60
            ax.set_xticklabels(names, rotation=30 if tilt else 0, ha="right" if tilt else "center")
        if data.get("logy"):
            ax.set_yscale("log")
        ax.set_xlabel(str(data.get("xlabel", "")))
        ax.set_ylabel(str(data.get("ylabel", "")))
        ax.set_title(fig.title, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
        if any(s.get("label") for s in series):
            if len(series) > 6:  # a long legend goes beside the axes
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
            else:
                ax.legend(fontsize=8)
        mfig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        mfig.savefig(path)
    finally:
        plt.close(mfig)
    return path
