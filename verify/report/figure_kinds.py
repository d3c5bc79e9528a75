"""Two more figure kinds: ratios to a bound near 1 (drawn as their distance from 1 on a log
axis) and heat maps (one row per series). See :mod:`verify.report.figures`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.report.figure_draw import n_text
from verify.report.figure_style import PALETTE, math_label


# ------------------------------------------------------------------------ ratios to a bound
def draw_ratios(mfig: Any, ax: Any, fig: Any, series: list[dict[str, Any]]) -> list[tuple]:
    """Ratios measured/bound that sit near 1: horizontal bars of the distance 1 - ratio on a
    log axis (shorter = closer to the bound), each annotated with the ratio itself; a ratio
    >= 1 (the bound reached or exceeded) is a filled marker on the left edge."""
    from matplotlib.transforms import blended_transform_factory

    if len(series) != 1:
        raise ValidationError(
            f"figure {fig.name!r} data['series']", "one series (ratios)", len(series)
        )
    s = series[0]
    cats = [str(c) for c in s["x"]]
    r = np.asarray(s["y"], dtype=float)
    gap = 1.0 - r
    pos = np.arange(len(cats), dtype=float)
    ok = gap > 0
    cont = ax.barh(pos[ok], gap[ok], height=0.6, color=PALETTE[0], left=0)
    for p in cont.patches:
        p.set_gid("series0")
    ax.set_xscale("log")
    edge = blended_transform_factory(ax.transAxes, ax.transData)
    if np.any(~ok):
        (z,) = ax.plot(
            np.zeros(int((~ok).sum())), pos[~ok], ls="None", marker=">", color=PALETTE[3],
            clip_on=False, transform=edge, zorder=5,
        )  # fmt: skip
        z.set_gid("series0")
    for p, g, v in zip(pos, gap, r, strict=True):
        text = f"{v:.6g}" if g > 0 else (f"{v:.6g} (bound reached)" if v == 1 else f"{v:.6g} > 1")
        if g > 0:
            ax.annotate(text, (g, p), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=6)  # fmt: skip
        else:
            ax.annotate(text, (0, p), xycoords=edge, xytext=(8, 0), textcoords="offset points",
                        va="center", fontsize=6, color=PALETTE[3])  # fmt: skip
    if np.any(ok):
        lo, hi = float(gap[ok].min()), float(gap[ok].max())
        ax.set_xlim(10 ** math.floor(math.log10(lo)), 10 ** (math.ceil(math.log10(hi)) + 0.6))
    ax.set_yticks(pos)
    ax.set_yticklabels([math_label(c) for c in cats])
    ax.invert_yaxis()
    ax.grid(True, axis="x", which="major", alpha=0.25, linewidth=0.5)
    return []


# ------------------------------------------------------------------------ heat maps
def draw_heatmap(mfig: Any, ax: Any, fig: Any, series: list[dict[str, Any]]) -> list[tuple]:
    """One row per series, one column per x: the colour is the value (log scale with
    ``logy``), every cell carries its value; zeros are white cells marked "0"."""
    from matplotlib.colors import LogNorm, Normalize

    data = fig.data
    cols: list[Any] = []
    for s in series:
        for v in s["x"]:
            if v not in cols:
                cols.append(v)
    mat = np.full((len(series), len(cols)), np.nan)
    for r, s in enumerate(series):
        for x, y in zip(s["x"], s["y"], strict=True):
            mat[r, cols.index(x)] = float(y)
    pos = mat[np.isfinite(mat) & (mat > 0)]
    logy = bool(data.get("logy")) and pos.size > 0
    norm = LogNorm(pos.min(), pos.max()) if logy else Normalize(np.nanmin(mat), np.nanmax(mat))
    shown = np.where(mat > 0, mat, np.nan) if logy else mat
    im = ax.imshow(shown, aspect="auto", cmap="viridis", norm=norm, interpolation="nearest")
    im.set_gid("heatmap")
    for r in range(mat.shape[0]):
        for c in range(mat.shape[1]):
            v = mat[r, c]
            if not np.isfinite(v):
                continue
            text = "0" if v == 0 else f"{v:.2g}"
            dark = v > 0 and norm(v) < 0.6
            ax.text(c, r, text, ha="center", va="center", fontsize=5,
                    color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([str(c) for c in cols])
    ax.set_yticks(range(len(series)))
    labels = []
    for s in series:
        nt = n_text(s)
        lab = str(s.get("label") or "")
        labels.append(math_label(f"{lab} ({nt})" if nt else lab))
    ax.set_yticklabels(labels)
    ax.tick_params(length=0)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    bar = mfig.colorbar(im, ax=ax, shrink=0.9, pad=0.02)
    bar.set_label(math_label(data.get("ylabel", "")))
    return []
