"""Lemma reports: run the statement registry's checks and write report.md, report.json
(schema: docs/report-schema.md), rows.csv and figures (PNG, PDF, CSV data). Entry point:
``python -m verify report``.

Names are imported lazily, so ``verify.report.document`` (JSON helpers, used by sweeps) does not
pull in matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

# what a report folder holds; a folder holding anything else is never replaced by a report
REPORT_FILES = ("report.md", "report.json", "rows.csv", "figures")

_EXPORTS = {
    "SCHEMA_VERSION": "verify.report.document",
    "build_document": "verify.report.document",
    "validate_document": "verify.report.document",
    "draw_figure": "verify.report.figures",
    "draw_figure_files": "verify.report.figures",
    "redraw_report_figures": "verify.report.figures",
    "report_frame": "verify.report.export",
    "report_rows": "verify.report.export",
    "render_markdown": "verify.report.markdown",
    "CheckOutcome": "verify.report.runner",
    "StatementOutcome": "verify.report.runner",
    "aggregate_status": "verify.report.runner",
    "exit_code": "verify.report.runner",
    "run_statements": "verify.report.runner",
    "select_statements": "verify.report.runner",
    "Report": "verify.report.writer",
    "generate_report": "verify.report.writer",
    "write_report": "verify.report.writer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'verify.report' has no attribute {name!r}")
