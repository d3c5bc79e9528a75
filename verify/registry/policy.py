"""Status policies: how a check's rows become its status, declared once per check.

- ``STRICT``: each row is an inequality proven at the tested sizes; a failing row is a violation.
- ``STATISTICAL``: rows are estimates; a failing row violates the bound only if it is
  ``decisive`` (e.g. its confidence interval excludes the bound), otherwise the check is
  undecided.
- ``ASYMPTOTIC``: the statement is about N -> infinity; a failing row at a finite N is evidence,
  never a refutation, so the check is undecided.

With every row ok, the status is holds when some row has content (verdict "holds" or "exact");
otherwise vacuous when some row's bound is no better than its trivial bound (``Row.vacuous``),
and definitional when every row is true of every model by construction (``Row.definitional``):
neither is ever counted as holds. Undecided when the check reports conditions it could not
settle (``Outcome.unsettled``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from verify.registry.results import Row, Status


class Policy(str, enum.Enum):
    STRICT = "strict"
    STATISTICAL = "statistical"
    ASYMPTOTIC = "asymptotic"


def decide_status(policy: Policy, rows: Sequence[Row], unsettled: Sequence[str] = ()) -> Status:
    """The status of a check's rows under ``policy`` (see the module docstring)."""
    failing = [r for r in rows if not r.ok]
    if not failing:
        if unsettled:
            return Status.UNDECIDED
        if rows and not any(r.verdict in ("holds", "exact") for r in rows):
            return Status.VACUOUS if any(r.vacuous for r in rows) else Status.DEFINITIONAL
        return Status.HOLDS
    if policy is Policy.STRICT:
        return Status.VIOLATED
    if policy is Policy.STATISTICAL and any(r.decisive for r in failing):
        return Status.VIOLATED
    return Status.UNDECIDED


def row_status(policy: Policy, row: Row) -> Status:
    """One row's status under ``policy``, decided by the same rule as a check's: a failing row
    is violated (strict; statistical when decisive) or undecided; a row true by construction
    is definitional; a row within a bound no better than its trivial bound is vacuous; any
    other row that holds, holds."""
    if not row.ok:
        if policy is Policy.STRICT or (policy is Policy.STATISTICAL and row.decisive):
            return Status.VIOLATED
        return Status.UNDECIDED
    if row.definitional:
        return Status.DEFINITIONAL
    return Status.VACUOUS if row.vacuous else Status.HOLDS


def status_counts(policy: Policy, rows: Sequence[Row]) -> dict[str, int]:
    """How many rows have each status under ``policy`` (every status listed, zeros included)."""
    counts = {s.value: 0 for s in Status}
    for r in rows:
        counts[row_status(policy, r).value] += 1
    return counts


# what the theorem suite accepts from a check of each policy (a documented finding is a strict
# expected failure instead): a statistical check whose sample cannot settle a row, or an
# asymptotic statement missed at a small N, refutes nothing; only a strict check must hold
ACCEPTED: dict[Policy, tuple[Status, ...]] = {
    Policy.STRICT: (Status.HOLDS, Status.VACUOUS, Status.DEFINITIONAL),
    Policy.STATISTICAL: (Status.HOLDS, Status.VACUOUS, Status.DEFINITIONAL, Status.UNDECIDED),
    Policy.ASYMPTOTIC: (Status.HOLDS, Status.VACUOUS, Status.DEFINITIONAL, Status.UNDECIDED),
}
