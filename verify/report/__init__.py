"""Lemma reports: run the statement registry's checks and write report.md, report.json
(schema: docs/report-schema.md) and PNG figures. Entry point: ``python -m verify report``."""

from verify.report.document import SCHEMA_VERSION, build_document, validate_document
from verify.report.figures import draw_figure
from verify.report.markdown import render_markdown
from verify.report.runner import (
    CheckOutcome,
    StatementOutcome,
    aggregate_status,
    exit_code,
    run_statements,
    select_statements,
)
from verify.report.writer import Report, generate_report, write_report

__all__ = [
    "SCHEMA_VERSION",
    "CheckOutcome",
    "Report",
    "StatementOutcome",
    "aggregate_status",
    "build_document",
    "draw_figure",
    "exit_code",
    "generate_report",
    "render_markdown",
    "run_statements",
    "select_statements",
    "validate_document",
    "write_report",
]
