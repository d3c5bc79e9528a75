"""Values for strict JSON, written once for the report (report.json, figure data) and the sweeps
(results.jsonl, tables): :func:`jsonable` turns what a check or a cell returns into numbers,
strings, lists and dicts, with the non-finite floats as strings; ``NONFINITE`` reads them back.

Only the standard library is imported here: both users sit above it (``verify.report`` imports
``verify.sweep``, so ``verify.sweep`` must not import the report for this).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def jsonable(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced by the strings "inf", "-inf", "nan" (strict JSON
    has no such numbers), numpy scalars/arrays turned into Python numbers/lists, tuples into
    lists and anything else unknown into its ``str``."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return jsonable(obj.tolist())
    return str(obj)
