"""Summaries per setting, and the cells as CSV rows or a pandas DataFrame."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.json_values import jsonable
from verify.sweep.grid import cell_key
from verify.sweep.results import load_results

# --------------------------------------------------------------------------------- exports
RESULT_COLUMNS = (
    "kind",
    "scheme",
    "d_model",
    "n_layers",
    "n_heads",
    "ln_eps",
    "scale",
    "n_bits",
    "seed",
    "status",
    "decided",
    "K0",
    "avg_sensitivity",
    "ones",
    "n_float64",
    "n_high_precision",
    "n_uncertain",
    "n_undecided",
    "runtime_s",
    "profile",
    "model",
    "error",
)


def grid_order(records: Iterable[Mapping[str, Any]], grid: Any = None) -> list[Mapping[str, Any]]:
    """The records in the grid's order: the order of ``grid.cells()`` when a SweepGrid is
    given (cells outside it last), else the grid's nesting order scheme (as listed in
    verify.sweep.grid.SCHEMES) x D x L x eps x N x seed, read from each record's cell."""
    from verify.sweep.grid import SCHEMES

    recs = list(records)
    if grid is not None:
        rank = {cell_key(c): k for k, c in enumerate(grid.cells())}
        return sorted(recs, key=lambda r: rank.get(cell_key(r.get("cell") or {}), len(rank)))

    def key(r: Mapping[str, Any]) -> tuple:
        c = r.get("cell") or {}
        sc = c.get("scheme")
        scheme = (SCHEMES.index(sc), "") if sc in SCHEMES else (len(SCHEMES), str(sc or ""))
        nums = [c.get(k) for k in ("d_model", "n_layers", "ln_eps", "n_bits", "seed")]
        return (str(c.get("kind", "")), scheme, *[(v is None, v or 0) for v in nums])

    return sorted(recs, key=key)


