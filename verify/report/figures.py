"""Draw a check's :class:`FigureData` (see verify.registry) for a paper.

Kinds (see FigureData):

- ``"lines"``: ``{"series": [{"label", "x", "y", "style"?}], "xlabel", "ylabel", "logx"?,
  "logy"?}``; one line per series, matplotlib format string ``style`` (its colour is chosen
  here). On a log axis, values <= 0 (and NaN) are left out: the line has a gap there.
- ``"bars"``: ``{"series": [{"label", "x", "y", "yerr"?}], "xlabel", "ylabel", "logy"?}``;
  grouped bars, one group per distinct x (numbers or category names), error bars from ``yerr``
  (``[[below, above], ...]``). A series with one value at every x and no error bars is a
  reference level: it is drawn as a horizontal line, not as bars.

How a figure is drawn (the same rules for the report and the ``--plot`` of the commands):

- matplotlib's object API (``matplotlib.figure.Figure``): importing this module changes no
  global state (no backend switch, no pyplot), so it is safe in notebooks;
- confidence intervals as bands: two series labelled ``"<base> CI low"`` / ``"<base> CI high"``
  (or ``lower`` / ``upper``) become one shaded band in the colour of ``<base>`` (or of the
  series with the same x values when no series is called ``<base>``);
- one colour per setting: series whose labels start with the same settings (``"D=3 empirical"``,
  ``"D=3 fit"``: setting ``D=3``) share a colour and differ in line style;
- integer ticks on an axis whose values are all integers (N, layers, ...);
- labels in mathtext (``K_0`` -> :math:`K_0`, ``2^N``, ``beta``, ``>=``), falling back to the
  plain text when a label does not parse;
- PNG at 300 dpi, PDF and SVG as vector files (:func:`draw_figure_files`), and the data of
  every series in a CSV file beside them (``FILE.data.csv``, :func:`write_figure_csv`), so a
  figure can be redrawn or restyled without rerunning anything (report.json holds the same
  data).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
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

KINDS = ("lines", "bars")
DPI = 300
FORMATS = (".png", ".pdf", ".svg")
# paper style: small serif-free fonts that stay legible at one column width
STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.3,
    "lines.markersize": 3.5,
    "pdf.fonttype": 42,  # TrueType in PDFs (editable text, accepted by publishers)
    "svg.fonttype": "none",
}


# tab10 first, then the lighter tab20 shades: 20 distinguishable categorical colours
def figure_filename(name: str, taken: set[str], suffix: str = ".png") -> str:
    """A safe, unique ``<stem><suffix>`` for ``name`` (appends _2, _3, ... on collisions)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "figure"
    candidate, k = stem, 1
    while candidate in taken:
        k += 1
        candidate = f"{stem}_{k}"
    taken.add(candidate)
    return candidate + suffix


def _series(fig: Any) -> list[dict[str, Any]]:
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


