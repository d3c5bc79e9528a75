"""The statement registry's names the report and the sweeps use, from wherever it lives.

The registry is moving from ``verify.lemmas.registry`` to ``verify.registry``; this module is
the one place that knows, so the report keeps working on either side of the move.
"""

from __future__ import annotations

try:  # the registry the statements currently register into
    from verify.lemmas.registry import (
        Budget,
        Check,
        CheckContext,
        CheckResult,
        FigureData,
        Row,
        Statement,
        Status,
        all_statements,
    )
except ImportError:  # after the move
    from verify.registry import (  # type: ignore[no-redef]
        Budget,
        Check,
        CheckContext,
        CheckResult,
        FigureData,
        Row,
        Statement,
        Status,
        all_statements,
    )

__all__ = [
    "Budget",
    "Check",
    "CheckContext",
    "CheckResult",
    "FigureData",
    "Row",
    "Statement",
    "Status",
    "all_statements",
]