def results_rows(records: Iterable[Mapping[str, Any]], grid: Any = None) -> list[dict[str, Any]]:
    """One flat row per cell record, in the grid's order (:func:`grid_order`): its cell,
    status, result numbers; the profile as a space-separated string, further ModelConfig
    fields as JSON: the rows of the CSV export."""
    rows = []
    for r in grid_order(records, grid):
        cell = dict(r.get("cell") or {})
        res = r.get("result") or {}
        row: dict[str, Any] = {k: cell.get(k) for k in RESULT_COLUMNS[:9]}
        row.update(
            {
                "status": r.get("status"),
                "decided": res.get("decided"),
                "K0": res.get("K0"),
                "avg_sensitivity": res.get("avg_sensitivity"),
                "ones": res.get("ones"),
                "n_float64": res.get("n_float64"),
                "n_high_precision": res.get("n_high_precision"),
                "n_uncertain": res.get("n_uncertain"),
                "n_undecided": res.get("n_undecided"),
                "runtime_s": r.get("runtime_s"),
                "profile": " ".join(map(str, res["profile"])) if res.get("profile") else None,
                "model": json.dumps(cell["model"], sort_keys=True) if cell.get("model") else None,
                "error": (r.get("error") or {}).get("message"),
            }
        )
        rows.append(row)
    return rows


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write dict rows to a CSV file (columns: the keys of the first row, then any others),
    atomically: into a file beside it, renamed over ``path`` when complete."""
    import csv

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    part = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        with open(part, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=columns)
            w.writeheader()
            for r in rows:
                w.writerow({k: _csv_value(v) for k, v in r.items()})
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return path


def _csv_value(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(jsonable(v), sort_keys=True)
    return v


def summary_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`summarize` rows flattened for a CSV (setting fields as columns, CI as two)."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r["setting"].items() if k != "model"}
        if r["setting"].get("model"):
            flat["model"] = json.dumps(r["setting"]["model"], sort_keys=True)
        lo, hi = r["p_K0_ge_1_ci"]
        flat.update({k: v for k, v in r.items() if k not in ("setting", "p_K0_ge_1_ci")})
        flat.update({"p_K0_ge_1_ci_low": lo, "p_K0_ge_1_ci_high": hi})
        out.append(flat)
    return out


def results_frame(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    profile: str = "list",
    grid: Any = None,
):
    """The sweep's cells as a pandas DataFrame, one row per cell in the grid's order
    (:func:`grid_order`; ``grid``: the SweepGrid, optional). ``profile="list"``: the profile
    column holds the list [K_0, ..., K_N]; ``profile="wide"``: one integer column K_0 ... K_n
    per level up to the largest N (missing levels <NA>) instead. ``source`` is a results
    file or records. Needs pandas (optional)."""
    if profile not in ("list", "wide"):
        raise ValidationError("profile", "'list' or 'wide'", profile)
    try:
        import pandas as pd
    except ImportError:
        raise ValidationError("pandas", "installed (pip install pandas)") from None
    records = load_results(source) if isinstance(source, (str, os.PathLike)) else list(source)
    ordered = grid_order(records, grid)
    frame = pd.DataFrame(results_rows(ordered), columns=list(RESULT_COLUMNS))
    profiles = [list((r.get("result") or {}).get("profile") or []) or None for r in ordered]
    if profile == "list":
        frame["profile"] = pd.Series(profiles, dtype=object, index=frame.index)
        return frame
    width = max((len(p) for p in profiles if p), default=0)
    wide = pd.DataFrame(
        [(p or []) + [None] * (width - len(p or [])) for p in profiles],
        columns=[f"K_{k}" for k in range(width)],
        index=frame.index,
    ).astype("Int64")
    return pd.concat([frame.drop(columns="profile"), wide], axis=1)


# --------------------------------------------------------------------------------- summaries
def summarize(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Group ok records over seeds: per setting, the number of seeds, how many were decided,
    and over the decided cells the fraction of constant functions, the mean average
    sensitivity, mean K_0 and P[K_0 >= 1] with its 95% Clopper-Pearson interval; and the same
    probability over the non-constant functions alone (a constant f has K_0 = 2^N trivially:
    where most drawn models are constant, only the conditional one says something)."""
    from verify.boolean import clopper_pearson

    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("status") != "ok":
            continue
        setting = {k: v for k, v in r["cell"].items() if k != "seed"}
        groups.setdefault(cell_key(setting), []).append(r)
    rows = []
    for key, recs in groups.items():
        dec = [r["result"] for r in recs if r["result"].get("decided")]
        k0 = [int(x["K0"]) for x in dec]
        hit = sum(v >= 1 for v in k0)
        n_bits = int(json.loads(key).get("n_bits", 0))
        const = sum(v == 2**n_bits for v in k0)  # K_0 = 2^N exactly when f is constant
        nonconst = len(k0) - const
        hit_nonconst = hit - const  # a constant f has K_0 = 2^N >= 1
        rows.append(
            {
                "setting": json.loads(key),
                "n": len(recs),
                "n_decided": len(dec),
                "frac_constant": const / len(k0) if k0 else math.nan,
                "mean_avg_sensitivity": (
                    sum(float(x["avg_sensitivity"]) for x in dec) / len(dec) if dec else math.nan
                ),
                "mean_K0": sum(k0) / len(k0) if k0 else math.nan,
                "p_K0_ge_1": hit / len(k0) if k0 else math.nan,
                "p_K0_ge_1_ci": clopper_pearson(hit, len(k0), 0.95) if k0 else (0.0, 1.0),
                "n_nonconstant": nonconst,
                "p_K0_ge_1_nonconstant": hit_nonconst / nonconst if nonconst else math.nan,
                "p_K0_ge_1_nonconstant_ci": (
                    clopper_pearson(hit_nonconst, nonconst, 0.95) if nonconst else (0.0, 1.0)
                ),
            }
        )
    return rows
