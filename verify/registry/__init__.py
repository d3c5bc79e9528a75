"""The statement registry: statements, their checks, and what checks return.

Statement modules live in ``verify/statements/`` (one per statement); ``load_all()`` imports
them. See ``verify.registry.core`` for how a statement and its checks are written.
"""

from verify.registry.context import BUDGETS, Budget, CheckContext, Sizes
from verify.registry.core import (
    Check,
    Finding,
    Hypothesis,
    Statement,
    all_statements,
    define_statement,
    get_statement,
    iter_checks,
    load_all,
    run_check,
    slugify,
)
from verify.registry.counterexamples import COUNTEREXAMPLES, repository_root
from verify.registry.policy import Policy, decide_status, row_status, status_counts
from verify.registry.results import (
    VERDICTS,
    CheckResult,
    Counterexample,
    FigureData,
    Outcome,
    Row,
    Status,
)

__all__ = [
    "BUDGETS",
    "COUNTEREXAMPLES",
    "Budget",
    "Check",
    "CheckContext",
    "CheckResult",
    "Counterexample",
    "FigureData",
    "Finding",
    "Hypothesis",
    "Outcome",
    "Policy",
    "Row",
    "Sizes",
    "Statement",
    "Status",
    "VERDICTS",
    "all_statements",
    "decide_status",
    "define_statement",
    "get_statement",
    "iter_checks",
    "load_all",
    "repository_root",
    "row_status",
    "run_check",
    "slugify",
    "status_counts",
]
