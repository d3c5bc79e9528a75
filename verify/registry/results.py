"""What a check measures and what the registry makes of it.

A check returns an :class:`Outcome` (rows comparing a measured quantity with its bound, notes,
figure data, the parameters of a possible counterexample); the registry turns it into a
:class:`CheckResult` by stamping the statement id, the check name, the seed and the runtime and
by deciding the :class:`Status` with the check's declared policy (``verify.registry.policy``).
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal


class Status(str, enum.Enum):
    """Outcome of a check."""

    HOLDS = "holds"  # every measured value within the bound
    VACUOUS = "vacuous"  # the bound says nothing at the tested sizes (e.g. exponent <= 0)
    VIOLATED = "violated"  # a measured value exceeds the bound: a finding, with counterexample
    UNDECIDED = "undecided"  # the arithmetic or the sample could not settle it


@dataclass
class Row:
    """One comparison: a measured quantity against its bound (both computed).

    ``decisive``: whether a failing row refutes the bound on its own. A row whose measured value
    is an estimate that cannot refute alone (a fit over a finite tail, a confidence interval that
    still contains the bound) sets it False; the check's policy then reports undecided, not
    violated.

    ``trivial``: the bound that holds for nothing-saying reasons at this size (the range of
    |T|, 2^(2^N) functions, probability 1, ...). A row whose bound is no better than its
    trivial bound is *vacuous*: it holds but says nothing."""

    label: str
    measured: float
    bound: float
    relation: Literal["<=", ">=", "=="] = "<="
    ci: tuple[float, float] | None = None  # confidence interval of the measured value
    extra: dict[str, Any] = field(default_factory=dict)
    decisive: bool = True
    trivial: float | None = None

    @property
    def ratio(self) -> float:
        """measured / bound (for '<=' rows, <= 1 means the bound holds)."""
        if self.bound == 0:
            return math.inf if self.measured > 0 else (0.0 if self.measured == 0 else -math.inf)
        return self.measured / self.bound

    @property
    def vacuous(self) -> bool:
        """The bound is no better than the trivial bound (see the class docstring)."""
        if self.trivial is None:
            return False
        if self.relation == "<=":
            return self.bound >= self.trivial
        if self.relation == ">=":
            return self.bound <= self.trivial
        return False

    @property
    def ok(self) -> bool:
        if self.relation == "<=":
            return self.measured <= self.bound
        if self.relation == ">=":
            return self.measured >= self.bound
        return self.measured == self.bound


@dataclass
class FigureData:
    """Data for one figure; the report draws it. ``kind`` is one of:

    - "lines": data = {"series": [{"label", "x", "y", "style"?}], "xlabel", "ylabel",
      "logx"?, "logy"?}
    - "bars": data = {"series": [{"label", "x", "y", "yerr"?}], "xlabel", "ylabel", "logy"?}
    """

    name: str  # file stem, e.g. "lemma_4_2_tail"
    title: str
    kind: Literal["lines", "bars"]
    data: dict[str, Any]


@dataclass
class Counterexample:
    """What a check hands the registry to save if its status is violated: the parameters (any
    object with ``.save(path)``, e.g. :class:`verify.model.Params`) and/or the setting that
    rebuilds the case. ``stem`` names the files (default: statement and check slugs)."""

    setting: dict[str, Any] = field(default_factory=dict)
    params: Any = None
    stem: str | None = None


@dataclass
class Outcome:
    """What a check returns: its rows and what explains them; nothing else."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: list[FigureData] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)  # sizes, budgets, boxes used
    arithmetic: str = "float64"  # e.g. "float64 + arb 128-334 bits", "exact integer"
    counterexample: Counterexample | None = None  # saved by the registry if violated
    # conditions the check could not settle (uncertain bits, a symbolic test without a
    # verdict): with every row ok, the status is undecided
    unsettled: list[str] = field(default_factory=list)


@dataclass
class CheckResult:
    """A finished check: the outcome's rows with the status the registry decided."""

    statement_id: str
    check_name: str
    status: Status
    rows: list[Row] = field(default_factory=list)
    arithmetic: str = "float64"
    seed: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    counterexample: str | None = None  # path (from the repository root) of the saved case
    figures: list[FigureData] = field(default_factory=list)
    runtime_s: float = 0.0

    @property
    def worst(self) -> Row | None:
        """The row closest to (or furthest past) its bound: the largest ratio for '<='."""
        cands = [r for r in self.rows if r.relation == "<=" and math.isfinite(r.bound)]
        if cands:
            return max(cands, key=lambda r: r.ratio)
        cands = [r for r in self.rows if r.relation == ">=" and r.measured != 0]
        if cands:
            return min(cands, key=lambda r: r.bound / r.measured if r.measured else math.inf)
        return self.rows[0] if self.rows else None

    def summary(self) -> str:
        """Human-readable table: measured, bound, ratio per row; printed by theorems/."""
        lines = [
            f"{self.statement_id} [{self.check_name}]: {self.status.value}"
            f" (arithmetic: {self.arithmetic}; seed: {self.seed};"
            f" {self.runtime_s:.2f} s)"
        ]
        for r in self.rows:
            ci = f" CI [{r.ci[0]:.4g}, {r.ci[1]:.4g}]" if r.ci else ""
            lines.append(
                f"  {r.label}: measured {r.measured:.6g} {r.relation} bound"
                f" {r.bound:.6g} (ratio {r.ratio:.4g}){ci}"
                f"{'' if r.ok else '  <-- VIOLATED'}"
            )
        lines += [f"  note: {n}" for n in self.notes]
        if self.counterexample:
            lines.append(f"  counterexample: {self.counterexample}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = self.status.value
        for row, r in zip(out["rows"], self.rows, strict=True):
            row.pop("decisive")  # folded into the status by the policy
            if row["trivial"] is None:
                row.pop("trivial")
            else:
                row["vacuous"] = r.vacuous
            row["ratio"] = r.ratio
            row["ok"] = r.ok
        return json.loads(json.dumps(out, default=_json_default))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
