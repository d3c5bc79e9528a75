"""The figure rules (verify.report.figures) on small figures, the audit that checks them, and
the gallery docs/figures.md: every figure the report can make is there, passes the audit, and
its estimated quantities carry their intervals."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from verify.errors import ValidationError
from verify.report import figure_layout
from verify.report.figure_audit import audit_figure, raw_tex
from verify.report.figure_style import math_label
from verify.report.figures import figure_rows, render, write_figure_csv
from verify.report.gallery import CAPTIONS

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "figures.md"
GALLERY_FIGS = ROOT / "docs" / "figures"


def fig(kind: str = "lines", **data) -> SimpleNamespace:
    return SimpleNamespace(name="t", title="t", kind=kind, data=data)


def lines_of(mfig, gid: str):
    return [ln for ln in mfig.axes[0].lines if ln.get_gid() == gid]


# ------------------------------------------------------------------------ labels
@pytest.mark.parametrize(
    "text, want",
    [
        ("e^{2R}, value term V", "$e^{2R}$, value term V"),
        ("MLP factor ||W_2|| ||W_1||", r"MLP factor $\Vert W_{2}\Vert$ $\Vert W_{1}\Vert$"),
        ("|dT| / ||dtheta||", r"|dT| / $\Vert d\theta\Vert$"),
        ("coefficient sqrt(sum_h vbar_h^2)", r"coefficient $\sqrt{\sum_{h} \bar{v}_{h}^{2}}$"),
        ("P[beta(x) > N^(zeta/2)]", r"P[$\beta$(x) > $N^{\zeta/2}$]"),
        ("Unif[-1,1]^M", "Unif[-1,1$]^{M}$"),
    ],
)
def test_mathtext_for_braces_norms_roots_and_bars(text, want):
    assert math_label(text) == want
    assert raw_tex(math_label(text)) is None
    assert raw_tex(text) is not None  # the raw label is what the audit reports


def test_raw_tex_ignores_names_and_math():
    assert raw_tex("sparse_parity, xavier_uniform, out_proj") is None
    assert raw_tex("$K_{0}$ of x") is None
    assert raw_tex("K_0 of x") == "K_0 of x"


# ------------------------------------------------------------------------ drawing rules
def test_probability_axis_stays_inside_zero_one_and_rejects_values_outside():
    f = fig(
        series=[{"label": "p", "x": [1, 2, 3], "y": [1.0, 0.5, 0.0], "ylo": [0.7, 0.2, 0.0],
                 "yhi": [1.0, 0.8, 0.3], "n": 10}],
        ylabel="P[hit]",
    )  # fmt: skip
    lo, hi = render(f).axes[0].get_ylim()
    assert 0.0 <= lo and hi <= 1.0
    assert audit_figure(f) == []
    f.data["series"][0]["y"][0] = 1.2
    with pytest.raises(ValidationError, match="values in \\[0, 1\\]"):
        render(f)


def test_zeros_on_a_log_axis_sit_on_the_bottom_edge():
    f = fig(series=[{"label": "a", "x": [1, 2, 3], "y": [0.1, 0.0, 0.01]},
                    {"label": "b", "x": [1, 2, 3], "y": [0.2, 0.3, 0.0]}], logy=True)  # fmt: skip
    mfig = render(f)
    mfig.draw_without_rendering()
    ax = mfig.axes[0]
    bottom = ax.transAxes.transform((0, 0))[1]
    for gid in ("series0", "series1"):
        pts = figure_layout.drawn_points(ax, gid)
        assert np.count_nonzero(np.abs(pts[:, 1] - bottom) < 1) == 1
    assert audit_figure(f) == []
    texts = (
        [t.get_text() for t in mfig.legends[0].get_texts()]
        if mfig.legends
        else [t.get_text() for t in ax.get_legend().get_texts()]
    )
    assert any("value 0" in t for t in texts)


def test_identical_series_drawn_once_with_both_names():
    s = {"x": [1, 2, 3], "y": [1.0, 2.0, 4.0]}
    f = fig(series=[{"label": "D=4, rho=0.01", **s}, {"label": "D=4, rho=0.05", **s},
                    {"label": "D=4, rho=0.1", "x": [1, 2, 3], "y": [3.0, 1.0, 2.0]}])  # fmt: skip
    mfig = render(f)
    assert lines_of(mfig, "series0") and not lines_of(mfig, "series1")
    leg = mfig.axes[0].get_legend()
    texts = [t.get_text() for t in leg.get_texts()]
    assert r"$\rho$=0.01 = D=4, $\rho$=0.05" in texts[0]
    assert leg.get_title().get_text() == "D=4"  # the common setting, said once


def test_a_series_under_another_is_moved_sideways(monkeypatch):
    f = fig(series=[{"label": "a", "x": [1, 2, 3], "y": [1.0, 2.0, 3.0]},
                    {"label": "b", "x": [1, 2, 3], "y": [1.001, 2.001, 3.001]}])  # fmt: skip
    assert audit_figure(f) == []
    monkeypatch.setattr(figure_layout, "dodge_covered", lambda *a, **k: None)
    problems = audit_figure(f)
    assert any("hidden under" in p for p in problems), problems


def test_a_drawn_figure_keeps_its_layout_and_ignores_the_users_layout_settings(tmp_path):
    """A "lines" figure is laid out once (the dodging measures that layout) and saved with no
    layout engine left: savefig then draws it once, not twice (a placeholder engine costs a
    draw pass). A user's matplotlibrc asking for an automatic layout changes nothing."""
    import matplotlib
    from PIL import Image

    from verify.report.figures import draw_figure

    f = fig(series=[{"label": "a", "x": [1, 2, 3], "y": [1.0, 2.0, 3.0]},
                    {"label": "b", "x": [1, 2, 3], "y": [3.0, 1.0, 2.0]}],
            xlabel="N", ylabel="K_0")  # fmt: skip
    assert render(f).get_layout_engine() is None
    plain = np.asarray(Image.open(draw_figure(f, tmp_path / "plain.png")))
    for rc in ({"figure.autolayout": True}, {"figure.constrained_layout.use": True}):
        with matplotlib.rc_context(rc):
            assert render(f).get_layout_engine() is None
            user = np.asarray(Image.open(draw_figure(f, tmp_path / "user.png")))
        assert np.array_equal(plain, user), rc


