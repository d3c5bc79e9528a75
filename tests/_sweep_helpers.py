"""A cheap, importable cell runner for the sweep kill test (workers import only this)."""

from __future__ import annotations

import time
from typing import Any


def slow_square(cell: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``cell["sleep"]`` seconds, then return seed^2."""
    time.sleep(cell.get("sleep", 0.0))
    return {"value": cell["seed"] ** 2}
