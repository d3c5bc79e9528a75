"""What a referee checks on a drawn figure, as code: :func:`audit_figure` draws a figure and
lists its problems (none for a figure that meets the rules of :mod:`verify.report.figures`).

- every labelled series is visible: none has all its drawn points within a marker's width of
  one other series' points (at the resolution the PNG is written at);
- the axis limits contain every drawn value (zeros on a log axis sit on the bottom edge);
- a probability axis stays inside [0, 1];
- every text is mathtext where it holds a formula (no raw ``x^2``, ``{...}``, ``K_0``);
- a legend has at least two entries;
- a series with an interval has its sample size ``n`` and ``ylo <= y <= yhi``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

RAW_TEX = re.compile(r"[\^{}\\]|\|\||(?<![A-Za-z0-9])[A-Za-z]{1,2}_[A-Za-z0-9{]")


def raw_tex(text: str) -> str | None:
    """The first piece of ``text`` outside ``$...$`` that reads as unrendered TeX, or None."""
    outside = "".join(part for k, part in enumerate(str(text).split("$")) if k % 2 == 0)
    m = RAW_TEX.search(outside)
    return None if m is None else outside[max(0, m.start() - 8) : m.end() + 8]


def _texts(mfig: Any, ax: Any) -> list[str]:
    out = [t.get_text() for t in mfig.texts]
    if getattr(mfig, "_suptitle", None) is not None:
        out.append(mfig._suptitle.get_text())
    out += [ax.get_title(), ax.xaxis.label.get_text(), ax.yaxis.label.get_text()]
    out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    out += [t.get_text() for t in ax.texts]
    for leg in [ax.get_legend(), *mfig.legends]:
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()] + [leg.get_title().get_text()]
    return [t for t in out if t]


def audit_figure(fig: Any) -> list[str]:
    """Draw ``fig`` (a FigureData or anything with name, title, kind, data) and return its
    problems as sentences; an empty list when it meets every rule above."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from verify.report.figure_draw import interval, is_probability
    from verify.report.figure_layout import COVER_TOL, covered, drawn_points, marker_px
    from verify.report.figures import DPI, _series, render

    problems: list[str] = []
    series = _series(fig)
    for s in series:
        iv = interval(s)
        if iv is None:
            continue
        y = np.asarray(s["y"], dtype=float)
        if s.get("n") is None:
            problems.append(f"series {s.get('label')!r} has an interval but no n")
        known = np.isfinite(y) & np.isfinite(iv[0]) & np.isfinite(iv[1])  # nan: no interval
        bad = ~((iv[0] <= y + 1e-12) & (y <= iv[1] + 1e-12)) & known
        if np.any(bad):
            problems.append(
                f"series {s.get('label')!r}: y outside [ylo, yhi] at {np.flatnonzero(bad)}"
            )
    mfig = render(fig, dpi=DPI)  # as draw_figure draws it
    FigureCanvasAgg(mfig).draw()
    ax = mfig.axes[0]
    for text in _texts(mfig, ax):
        piece = raw_tex(text)
        if piece is not None:
            problems.append(f"raw TeX in {text!r} ({piece!r})")
    legends = [leg for leg in [ax.get_legend(), *mfig.legends] if leg is not None]
    for leg in legends:
        if len(leg.get_texts()) < 2:
            problems.append("a legend with a single entry")
    if fig.kind not in ("lines", "bars"):
        return problems
    x0, x1 = sorted(ax.get_xlim())
    y0, y1 = sorted(ax.get_ylim())
    if is_probability(fig.data) and (y0 < -1e-9 or y1 > 1 + 1e-9):
        problems.append(f"probability axis runs over [{y0:.3g}, {y1:.3g}], not inside [0, 1]")
    tol = COVER_TOL * marker_px(mfig)
    pts = {}
    for i, s in enumerate(series):
        gid = f"series{i}"
        pts[i] = drawn_points(ax, gid)
        for line in ax.lines:
            if line.get_gid() != gid or not line.get_transform().contains_branch(ax.transData):
                continue
            xy = np.asarray(line.get_xydata(), dtype=float)
            xy = xy[np.all(np.isfinite(xy), axis=1)]
            out = (xy[:, 0] < x0 * (1 - 1e-9)) | (xy[:, 0] > x1 * (1 + 1e-9))
            out |= (xy[:, 1] < y0 - 1e-9 * abs(y0)) | (xy[:, 1] > y1 + 1e-9 * abs(y1))
            if np.any(out):
                problems.append(
                    f"series {s.get('label')!r}: {int(out.sum())} points outside the axes"
                )
        y = np.asarray(s["y"], dtype=float)
        if fig.data.get("logy") and np.any(y <= 0) and fig.kind == "lines":
            bottom = ax.transAxes.transform((0, 0))[1]
            at_edge = np.count_nonzero(np.abs(pts[i][:, 1] - bottom) < 1.0) if len(pts[i]) else 0
            if at_edge < np.count_nonzero(y <= 0):
                problems.append(f"series {s.get('label')!r}: zeros on the log axis not drawn")
    if fig.kind == "lines":
        labelled = [i for i, s in enumerate(series) if s.get("label") and len(pts[i])]
        for i in labelled:
            for j in labelled:
                if i != j and covered(pts[i], pts[j], tol) and _key(series[i]) != _key(series[j]):
                    problems.append(
                        f"series {series[i].get('label')!r} is hidden under"
                        f" {series[j].get('label')!r}"
                    )
                    break
    return problems


def _key(s: dict[str, Any]) -> tuple:
    """Identical series are drawn once with both names (not hidden): they compare equal."""
    from verify.report.figure_draw import _key as key

    return key(s)