def test_report_pngs_hold_the_pixels_of_the_default_compression(tmp_path):
    """PNGs are written at zlib level 1 (save_options): faster, the same pixels as level 6."""
    from PIL import Image

    from verify.outputs import PNG_COMPRESSION, save_options
    from verify.report.figures import DPI

    assert save_options("a.png") == {"pil_kwargs": {"compress_level": PNG_COMPRESSION}}
    assert save_options("a.PDF") == {"metadata": {"CreationDate": None}}
    assert save_options("a.svg") == {"metadata": {"Date": None}}
    mfig = render(fig(series=[{"label": "a", "x": [1, 2, 3], "y": [1.0, 2.0, 3.0]}]), dpi=DPI)
    mfig.savefig(tmp_path / "fast.png", dpi=DPI, **save_options("fast.png"))
    mfig.savefig(tmp_path / "default.png", dpi=DPI)
    fast, default = (Image.open(tmp_path / n) for n in ("fast.png", "default.png"))
    assert np.array_equal(np.asarray(fast), np.asarray(default))
    assert (tmp_path / "fast.png").read_bytes() != (tmp_path / "default.png").read_bytes()


def test_estimates_get_error_bars_spread_sideways_and_interval_columns(tmp_path):
    est = {"x": [4, 8], "y": [1.0, 1.0], "ylo": [0.74, 0.74], "yhi": [1.0, 1.0], "n": 12}
    f = fig(series=[{"label": "rho=0.01", **est}, {"label": "rho=0.05", **est, "y": [1.0, 0.9]}],
            probability=True, interval="95% Clopper-Pearson")  # fmt: skip
    mfig = render(f)
    ax = mfig.axes[0]
    a, b = (figure_layout.drawn_points(ax, f"series{i}") for i in (0, 1))
    assert not np.allclose(a[:2, 0], b[:2, 0])  # shifted sideways
    (line,) = [ln for ln in lines_of(mfig, "series0") if ln.get_marker() == "o"]
    assert line.get_linestyle() == "None"  # two points: no trend line
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_legend().get_title().get_text() == "95% Clopper-Pearson, n=12 each"
    assert all("n=" not in t for t in texts)
    rows = figure_rows(f)
    assert rows[0]["y_low"] == 0.74 and rows[0]["y_high"] == 1.0 and rows[0]["n"] == 12
    header = write_figure_csv(f, tmp_path / "t.csv").read_text().splitlines()[0]
    assert header == "series,label,x,y,y_low,y_high,n,y_err_below,y_err_above"


