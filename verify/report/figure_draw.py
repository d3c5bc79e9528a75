"""Drawing one figure's axes: lines with intervals, bars, ratios to a bound, heat maps.

Used by :func:`verify.report.figures.render`; the rules it implements are listed in the
docstring of :mod:`verify.report.figures`. Every drawn series gets the gid ``"series<i>"``
(``i``: its index in ``data["series"]``) so that :mod:`verify.report.figure_audit` can compare
what was drawn.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from verify.report.figure_style import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    _colours,
    _is_integer_axis,
    _split_style,
    math_label,
    plan_lines,
)

DODGE_PT = 3.5  # horizontal offset between series drawn at the same x (points)
_PROBABILITY = re.compile(r"^\s*P\[|probability|fraction|\brate\b", re.IGNORECASE)


def is_probability(data: dict[str, Any]) -> bool:
    """Whether the y axis is a probability (drawn on [0, 1]): ``data["probability"]``, else a
    y label that reads as one (``P[...]``, "probability", "fraction", "rate")."""
    flag = data.get("probability")
    if flag is not None:
        return bool(flag)
    return bool(_PROBABILITY.search(str(data.get("ylabel", ""))))


def interval(s: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The interval ends (lower, upper) of a series, from ``ylo``/``yhi`` or from bar-style
    ``yerr`` ([[below, above], ...], or one symmetric half-width per point); None when it has
    none."""
    y = np.asarray(s["y"], dtype=float)
    if s.get("ylo") is not None and s.get("yhi") is not None:
        return np.asarray(s["ylo"], dtype=float), np.asarray(s["yhi"], dtype=float)
    if s.get("yerr") is not None:
        e = np.asarray(s["yerr"], dtype=float)
        if e.ndim == 1:  # symmetric: one half-width per point
            e = np.column_stack([e, e])
        e = e.reshape(len(y), 2)
        return y - e[:, 0], y + e[:, 1]
    return None


def n_text(s: dict[str, Any]) -> str | None:
    """ "n=30" or "n=30-60" from a series' ``n`` (one count or one per point)."""
    n = s.get("n")
    if n is None:
        return None
    vals = [int(v) for v in (n if isinstance(n, (list, tuple)) else [n])]
    lo, hi = min(vals), max(vals)
    return f"n={lo}" if lo == hi else f"n={lo}–{hi}"


def _log_floor(series: list[dict[str, Any]]) -> float:
    """A bottom edge for a log axis: half the smallest positive value drawn (values and
    interval ends)."""
    vals = [float(v) for s in series for v in s["y"]]
    for s in series:
        iv = interval(s)
        if iv is not None:
            vals += [float(v) for v in np.concatenate(iv)]
    return min((v for v in vals if v > 0), default=1.0) / 2


def shared_n(series: list[dict[str, Any]]) -> str | None:
    """ "n=30 each" when several labelled series all carry the same ``n`` (said once, in the
    legend title), else None."""
    with_n = [s for s in series if s.get("label") and s.get("n") is not None]
    counts = {n_text(s) for s in with_n}
    if len(counts) == 1 and len(with_n) > 1:
        return f"{counts.pop()} each"
    return None


# ------------------------------------------------------------------------ lines
def _key(s: dict[str, Any]) -> tuple:
    iv = interval(s)
    return (
        tuple(map(float, s["x"])),
        tuple(map(float, s["y"])),
        None if iv is None else (tuple(iv[0]), tuple(iv[1])),
        n_text(s),
    )