# ------------------------------------------------------------------------ drawing
def render(fig: Any):  # -> matplotlib.figure.Figure
    """The matplotlib Figure of ``fig`` (object API; nothing global is touched)."""
    import matplotlib
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    series = _series(fig)
    data = fig.data
    with matplotlib.rc_context(STYLE):
        n_legend = len(series)
        wide = n_legend > 3 or fig.kind == "bars"  # room for a legend beside the axes
        mfig = Figure(figsize=(6.4 if wide else 4.6, 3.0), layout="constrained")
        ax = mfig.add_subplot()
        all_x: list[Any] = [v for s in series for v in s["x"]]
        if fig.kind == "lines":
            items = plan_lines(series)
            colours = _colours([it["group"] for it in items])
            per_group: dict[str, int] = {}
            entries: list[list[Any]] = []  # [handle, label, id of the series]
            merged: dict[int, tuple[Any, str]] = {}  # line series -> (its band, band name)
            for it in items:
                colour = colours[it["group"]]
                k = per_group.get(it["group"], 0)
                per_group[it["group"]] = k + 1
                if it["kind"] == "band":
                    lo, hi = it["series"]
                    x = np.asarray(lo["x"], dtype=float)
                    y0 = np.asarray(lo["y"], dtype=float)
                    y1 = np.asarray(hi["y"], dtype=float)
                    if data.get("logy"):
                        y0 = np.where(y0 > 0, y0, np.nan)
                        y1 = np.where(y1 > 0, y1, np.nan)
                    order = np.argsort(x, kind="stable")
                    band = ax.fill_between(
                        x[order], y0[order], y1[order], color=colour, alpha=0.18, linewidth=0
                    )
                    if it["owner"] is not None:
                        merged[it["owner"]] = (band, it["label"])
                    else:
                        entries.append([band, it["label"], None])
                    if it["edges"]:  # certified lower/upper ends: draw them too
                        for yy in (y0, y1):
                            ax.plot(x[order], yy[order], color=colour, linewidth=0.7)
                    continue
                s = it["series"][0]
                x = np.asarray(s["x"], dtype=float)
                y = np.asarray(s["y"], dtype=float)
                if data.get("logy"):
                    y = np.where(y > 0, y, np.nan)
                if data.get("logx"):
                    x = np.where(x > 0, x, np.nan)
                marker, ls = _split_style(s.get("style"))
                if marker is None and ls is None:
                    marker = MARKERS[(k if len(items) <= 10 else len(colours)) % len(MARKERS)]
                    ls = LINESTYLES[k % len(LINESTYLES)]
                    if len(items) > 10:  # many series: markers tell repeated shades apart
                        marker = MARKERS[list(colours).index(it["group"]) // 10 % len(MARKERS)]
                (line,) = ax.plot(x, y, color=colour, marker=marker or "None", linestyle=ls or "-")
                if s.get("label"):
                    entries.append([line, str(s["label"]), id(s)])
            legend = []
            for handle, label, sid in entries:
                if sid in merged:
                    band, name = merged[sid]
                    handle, label = (band, handle), f"{label} (band: {name})"
                legend.append((handle, math_label(label)))
            if data.get("logx"):
                ax.set_xscale("log")
                _short_log_labels(ax.xaxis, all_x)
            elif _is_integer_axis(all_x):
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            cats: list[Any] = []
            for s in series:
                for v in s["x"]:
                    if v not in cats:
                        cats.append(v)
            levels = [
                s
                for k, s in enumerate(series)
                if k > 0 and s.get("yerr") is None and len(set(map(float, s["y"]))) == 1
            ]
            bars = [s for s in series if not any(s is lv for lv in levels)]
            width = 0.8 / max(len(bars), 1)
            for j, s in enumerate(bars):
                pos = np.array([cats.index(v) for v in s["x"]], dtype=float)
                yerr = s.get("yerr")
                ax.bar(
                    pos - 0.4 + width * (j + 0.5),
                    np.asarray(s["y"], dtype=float),
                    width=width,
                    yerr=None if yerr is None else np.asarray(yerr, dtype=float).T,
                    capsize=2.5,
                    color=PALETTE[j % len(PALETTE)],
                    error_kw={"elinewidth": 0.8, "capthick": 0.8},
                    label=math_label(s.get("label")) or None,
                )
            for j, s in enumerate(levels):
                ax.axhline(
                    float(s["y"][0]),
                    color="black",
                    linestyle=LINESTYLES[(j + 1) % 4],
                    linewidth=1.0,
                    label=math_label(s.get("label")) or None,
                )
            ax.set_xticks(range(len(cats)))
            names = [str(c) for c in cats]
            longest = max(map(len, names))
            tilt = longest * len(cats) > 40 or (len(cats) > 6 and longest > 3)
            ax.set_xticklabels(names, rotation=30 if tilt else 0, ha="right" if tilt else "center")
        if data.get("logy"):
            ax.set_yscale("log")
            _short_log_labels(ax.yaxis, [v for s in series for v in s["y"]])
        elif fig.kind == "lines" and _is_integer_axis([v for s in series for v in s["y"]]):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(math_label(data.get("xlabel", "")))
        ax.set_ylabel(math_label(data.get("ylabel", "")))
        ax.set_title(math_label(getattr(fig, "title", "")))
        ax.grid(True, alpha=0.25, which="major", linewidth=0.5)
        if fig.kind != "lines":
            legend = list(zip(*ax.get_legend_handles_labels(), strict=True))
        if legend:
            from matplotlib.legend_handler import HandlerTuple

            handles, texts = zip(*legend, strict=True)
            # beside the axes when long, when bands make "best" crowded, or over bars (which
            # fill the axes from the bottom up)
            outside = (
                len(legend) > 6 or any(type(h) is tuple for h in handles) or fig.kind == "bars"
            )
            ax.legend(
                handles,
                texts,
                handler_map={tuple: HandlerTuple(ndivide=1)},
                frameon=False,
                **({"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if outside else {}),
            )
    return mfig


def _short_log_labels(axis: Any, values: list[Any]) -> None:
    """A log axis spanning less than two decades gets plain tick labels (2, 3, 5 instead of
    2 x 10^0, 3 x 10^0, ...), major and minor alike."""
    import math

    from matplotlib.ticker import FuncFormatter

    pos = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if f > 0 and math.isfinite(f):
            pos.append(f)
    if pos and math.log10(max(pos) / min(pos)) < 2:
        plain = FuncFormatter(lambda v, _: f"{v:g}")

        def sparse(v: float, _: Any) -> str:  # minor ticks: label only 2x and 5x a decade
            mantissa = round(v / 10 ** math.floor(math.log10(v)), 6) if v > 0 else 0
            return f"{v:g}" if mantissa in (2.0, 5.0) else ""

        axis.set_major_formatter(plain)
        axis.set_minor_formatter(FuncFormatter(sparse))


def draw_figure(fig: Any, path: str | Path, *, also: Sequence[str] = ()) -> Path:
    """Draw ``fig`` into ``path`` (format from its suffix: .png at 300 dpi, .pdf or .svg), and
    with the same drawing into ``path`` with each suffix of ``also``; raise ValidationError on
    malformed data or an unknown suffix. Returns ``path``."""
    import matplotlib

    path = Path(path)
    targets = [path] + [path.with_suffix(x) for x in also if x.lower() != path.suffix.lower()]
    for target in targets:
        if target.suffix.lower() not in FORMATS:
            raise ValidationError(
                "figure path", "a file ending in " + ", ".join(FORMATS), str(target)
            )
    mfig = render(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(STYLE):
        for target in targets:
            mfig.savefig(target, dpi=DPI, metadata=_metadata(target))
    return path


def _metadata(path: Path) -> dict[str, Any] | None:
    # reproducible files: no creation date in PDFs and SVGs
    if path.suffix.lower() == ".pdf":
        return {"CreationDate": None}
    if path.suffix.lower() == ".svg":
        return {"Date": None}
    return None


def draw_figure_files(
    fig: Any, path: str | Path, *, also: Sequence[str] = (), data: bool = True
) -> list[Path]:
    """Draw ``fig`` into ``path`` and, for each suffix in ``also`` (e.g. ".pdf"), beside it;
    with ``data`` write the series to ``<stem>.data.csv`` too (verify.outputs.figure_paths: a
    name no other output uses). The paths written, ``path`` first."""
    from verify.outputs import figure_paths

    written = figure_paths(path, also=also, data=data)
    draw_figure(fig, written[0], also=also)
    if data:
        write_figure_csv(fig, written[-1])
    return written


def figure_rows(fig: Any) -> list[dict[str, Any]]:
    """The data of every series, one row per point: series, label, x, y, y_err_below,
    y_err_above (the same numbers the figure shows)."""
    rows: list[dict[str, Any]] = []
    for i, s in enumerate(_series(fig)):
        yerr = s.get("yerr")
        for k, (x, y) in enumerate(zip(s["x"], s["y"], strict=True)):
            below, above = yerr[k] if yerr is not None else (None, None)
            rows.append(
                {
                    "series": i,
                    "label": s.get("label"),
                    "x": x,
                    "y": y,
                    "y_err_below": below,
                    "y_err_above": above,
                }
            )
    return rows


def write_figure_csv(fig: Any, path: str | Path) -> Path:
    """Write :func:`figure_rows` of ``fig`` to ``path`` (CSV with a header line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(
            fh, fieldnames=["series", "label", "x", "y", "y_err_below", "y_err_above"]
        )
        w.writeheader()
        w.writerows(figure_rows(fig))
    return path


def redraw_report_figures(report_json: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Redraw every figure of a report.json (its ``data`` entries) into ``out_dir`` (default:
    the report's figures folder), e.g. after restyling: nothing is rerun."""
    import json
    from types import SimpleNamespace

    src = Path(report_json)
    doc = json.loads(src.read_text(encoding="utf-8"))
    out = Path(out_dir) if out_dir is not None else src.parent / "figures"
    entries = [f for st in doc["statements"] for c in st["checks"] for f in c["figures"]]
    entries += (doc.get("overview") or {}).get("figures", [])
    written: list[Path] = []
    for f in entries:
        if f.get("data") is None or not f.get("file"):
            continue
        fig = SimpleNamespace(name=f["name"], title=f["title"], kind=f["kind"], data=f["data"])
        written += draw_figure_files(fig, out / Path(f["file"]).name, also=(".pdf",), data=False)
    return written