def test_one_series_has_no_legend_and_its_label_joins_the_title():
    f = fig(series=[{"label": "xi = 0.02", "x": [1, 2, 3], "y": [0.1, 0.2, 0.3]}])
    mfig = render(f)
    assert mfig.axes[0].get_legend() is None and not mfig.legends
    assert r"$\xi$ = 0.02" in mfig.axes[0].get_title()


def test_ratios_drawn_as_distance_from_one():
    f = fig("ratios", series=[{"label": "r", "x": ["a", "b", "c"], "y": [0.999, 0.99, 1.0]}])
    mfig = render(f)
    ax = mfig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([0.001, 0.01])  # 1 - ratio; the ratio 1 is on the edge
    assert ax.get_xscale() == "log"
    notes = [t.get_text() for t in ax.texts]
    assert notes == ["0.999", "0.99", "1 (bound reached)"]
    assert audit_figure(f) == []


def test_heatmap_writes_every_value_and_zero():
    rows = [{"label": "and", "x": [0, 1], "y": [0.99, 0.0]},
            {"label": "or", "x": [0, 1], "y": [0.5, 0.5]}]  # fmt: skip
    f = fig("heatmap", series=rows, logy=True)
    texts = sorted(t.get_text() for t in render(f).axes[0].texts)
    assert texts == ["0", "0.5", "0.5", "0.99"]


def test_audit_reports_data_outside_the_axes_and_one_entry_legends(monkeypatch):
    f = fig(series=[{"label": "a", "x": [1, 2], "y": [1.0, 5.0]},
                    {"label": "b", "x": [1, 2], "y": [2.0, 3.0]}])  # fmt: skip
    assert audit_figure(f) == []
    real = figure_layout.compact_legend

    def clipped(mfig, ax, legend, **kw):
        real(mfig, ax, legend, **kw)
        ax.set_ylim(0, 4)  # cuts the point at 5

    monkeypatch.setattr(figure_layout, "compact_legend", clipped)
    assert any("outside the axes" in p for p in audit_figure(f))


