"""Formal statements of the papers, their explicit bounds and their numerical checks.

Every module in this package registers statements (``define_statement``) and checks
(``statement_check``); ``load_all()`` imports them all. See registry.py.
"""

from verify.lemmas.registry import (
    Check,
    CheckContext,
    CheckResult,
    FigureData,
    Hypothesis,
    Row,
    Statement,
    Status,
    all_statements,
    define_statement,
    get_statement,
    iter_checks,
    load_all,
    run_check,
    statement_check,
)

__all__ = [
    "Check",
    "CheckContext",
    "CheckResult",
    "FigureData",
    "Hypothesis",
    "Row",
    "Statement",
    "Status",
    "all_statements",
    "define_statement",
    "get_statement",
    "iter_checks",
    "load_all",
    "run_check",
    "statement_check",
]
