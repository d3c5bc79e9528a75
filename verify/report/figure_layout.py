"""Where a figure's series and legend go: series that would hide each other are moved
sideways (measured in pixels at the drawn resolution, the same measure the audit uses), and
compact legends (none for one series, a shared setting as the title).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from verify.report.figure_draw import DODGE_PT, _offset
from verify.report.figure_style import math_label


def marker_px(mfig: Any) -> float:
    """The largest drawn marker's diameter in pixels (what "covered at the plotted
    resolution" means)."""
    sizes = [ln.get_markersize() for ax in mfig.axes for ln in ax.lines if ln.get_marker()]
    return float(max(sizes, default=3.5)) * mfig.dpi / 72.0


def drawn_points(ax: Any, gid: str) -> np.ndarray:
    """Display coordinates (pixels) of what is drawn for ``gid`` (lines only): every finite
    point, and along a drawn line segment one point every few pixels."""
    pts = []
    for line in ax.lines:
        if line.get_gid() != gid:
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        px = line.get_transform().transform(xy)
        ok = np.all(np.isfinite(px), axis=1)
        if line.get_linestyle() not in ("None", "", " "):
            for a, b, keep in zip(px[:-1], px[1:], ok[:-1] & ok[1:], strict=True):
                if keep:
                    k = max(2, int(np.hypot(*(b - a)) // 2))
                    pts.append(a + np.linspace(0, 1, k)[:, None] * (b - a))
        if np.any(ok):
            pts.append(px[ok])
    return np.vstack(pts) if pts else np.empty((0, 2))


def covered(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """Whether every point of ``a`` lies within ``tol`` pixels of some point of ``b``."""
    if not len(a) or not len(b):
        return False
    from scipy.spatial import cKDTree

    dist, _ = cKDTree(b).query(a, distance_upper_bound=tol * (1 + 1e-9))
    return bool(np.all(np.isfinite(dist)))


COVER_TOL = 0.5  # covered: every point within this many marker widths of another's points


def dodge_covered(mfig: Any, ax: Any, n_series: int) -> None:
    """After the layout is fixed: a series whose every drawn point sits under another series'
    points is shifted sideways by DODGE_PT (one step more per series already shifted). Lays
    ``mfig`` out first (its layout engine only: where a draw would place the axes)."""
    engine = mfig.get_layout_engine()
    if engine is not None:
        engine.execute(mfig)
    tol = 1.5 * COVER_TOL * marker_px(mfig)  # stricter than the audit: a margin for layout
    pts = {i: drawn_points(ax, f"series{i}") for i in range(n_series)}
    pts = {i: p for i, p in pts.items() if len(p)}

    def hidden(i: int, p: np.ndarray) -> bool:
        return any(covered(p, pts[j], tol) for j in pts if j != i)

    for i in list(pts):
        if not hidden(i, pts[i]):
            continue
        movable = [ln for ln in ax.lines if ln.get_gid() == f"series{i}"]
        if not all(ln.get_transform() == ax.transData for ln in movable):
            continue  # already shifted (grouped error bars) or on an axis edge
        step = DODGE_PT * mfig.dpi / 72.0
        for k in (1, -1, 2, -2, 3, -3):  # the nearest sideways place where it shows
            if not hidden(i, pts[i] + [k * step, 0.0]):
                break
        tr = _offset(mfig, ax, k * DODGE_PT)
        for ln in movable:
            ln.set_transform(tr)
        pts[i] = drawn_points(ax, f"series{i}")


# ------------------------------------------------------------------------ legends
_ITEM = re.compile(r"[A-Za-z_]\w*\s*=\s*[^\s,:]+")


def common_setting(labels: list[str]) -> str | None:
    """The longest run of leading "key=value" items shared by every label and followed by
    more text in each ("D=4" of "D=4, rho=0.01" and "D=4, rho=0.05"), else None."""
    runs = []
    for lab in labels:
        items, pos = [], 0
        while m := _ITEM.match(lab, pos):
            items.append(m.group(0))
            pos = m.end()
            if not lab.startswith(", ", pos):
                break
            pos += 2
        runs.append(items)
    common = []
    for parts in zip(*runs, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    while common:
        prefix = ", ".join(common)
        if all(lab.startswith(prefix + ", ") for lab in labels):
            return prefix
        common.pop()
    return None


def compact_legend(
    mfig: Any, ax: Any, legend: list[tuple], *, note: str | None = None, inside: bool = True
) -> None:
    """No legend for one entry (its label joins the title); a common leading setting
    ("D=4, ...") becomes the legend title; short legends inside the axes (unless ``inside`` is
    False, e.g. over bars), longer ones below them in columns."""
    from matplotlib.legend_handler import HandlerTuple

    if not legend:
        return
    labels = [str(lab) for _, lab in legend]
    if len(legend) == 1:  # the one label (and the interval's name) joins the title
        title = ax.get_title()
        extra = math_label(labels[0] + (f" ({note})" if note else ""))
        if extra and extra not in title:
            ax.set_title(f"{title}\n{extra}")
        return
    title = note
    prefix = common_setting(labels)
    if prefix:
        labels = [lab[len(prefix) + 2 :] for lab in labels]
        title = f"{prefix}; {note}" if note else prefix
    texts = [math_label(lab) for lab in labels]
    handles = [h for h, _ in legend]
    kw: dict[str, Any] = {
        "handler_map": {tuple: HandlerTuple(ndivide=1)},
        "frameon": False,
        "title": math_label(title) if title else None,
        "title_fontsize": 7,
    }
    longest = max(len(t) for t in labels)
    if inside and len(legend) <= 4 and longest <= 40:
        ax.legend(handles, texts, **kw)
        return
    ncols = 1 if longest > 60 else (2 if longest > 28 else 3)
    mfig.legend(handles, texts, loc="outside lower center", ncols=ncols, **kw)