# ------------------------------------------------------------------------ the gallery
def _figure_name_patterns() -> set[str]:
    """Regexes of every figure name the report (statements, checks, the random-init
    experiment, the overview) and sweep --plot can make, read from the source: the name
    argument of each FigureData(...), and for a name passed in, the literal its callers give.
    The training panels (verify/experiments/train.py, named "<stem>_<panel>") appear only in
    `report --full` and `train`; tests/test_train.py checks their data."""
    files = [*ROOT.glob("verify/statements/*.py"), *ROOT.glob("verify/checks/*.py"),
             ROOT / "verify/experiments/random_init.py", ROOT / "verify/report/overview.py",
             ROOT / "verify/commands/sweep.py"]  # fmt: skip
    trees = {p: ast.parse(p.read_text()) for p in files}
    patterns: set[str] = set()
    params: set[tuple[str, str, int]] = set()  # (function, parameter, position)

    def pattern(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return re.escape(node.value)
        if isinstance(node, ast.JoinedStr):
            return "".join(
                re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values
            )
        return None

    for tree in trees.values():
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
                if getattr(call.func, "id", None) != "FigureData":
                    continue
                arg = next((k.value for k in call.keywords if k.arg == "name"), None)
                arg = arg if arg is not None else call.args[0]
                p = pattern(arg)
                if p is not None:
                    patterns.add(p)
                elif isinstance(arg, ast.Name):
                    names = [a.arg for a in fn.args.args]
                    pos = names.index(arg.id) if arg.id in names else -1  # -1: keyword-only
                    params.add((fn.name, arg.id, pos))
    for tree in trees.values():
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            called = getattr(call.func, "attr", None) or getattr(call.func, "id", None)
            for fname, pname, pos in params:
                if called != fname:
                    continue
                arg = next((k.value for k in call.keywords if k.arg == pname), None)
                if arg is None and 0 <= pos < len(call.args):
                    arg = call.args[pos]
                if arg is not None and pattern(arg) is not None:
                    patterns.add(pattern(arg))
    return patterns


def test_every_figure_the_report_can_make_is_in_the_gallery():
    names = set(CAPTIONS)
    text = GALLERY.read_text()
    shown = set(re.findall(r"^## (\S+)$", text, flags=re.M))
    # the blueprint (verify.proofs.blueprint, not a FigureData) is the report's one other figure
    assert "blueprint" in shown and (GALLERY_FIGS / "blueprint.png").is_file()
    shown.discard("blueprint")
    assert shown == names  # every caption is shown, and nothing without one
    patterns = _figure_name_patterns()
    assert len(patterns) >= 25  # the scan finds the figures (not an empty pass)
    for p in sorted(patterns):
        assert any(re.fullmatch(p, n) for n in shown), f"no gallery figure named like {p}"
    for n in shown:
        assert (GALLERY_FIGS / f"{n}.png").is_file() and (GALLERY_FIGS / f"{n}.json").is_file()
        assert "![" in text and f"(figures/{n}.png)" in text


def _gallery_figures() -> list[SimpleNamespace]:
    return [
        SimpleNamespace(**json.loads(p.read_text())) for p in sorted(GALLERY_FIGS.glob("*.json"))
    ]


def test_every_gallery_figure_passes_the_audit():
    figs = _gallery_figures()
    assert len(figs) == len(CAPTIONS)
    problems = {f.name: audit_figure(f) for f in figs}
    assert {k: v for k, v in problems.items() if v} == {}


# estimated quantities: (figure, label pattern of its estimated series)
ESTIMATES = [
    ("conj_5_5_measure", ".*"),
    ("cor_3_4_fraction_vs_n", ".*"),
    ("cor_5_1_in_action", ".*"),
    ("cor_5_2_in_action", ".*"),
    ("cor_5_3_in_action", ".*"),
    ("cor_5_4_in_action", ".*"),
    ("lemma_4_2_rate", ".*measured.*"),
    ("thm_4_5_bad_event_rate", ".*measured.*"),
    ("lemma_4_4_sensitivity_event", ".*"),
    ("lemma_4_2_ln_tail", ".*empirical"),
    ("thm_4_5_blowup_tail_exponent", ".*fitted"),
    ("thm_4_5_k0_growth", ".*mean K_0"),
    ("random_init_p_k0", "transformers"),
    ("sec6_random_functions", "Monte Carlo"),
    ("sweep_p_k0", "random transformers.*"),
]


@pytest.mark.parametrize("name, label", ESTIMATES)
def test_estimated_quantities_carry_interval_columns_and_n(name, label):
    f = SimpleNamespace(**json.loads((GALLERY_FIGS / f"{name}.json").read_text()))
    est = [s for s in f.data["series"] if re.fullmatch(label, str(s.get("label")))]
    assert est, f"{name}: no series labelled like {label!r}"
    rows = figure_rows(f)
    for i, s in enumerate(f.data["series"]):
        if s in est:
            mine = [r for r in rows if r["series"] == i]
            assert all(r["y_low"] is not None and r["y_high"] is not None for r in mine), s["label"]
            assert all(r["y_low"] <= r["y"] + 1e-12 <= r["y_high"] + 2e-12 for r in mine)
            assert all(r["n"] is not None for r in mine), s["label"]
