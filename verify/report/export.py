"""Report rows as a table: CSV (``rows.csv`` beside report.json) and a pandas DataFrame.

One row per measured-vs-bound row of every check, with its statement and check, so the numbers
of a report can be filtered, joined and plotted without parsing report.json. pandas is optional:
only :func:`report_frame` needs it.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

COLUMNS = (
    "statement",
    "slug",
    "statement_status",
    "check",
    "check_status",
    "label",
    "measured",
    "relation",
    "bound",
    "ratio",
    "ok",
    "ci_low",
    "ci_high",
    "seed",
    "arithmetic",
    "check_runtime_s",
)


def _number(x: Any) -> Any:
    """report.json's "inf" / "-inf" / "nan" strings back to floats."""
    if x in ("inf", "-inf", "nan"):
        return float(x)
    return x


def report_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every check row of a report document (the content of report.json), flat."""
    rows: list[dict[str, Any]] = []
    for st in doc["statements"]:
        for c in st["checks"]:
            for r in c["rows"]:
                ci = r.get("ci") or (None, None)
                rows.append(
                    {
                        "statement": st["id"],
                        "slug": st["slug"],
                        "statement_status": st["status"],
                        "check": c["name"],
                        "check_status": c["status"],
                        "label": r["label"],
                        "measured": _number(r["measured"]),
                        "relation": r["relation"],
                        "bound": _number(r["bound"]),
                        "ratio": _number(r["ratio"]),
                        "ok": r["ok"],
                        "ci_low": _number(ci[0]),
                        "ci_high": _number(ci[1]),
                        "seed": c.get("seed"),
                        "arithmetic": c.get("arithmetic"),
                        "check_runtime_s": c.get("runtime_s"),
                    }
                )
    return rows


def write_rows_csv(doc: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write :func:`report_rows` to ``path`` (CSV, header line first)."""
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        w.writeheader()
        w.writerows(report_rows(doc))
    return path


def _load(source: str | os.PathLike[str] | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    path = Path(source)
    if path.is_dir():
        path = path / "report.json"
    return json.loads(path.read_text(encoding="utf-8"))


def report_frame(source: str | os.PathLike[str] | Mapping[str, Any]):
    """The rows of a report as a pandas DataFrame; ``source``: a report document, a report.json
    or the folder holding it. Needs pandas (optional)."""
    try:
        import pandas as pd
    except ImportError:
        from verify.errors import ValidationError

        raise ValidationError("pandas", "installed (pip install pandas)") from None
    return pd.DataFrame(report_rows(_load(source)), columns=list(COLUMNS))
