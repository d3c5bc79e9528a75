"""Plain-text tables for ``print()`` in a terminal (the ``__str__`` of the toolkit's results)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, width: int = 60) -> str:
    """Columns aligned under ``header`` (numbers right-aligned), cells cut to ``width``."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            v = f"{v:.6g}"
        s = str(v)
        return s if len(s) <= width else s[: width - 1] + "…"

    body = [[cell(v) for v in r] for r in rows]
    cols = list(zip(*([list(header)] + body), strict=True)) if body else [[h] for h in header]
    widths = [max(len(c) for c in col) for col in cols]
    numeric = [bool(body) and all(_is_number(r[k]) for r in rows) for k in range(len(header))]

    def line(vals: Sequence[str]) -> str:
        out = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(vals, widths, numeric, strict=True)
        ]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(header)), rule, *(line(r) for r in body)])


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def profile_text(title: str, counts: np.ndarray, total: int) -> str:
    """``title`` over a table of K_k and K_k / total for k = 0..N (zero levels included)."""
    rows = [(k, int(c), float(int(c) / total)) for k, c in enumerate(counts)]
    return title + "\n" + text_table(("k", "K_k", "fraction"), rows)
