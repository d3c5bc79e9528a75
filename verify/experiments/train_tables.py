"""Training records as a table and as figures (``python -m verify train``, the H&R checks):
the main columns of each record, and blowup, sharpness, accuracy and learned sensitivity
against N per function, means over seeds with a 95% t interval where there are two or more."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from verify.checks.summaries import mean_ci
from verify.registry import FigureData

TABLE_COLUMNS = (
    "function", "N", "seed", "accuracy", "as_target", "as_model", "K0", "beta_mean",
    "beta_hr_mean", "param_norm_sq", "margin", "sharpness", "loss",
)  # fmt: skip


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def summary_line(rec: dict[str, Any]) -> str:
    return " ".join(f"{c}={_fmt(rec.get(c))}" for c in TABLE_COLUMNS)


def summary_table(records: Iterable[dict[str, Any]]) -> str:
    """A markdown table of the main columns."""
    lines = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|" + "---|" * len(TABLE_COLUMNS)]
    for rec in records:
        lines.append("| " + " | ".join(_fmt(rec.get(c)) for c in TABLE_COLUMNS) + " |")
    return "\n".join(lines)


def figures(
    records: Sequence[dict[str, Any]], stem: str = "hr_training", min_accuracy: float = 0.99
) -> list[FigureData]:
    """Blowup, sharpness, accuracy and learned sensitivity against N, one line per function
    (in the order of the records).
    Blowup and sharpness are drawn for fitted models only (accuracy >= ``min_accuracy``): an
    unfitted model (e.g. a constant predictor) sits at an unrelated point of the landscape."""
    out = []
    panels = (
        ("beta_mean", "mean blowup beta (paper's), fitted models", True, True),
        ("beta_hr_mean", "mean blowup beta_hr (H&R's logged), fitted models", True, True),
        ("sharpness", "sharpness (MSE increase, N(0, 0.02^2) noise), fitted models", True, True),
        ("param_norm_sq", "squared parameter norm (no positions), fitted models", False, True),
        ("accuracy", "accuracy (certified, all 2^N strings)", False, False),
        ("as_model", "average sensitivity of the learned function", False, False),
    )
    for key, ylabel, logy, fitted_only in panels:
        series = []
        for f in dict.fromkeys(r["function"] for r in records):  # in their records' order
            mine = [
                r
                for r in records
                if r["function"] == f
                and r.get(key) is not None
                and (not fitted_only or r["accuracy"] >= min_accuracy)
            ]
            ns = sorted({r["N"] for r in mine})
            if ns:  # mean over seeds, with a 95% t interval and the number of seeds
                vals = [_over_seeds(mine, f, n, key) for n in ns]
                cis = [mean_ci(v) for v in vals]
                series.append({"label": f, "x": ns, "y": [float(np.mean(v)) for v in vals],
                               "ylo": [c[0] for c in cis], "yhi": [c[1] for c in cis],
                               "n": [len(v) for v in vals]})  # fmt: skip
        if series:
            data = {"series": series, "xlabel": "N", "ylabel": key,
                    "interval": _interval_note(series)}  # fmt: skip
            if logy:
                data["logy"] = True
            out.append(FigureData(f"{stem}_{key}", f"Trained models: {ylabel}", "lines", data))
    return out


def _interval_note(series: list[dict[str, Any]]) -> str:
    """What the figure's whiskers are: a 95% t interval needs two seeds or more, so a figure
    whose every point is one seed claims none (its ylo/yhi are dropped), and one that mixes
    says where there is none."""
    counts = [n for s in series for n in s["n"]]
    if max(counts) < 2:
        for s in series:
            s.pop("ylo", None)
            s.pop("yhi", None)
        return "one seed per point: no interval"
    if min(counts) < 2:
        return "mean over seeds: 95% t interval (none where n = 1)"
    return "mean over seeds: 95% t interval"


def _over_seeds(records: Sequence[dict[str, Any]], f: str, n: int, key: str) -> list[float]:
    """The values of ``key`` over the seeds of function ``f`` at ``n`` (one per record)."""
    return [
        float(r[key])
        for r in records
        if r["function"] == f and r["N"] == n and r.get(key) is not None
    ]
