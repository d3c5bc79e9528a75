"""The records of the training experiment (``verify.experiments.train``): reading its JSON-lines
file and the one-line and markdown summaries of its main columns."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from verify.errors import ValidationError

__all__ = ["TABLE_COLUMNS", "read_records", "summary_line", "summary_table"]


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file written by :func:`run_experiment`."""
    p = Path(path)
    if not p.exists():
        raise ValidationError("path", "an existing JSON-lines file", str(path))
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


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
