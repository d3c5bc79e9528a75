"""Draw a check's :class:`FigureData` (see verify.registry) for a paper.

Kinds (see FigureData):

- ``"lines"``: ``{"series": [{"label", "x", "y", "style"?, "ylo"?, "yhi"?, "n"?}], "xlabel",
  "ylabel", "logx"?, "logy"?, "probability"?, "interval"?, "annotate"?}``; one line per
  series, matplotlib format string ``style`` (its colour is chosen here).
- ``"bars"``: ``{"series": [{"label", "x", "y", "yerr"? or "ylo"/"yhi", "n"?}], ...}``;
  grouped bars, one group per distinct x (numbers or category names), whiskers from the
  interval. A series with one value at every x and no interval is a reference level: it is
  drawn as a horizontal line, not as bars.
- ``"ratios"``: one series of ratios measured/bound per category that sit near 1: horizontal
  bars of 1 - ratio on a log axis, each annotated with the ratio (a ratio >= 1 is a marker on
  the left edge).
- ``"heatmap"``: one row per series, one column per x, the value as colour (log with
  ``logy``) and written in every cell; zeros are white cells marked 0.

How a figure is drawn (the same rules for the report, the gallery docs/figures.md and the
``--plot`` of the commands; :func:`verify.report.figure_audit.audit_figure` checks them):

- an estimated quantity carries its interval (``ylo``/``yhi``: error bars; or two series
  labelled ``"<base> CI low"``/``"<base> CI high"``, ``lower``/``upper``: a shaded band) and
  its sample size ``n``; ``data["interval"]`` names the interval; both go into the legend
  title ("95% Clopper-Pearson, n=30 each") or beside the label;
- no series hides another: identical series are drawn once with every name ("a = b"), series
  with intervals at shared x are spread sideways (grouped error bars), and a series whose
  every drawn point lies within half a marker of another's is moved a few points sideways;
- a value 0 on a log axis is an open marker on the bottom edge (a band from 0 reaches the
  edge), and the legend says so;
- a probability axis (``data["probability"]``, or a y label "P[...]", "probability",
  "fraction", "rate") stays inside [0, 1]; a value outside [0, 1] there is an error;
- two points are no trend: a series of one or two points is drawn without a line;
- ``data["annotate"] == "last"`` writes each series' last value beside it (ratios near 1);
- one colour per setting: series whose labels start with the same settings (``"D=3
  empirical"``, ``"D=3 fit"``) share a colour and differ in line style;
- labels in mathtext (``K_0``, ``2^N``, ``e^{2R}``, ``||W_2||``, ``sqrt(D - 1)``, ``beta``,
  ``>=``), falling back to the plain text when a label does not parse; long titles wrap;
- compact legends: none for one series (its label joins the title), a setting shared by every
  label becomes the legend title, short legends inside the axes, longer ones below in columns;
- integer ticks on an axis whose values are all integers (N, layers, ...);
- matplotlib's object API (``matplotlib.figure.Figure``): importing this module changes no
  global state (no backend switch, no pyplot), so it is safe in notebooks;
- PNG at 300 dpi, PDF and SVG as vector files (:func:`draw_figure_files`), and the data of
  every series in a CSV file beside them (``FILE.data.csv``, :func:`write_figure_csv`: x, y,
  the interval ends y_low/y_high and n), so a figure can be redrawn or restyled without
  rerunning anything (report.json holds the same data).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.outputs import save_options
from verify.report.figure_style import _is_integer_axis, math_label, plan_lines  # noqa: F401

KINDS = ("lines", "bars", "ratios", "heatmap")
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
    # no layout engine but the one a figure asks for (render's "constrained"); with these,
    # set_layout_engine(None) removes it (see freeze_layout)
    "figure.autolayout": False,
    "figure.constrained_layout.use": False,
}


def freeze_layout(mfig: Any) -> None:
    """Keep ``mfig``'s axes where its layout engine last placed them: no engine runs at the
    next draw. (``set_layout_engine("none")`` leaves a placeholder engine, and savefig then
    draws the figure once more before drawing it: a tenth of a figure's time, for nothing.)
    Call inside ``rc_context(STYLE)``, whose rc settings make None mean no engine."""
    mfig.set_layout_engine(None)


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
        for key in ("ylo", "yhi"):
            if s.get(key) is not None and len(s[key]) != len(s["y"]):
                raise ValidationError(
                    f"figure {fig.name!r} series[{i}]",
                    f"{key} of the length of y",
                    f"{len(s[key])} and {len(s['y'])}",
                )
        if (s.get("ylo") is None) != (s.get("yhi") is None):
            raise ValidationError(
                f"figure {fig.name!r} series[{i}]", "both ylo and yhi or neither", sorted(s)
            )
    return list(series)


# ------------------------------------------------------------------------ drawing
def render(fig: Any, dpi: float | None = None):  # -> matplotlib.figure.Figure
    """The matplotlib Figure of ``fig`` (object API; nothing global is touched), at ``dpi``
    (default: matplotlib's). A "lines" figure is laid out here (its series are moved apart in
    pixels of the laid-out axes, :func:`verify.report.figure_layout.dodge_covered`) and keeps
    that layout: render at the dpi it is drawn at (:data:`DPI` for files)."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    from verify.report import figure_draw as fd
    from verify.report import figure_kinds as fk
    from verify.report import figure_layout as fl

    series = _series(fig)
    data = fig.data
    probability = fd.is_probability(data) and fig.kind in ("lines", "bars")
    if probability:
        _check_probabilities(fig, series)
    with matplotlib.rc_context(STYLE):
        n = len(series)
        if fig.kind == "ratios":
            size = (6.4, 0.9 + 0.26 * len(series[0]["x"]))
        elif fig.kind == "heatmap":
            size = (6.4, 1.0 + 0.22 * n)
        else:
            size = (6.4 if n > 3 or fig.kind == "bars" else 4.6, 3.0)
        mfig = Figure(figsize=size, dpi=dpi, layout="constrained")
        ax = mfig.add_subplot()
        ax.set_title(fd.wrap_title(getattr(fig, "title", ""), int(size[0] * 15)))
        draw = {
            "lines": fd.draw_lines,
            "bars": fd.draw_bars,
            "ratios": fk.draw_ratios,
            "heatmap": fk.draw_heatmap,
        }[fig.kind]
        if fig.kind in ("lines", "bars"):  # scales first: the drawing measures distances
            if data.get("logy"):
                ax.set_yscale("log", nonpositive="clip")
            if data.get("logx") and fig.kind == "lines":
                ax.set_xscale("log")
        legend = draw(mfig, ax, fig, series)
        if fig.kind in ("lines", "bars"):
            if data.get("logy"):
                _short_log_labels(ax.yaxis, [v for s in series for v in s["y"]])
            elif fig.kind == "lines" and _is_integer_axis([v for s in series for v in s["y"]]):
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            if data.get("logx") and fig.kind == "lines":
                _short_log_labels(ax.xaxis, [v for s in series for v in s["x"]])
            if probability:  # a probability axis ends at 0 and 1 (markers drawn unclipped)
                lo, hi = ax.get_ylim()
                ax.set_ylim(lo if data.get("logy") else max(lo, 0.0), min(hi, 1.0))
                for art in [*ax.lines, *ax.collections]:
                    art.set_clip_on(False)
            ax.grid(True, alpha=0.25, which="major", linewidth=0.5)
        if fig.kind == "ratios":  # long category names: the title spans the figure
            ax.set_title("")
            mfig.suptitle(fd.wrap_title(getattr(fig, "title", ""), 100), fontsize=8)
            ax.set_xlabel(math_label(data.get("xlabel") or "1 - measured/bound (log scale)"))
        elif fig.kind == "heatmap":
            ax.set_xlabel(math_label(data.get("xlabel", "")))
        else:
            ax.set_xlabel(math_label(data.get("xlabel", "")))
            ax.set_ylabel(math_label(data.get("ylabel", "")))
        notes = [data.get("interval"), fd.shared_n(series) if fig.kind == "lines" else None]
        note = ", ".join(x for x in notes if x) or None
        fl.compact_legend(mfig, ax, legend, note=note, inside=fig.kind == "lines")
        if fig.kind == "lines":
            fl.dodge_covered(mfig, ax, len(series))
            freeze_layout(mfig)  # drawn with the layout the dodging measured
    return mfig


def _check_probabilities(fig: Any, series: list[dict[str, Any]]) -> None:
    """Every value of a probability figure lies in [0, 1] (nothing is clipped silently)."""
    from verify.report.figure_draw import interval

    for i, s in enumerate(series):
        vals = [float(v) for v in s["y"]]
        iv = interval(s)
        if iv is not None:
            vals += [float(v) for v in iv[0]] + [float(v) for v in iv[1]]
        bad = [v for v in vals if v == v and not -1e-12 <= v <= 1 + 1e-12]
        if bad:
            raise ValidationError(
                f"figure {fig.name!r} series[{i}] (a probability axis)", "values in [0, 1]", bad[0]
            )


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
    mfig = render(fig, dpi=DPI)
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(STYLE):
        for target in targets:
            mfig.savefig(target, dpi=DPI, **save_options(target))
            freeze_layout(mfig)  # one layout: the next formats draw the same
    return path


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


COLUMNS = ("series", "label", "x", "y", "y_low", "y_high", "n", "y_err_below", "y_err_above")


def figure_rows(fig: Any) -> list[dict[str, Any]]:
    """The data of every series, one row per point: series, label, x, y, the interval ends
    y_low, y_high of an estimate and its sample size n (empty for exact values and bounds),
    and the same interval as y_err_below, y_err_above (the numbers the figure shows)."""
    from verify.report.figure_draw import interval

    rows: list[dict[str, Any]] = []
    for i, s in enumerate(_series(fig)):
        iv = interval(s)
        n = s.get("n")
        for k, (x, y) in enumerate(zip(s["x"], s["y"], strict=True)):
            lo, hi = (float(iv[0][k]), float(iv[1][k])) if iv is not None else (None, None)
            rows.append(
                {
                    "series": i,
                    "label": s.get("label"),
                    "x": x,
                    "y": y,
                    "y_low": lo,
                    "y_high": hi,
                    "n": n[k] if isinstance(n, (list, tuple)) else n,
                    "y_err_below": None if lo is None else float(y) - lo,
                    "y_err_above": None if hi is None else hi - float(y),
                }
            )
    return rows


def write_figure_csv(fig: Any, path: str | Path) -> Path:
    """Write :func:`figure_rows` of ``fig`` to ``path`` (CSV with a header line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
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