def _merge_identical(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Line items with the same drawn data become one, labelled with every name (so that no
    series hides under an identical one)."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple, dict[str, Any]] = {}
    for it in items:
        if it["kind"] != "line":
            out.append(it)
            continue
        key = _key(it["series"][0])
        if key in seen:
            first = seen[key]
            a, b = first["label"], it["label"]
            if b.startswith(a) and len(b) > len(a):
                first["label"] = f"{a} (= {b[len(a) :].lstrip(' ,;')})"
            else:
                first["label"] = f"{a} = {b}"
            first.setdefault("also", []).append(it["index"])
            continue
        seen[key] = it
        out.append(it)
    return out


def _offset(mfig: Any, ax: Any, points: float, *, yaxes: bool = False) -> Any:
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    base = blended_transform_factory(ax.transData, ax.transAxes) if yaxes else ax.transData
    if not points:
        return base
    return base + ScaledTranslation(points / 72.0, 0.0, mfig.dpi_scale_trans)


def draw_lines(mfig: Any, ax: Any, fig: Any, series: list[dict[str, Any]]) -> list[tuple]:
    """Draw the line series; return the legend entries ``(handle, label)``."""
    data = fig.data
    logx, logy = bool(data.get("logx")), bool(data.get("logy"))
    index = {id(s): i for i, s in enumerate(series)}
    items = plan_lines(series)
    for it in items:
        it["index"] = index[id(it["series"][0])]
    items = _merge_identical(items)
    colours = _colours([it["group"] for it in items])
    lines = [it for it in items if it["kind"] == "line"]
    # series with intervals at shared x values are spread sideways (grouped error bars)
    estimates = [it for it in lines if interval(it["series"][0]) is not None]
    shift: dict[int, float] = {}
    if len(estimates) > 1:
        m = len(estimates)
        for k, it in enumerate(estimates):
            shift[it["index"]] = (k - (m - 1) / 2) * DODGE_PT
    entries: list[list[Any]] = []
    merged: dict[int, tuple[Any, str]] = {}
    per_group: dict[str, int] = {}
    zero_drawn = False
    notes: list[tuple[float, float, str]] = []  # values written at the last point
    floors: list[float] = []  # bottom edges of log axes under bands that start at 0
    zero_shifts: list[int] = []  # series whose zeros are already on the edge
    for it in items:
        colour = colours[it["group"]]
        k = per_group.get(it["group"], 0)
        per_group[it["group"]] = k + 1
        if it["kind"] == "band":
            lo, hi = it["series"]
            x = np.asarray(lo["x"], dtype=float)
            y0, y1 = np.asarray(lo["y"], dtype=float), np.asarray(hi["y"], dtype=float)
            low_zero = (y0 <= 0) & (y1 > 0) if logy else np.zeros(y0.shape, dtype=bool)
            if logy:  # a band from 0 reaches down to the axis' bottom edge
                floor = _log_floor(series)
                y0 = np.where(low_zero, floor, np.where(y0 > 0, y0, np.nan))
                y1 = np.where(y1 > 0, y1, np.nan)
                if np.any(low_zero):
                    floors.append(floor)
            order = np.argsort(x, kind="stable")
            band = ax.fill_between(x[order], y0[order], y1[order], color=colour, alpha=0.18, lw=0)
            band.set_gid(f"band{it['index']}")
            if it["owner"] is not None:
                merged[it["owner"]] = (band, it["label"])
            else:
                entries.append([band, it["label"], None])
            if it["edges"]:  # certified lower/upper ends: draw them too
                for yy, s in ((y0, lo), (y1, hi)):
                    (edge,) = ax.plot(x[order], yy[order], color=colour, linewidth=0.7)
                    edge.set_gid(f"series{index[id(s)]}")
            if np.any(low_zero):
                (z,) = ax.plot(
                    x[low_zero], np.zeros(int(low_zero.sum())), ls="None", marker="o", mfc="white",
                    mec=colour, clip_on=False, zorder=5,
                    transform=_offset(mfig, ax, len(zero_shifts) * DODGE_PT, yaxes=True),
                )  # fmt: skip
                z.set_gid(f"series{index[id(lo)]}")
                zero_shifts.append(it["index"])
                zero_drawn = True
            continue
        s = it["series"][0]
        i = it["index"]
        x = np.asarray(s["x"], dtype=float)
        y = np.asarray(s["y"], dtype=float)
        if logx:
            x = np.where(x > 0, x, np.nan)
        zero = (y <= 0) if logy else np.zeros(y.shape, dtype=bool)
        marker, ls = _split_style(s.get("style"))
        if marker is None and ls is None:
            marker = MARKERS[(k if len(items) <= 10 else len(colours)) % len(MARKERS)]
            ls = LINESTYLES[k % len(LINESTYLES)]
            if len(items) > 10:  # many series: markers tell repeated shades apart
                marker = MARKERS[list(colours).index(it["group"]) // 10 % len(MARKERS)]
            if len(x) <= 2:  # two points are no trend: markers only
                ls = "None"
            elif len(x) > 40 and interval(s) is None:  # a dense curve: markers would blot it
                marker = "None"
        iv = interval(s)
        tr = _offset(mfig, ax, shift.get(i, 0.0))
        yd = np.where(zero, np.nan, y)
        if iv is not None:
            lo, hi = iv
            if logy and np.any(lo <= 0):  # an interval from 0 reaches the bottom edge
                floors.append(_log_floor(series))
                lo = np.where(lo > 0, lo, floors[-1])
            err = np.vstack([np.clip(yd - lo, 0, None), np.clip(hi - yd, 0, None)])
            err = np.where(np.isfinite(err), err, 0.0)
            thin = ls if len(x) >= 3 and ls not in (None, "None") else "None"
            cont = ax.errorbar(
                x, yd, yerr=err, color=colour, marker=marker or "o", linestyle=thin,
                linewidth=0.8, capsize=2.0, elinewidth=0.8,
            )  # fmt: skip
            line = cont.lines[0]
            for art in [line, *cont.lines[1], *cont.lines[2]]:
                art.set_gid(f"series{i}")
                art.set_transform(tr)  # after the data limits were taken
            handle: Any = cont
            if np.any(zero & (hi > 0)):  # a value 0 on a log axis: its interval from the edge
                bars = ax.vlines(x[zero], floors[-1], hi[zero], color=colour, linewidth=0.8)
                bars.set_gid(f"series{i}")
                bars.set_transform(tr)
        else:
            (line,) = ax.plot(x, yd, color=colour, marker=marker or "None", linestyle=ls or "-")
            line.set_gid(f"series{i}")
            line.set_transform(tr)
            handle = line
        if data.get("annotate") == "last" and np.isfinite(yd[-1]):  # e.g. a ratio near 1
            notes.append((x[-1], yd[-1], colour))
        if np.any(zero):  # zeros on a log axis: open markers on the bottom edge
            (z,) = ax.plot(
                x[zero], np.zeros(int(zero.sum())), linestyle="None",
                marker=marker if marker not in (None, "None") else "o",
                markerfacecolor="white", markeredgecolor=colour, clip_on=False,
                transform=_offset(
                    mfig, ax, shift.get(i, 0.0) + len(zero_shifts) * DODGE_PT, yaxes=True
                ),
                zorder=5,
            )  # fmt: skip
            z.set_gid(f"series{i}")
            zero_shifts.append(i)  # the next series' zeros sit one step to the right
            zero_drawn = True
        if it["label"]:
            entries.append([handle, it["label"], id(s), s])
    if floors:
        ax.set_ylim(bottom=min(floors))
    _annotate_last(mfig, ax, notes)
    legend: list[tuple] = []
    shared = shared_n(series) is not None
    for entry in entries:
        handle, label, sid = entry[0], entry[1], entry[2]
        if sid in merged:
            band, name = merged[sid]
            handle, label = (band, handle), f"{label} (shaded: {name})"
        if len(entry) > 3 and n_text(entry[3]) and not shared:
            label = f"{label} ({n_text(entry[3])})"
        legend.append((handle, label))
    if zero_drawn:
        from matplotlib.lines import Line2D

        legend.append(
            (
                Line2D([], [], ls="None", marker="o", mfc="white", mec="0.3"),
                "value 0 (open marker on the bottom edge)",
            )
        )
    if not logx and _is_integer_axis([v for s in series for v in s["x"]]):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return legend


def _annotate_last(mfig: Any, ax: Any, notes: list[tuple[float, float, str]]) -> None:
    """Write each value beside its point, moving a label down while it would overlap one
    already written."""
    ax.autoscale_view()
    placed: list[float] = []
    step = 7.0 * mfig.dpi / 72.0  # one text line (pixels)
    for x, y, colour in sorted(notes, key=lambda n: -n[1]):
        py = float(ax.transData.transform((x, y))[1])
        dy = 0.0
        while any(abs(py - dy - q) < step for q in placed):
            dy += step
        placed.append(py - dy)
        text = f"{y:.8g} (1 - {1 - y:.2g})" if 0.99 < y < 1 else f"{y:.5g}"  # near 1: the gap
        ax.annotate(text, (x, y), xytext=(5, -dy * 72.0 / mfig.dpi),
                    textcoords="offset points", va="center", fontsize=6, color=colour)  # fmt: skip


# ------------------------------------------------------------------------ bars
def wrap_title(text: str, width: int) -> str:
    """``text`` in mathtext, broken at spaces into lines of about ``width`` characters (a
    formula is never split: each line is converted on its own)."""
    import textwrap

    lines = textwrap.wrap(str(text), width=width, break_long_words=False) or [""]
    return "\n".join(math_label(line) for line in lines)


def wrap_category(name: str, width: int = 14) -> str:
    """A long category name broken at ", " (or spaces) into lines of about ``width``."""
    if len(name) <= width:
        return name
    parts = re.split(r"(?<=,)\s+|\s+", name)
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + 1 + len(p) > width:
            lines.append(cur)
            cur = p
        else:
            cur = f"{cur} {p}".strip()
    lines.append(cur)
    return "\n".join(lines)


def draw_bars(mfig: Any, ax: Any, fig: Any, series: list[dict[str, Any]]) -> list[tuple]:
    """Grouped bars (one group per category) with interval whiskers; a series with one value
    at every x and no interval is a reference level (a horizontal line)."""
    from matplotlib.transforms import blended_transform_factory

    data = fig.data
    logy = bool(data.get("logy"))
    cats: list[Any] = []
    for s in series:
        for v in s["x"]:
            if v not in cats:
                cats.append(v)
    levels = [
        s
        for k, s in enumerate(series)
        if k > 0 and interval(s) is None and len(set(map(float, s["y"]))) == 1
    ]
    bars = [s for s in series if not any(s is lv for lv in levels)]
    width = 0.8 / max(len(bars), 1)
    edge = blended_transform_factory(ax.transData, ax.transAxes)
    legend: list[tuple] = []
    zero_drawn = False
    for j, s in enumerate(bars):
        i = next(k for k, t in enumerate(series) if t is s)
        pos = np.array([cats.index(v) for v in s["x"]], dtype=float) - 0.4 + width * (j + 0.5)
        y = np.asarray(s["y"], dtype=float)
        zero = (y <= 0) if logy else np.zeros(y.shape, dtype=bool)
        iv = interval(s)
        err = None
        if iv is not None:
            lo = np.where(iv[0] > 0, iv[0], np.nan) if logy else iv[0]
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(iv[1] - y, 0, None)])
            err = np.where(np.isfinite(err), err, 0.0)
        colour = PALETTE[j % len(PALETTE)]
        cont = ax.bar(
            pos, np.where(zero, np.nan, y), width=width, yerr=err, capsize=2.5, color=colour,
            error_kw={"elinewidth": 0.8, "capthick": 0.8},
        )  # fmt: skip
        for p in cont.patches:
            p.set_gid(f"series{i}")
        if np.any(zero):
            (z,) = ax.plot(
                pos[zero], np.zeros(int(zero.sum())), ls="None", marker="o", mfc="white",
                mec=colour, clip_on=False, transform=edge, zorder=5,
            )  # fmt: skip
            z.set_gid(f"series{i}")
            zero_drawn = True
        label = math_label(s.get("label"))
        if label:
            nt = n_text(s)
            legend.append((cont, f"{label} ({nt})" if nt else label))
    for j, s in enumerate(levels):
        i = next(k for k, t in enumerate(series) if t is s)
        ln = ax.axhline(
            float(s["y"][0]), color="black", linestyle=LINESTYLES[(j + 1) % 4], linewidth=1.0
        )
        ln.set_gid(f"series{i}")
        if s.get("label"):
            legend.append((ln, math_label(s.get("label"))))
    if zero_drawn:
        from matplotlib.lines import Line2D

        legend.append(
            (
                Line2D([], [], ls="None", marker="o", mfc="white", mec="0.3"),
                "value 0 (open marker on the bottom edge)",
            )
        )
    ax.set_xticks(range(len(cats)))
    names = [str(c) for c in cats]
    wrapped = ["\n".join(map(math_label, wrap_category(n).split("\n"))) for n in names]
    ax.set_xticklabels(wrapped, fontsize=6 if len(cats) > 6 else None)
    return legend
