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

# a row's verdict (Row.verdict), in the order reports list them
VERDICTS: tuple[str, ...] = ("holds", "vacuous", "exact", "fails", "definitional")


class Status(str, enum.Enum):
    """Outcome of a check."""

    HOLDS = "holds"  # every measured value within the bound
    VACUOUS = "vacuous"  # the bound says nothing at the tested sizes (e.g. exponent <= 0)
    # true of every model by construction (z <= eps^-1/2, a monotone box bound, K_0 = 2^N of a
    # constant function): the rows test the implementation, not the statement; never "holds"
    DEFINITIONAL = "definitional"
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
    definitional: bool = False

    def __post_init__(self) -> None:
        if self.relation not in ("<=", ">=", "=="):
            raise ValueError(f"Row {self.label!r}: relation must be <=, >= or ==")

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

    @property
    def shown_relation(self) -> str:
        """The relation that is true of the numbers: ``relation`` when the row holds, else its
        negation (">" for a failing "<=", "<" for a failing ">=", "!=" for a failing "==")."""
        if self.ok:
            return self.relation
        return {"<=": ">", ">=": "<", "==": "!="}[self.relation]

    @property
    def verdict(self) -> str:
        """The row on its own: "fails" (measured outside the bound), "definitional" (true of
        every model by construction), "vacuous" (within a bound no better than the trivial
        one), "exact" (an identity that holds), "holds"."""
        if not self.ok:
            return "fails"
        if self.definitional:
            return "definitional"
        if self.vacuous:
            return "vacuous"
        return "exact" if self.relation == "==" else "holds"

    @property
    def tightness(self) -> float:
        """How close the row is to its bound, > 1 meaning outside it: measured/bound for '<='
        and bound/measured for '>=' (both >= 0); otherwise 0 inside the bound, inf outside."""
        m, b = self.measured, self.bound
        if self.relation in ("<=", ">=") and m >= 0 and b >= 0:
            num, den = (m, b) if self.relation == "<=" else (b, m)
            if den == 0:
                return 0.0 if num == 0 else math.inf
            return num / den
        return 0.0 if self.ok else math.inf


@dataclass
class FigureData:
    """Data for one figure; the report draws it. ``kind`` is one of:

    - "lines": data = {"series": [{"label", "x", "y", "style"?}], "xlabel", "ylabel",
      "logx"?, "logy"?}
    - "bars": data = {"series": [{"label", "x", "y", "yerr"?}], "xlabel", "ylabel", "logy"?}
    - "ratios": one series of ratios measured/bound near 1 per category, drawn as their
      distance 1 - ratio on a log axis (data = {"series": [...], "xlabel"?})
    - "heatmap": one row per series, one column per x, the value as colour ("logy"?)

    An estimated quantity carries its interval and sample size in its series: "ylo", "yhi"
    (interval ends per point) and "n" (one count or one per point); data["interval"] names the
    interval ("95% Clopper-Pearson"), data["probability"] puts the y axis on [0, 1]. See
    :mod:`verify.report.figures` for how each is drawn.
    """

    name: str  # file stem, e.g. "lemma_4_2_tail"
    title: str
    kind: Literal["lines", "bars", "ratios", "heatmap"]
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
        """The informative row closest to (or furthest past) its bound: the largest
        :attr:`Row.tightness` among rows that are neither vacuous nor identities (``==``);
        None when every row is vacuous or an identity (see :meth:`worst_text`)."""
        cands = [r for r in self.rows if r.verdict in ("holds", "fails")]
        if not cands:
            return None
        return max(cands, key=lambda r: math.inf if math.isnan(r.tightness) else r.tightness)

    @property
    def row_counts(self) -> dict[str, int]:
        """Rows per :attr:`Row.verdict`: holds (informative), vacuous, exact, fails,
        definitional."""
        counts = dict.fromkeys(VERDICTS, 0)
        for r in self.rows:
            counts[r.verdict] += 1
        return counts

    def worst_text(self) -> str:
        """The worst informative row as "label: measured REL bound", else what the rows are
        ("all exact (n identities)", "all vacuous (n rows)")."""
        w = self.worst
        if w is not None:
            return f"{w.label}: {w.measured:.6g} {w.shown_relation} {w.bound:.6g}"
        c = self.row_counts
        if c["exact"] and not c["vacuous"]:
            return f"all exact ({c['exact']} identities)"
        if c["vacuous"] and not c["exact"]:
            return f"all vacuous ({c['vacuous']} rows)"
        if c["definitional"] and not c["exact"] and not c["vacuous"]:
            return f"all definitional ({c['definitional']} rows true by construction)"
        return f"{c['exact']} identities, {c['vacuous']} vacuous rows" if self.rows else "no rows"

    def summary(self) -> str:
        """Human-readable table: measured, bound, ratio per row; printed by theorems/."""
        counts = ", ".join(f"{v} {k}" for k, v in self.row_counts.items() if v)
        lines = [
            f"{self.statement_id} [{self.check_name}]: {self.status.value}"
            f" (arithmetic: {self.arithmetic}; seed: {self.seed};"
            f" {self.runtime_s:.2f} s; rows: {counts or 'none'})"
        ]
        for r in self.rows:
            ci = f" CI [{r.ci[0]:.4g}, {r.ci[1]:.4g}]" if r.ci else ""
            mark = "  <-- FAILS" if r.verdict == "fails" else ""
            if r.verdict == "vacuous":
                mark = f"  (vacuous: trivial bound {r.trivial:.6g})"
            if r.verdict == "definitional":
                mark = "  (definitional: true of every model by construction)"
            lines.append(
                f"  {r.label}: measured {r.measured:.6g} {r.shown_relation} bound"
                f" {r.bound:.6g} (ratio {r.ratio:.4g}){ci}{mark}"
            )
        lines += [f"  note: {n}" for n in self.notes]
        if self.counterexample:
            lines.append(f"  counterexample: {self.counterexample}")
        return "\n".join(lines)

    def __str__(self) -> str:
        """Terminal display: the status line, a measured-vs-bound table (one line per row,
        long labels cut), the notes and a saved counterexample."""
        from verify.boolean.display import text_table

        counts = ", ".join(f"{v} {k}" for k, v in self.row_counts.items() if v)
        head = (
            f"{self.statement_id} [{self.check_name}]: {self.status.value}"
            f" (arithmetic: {self.arithmetic}; seed {self.seed}; {self.runtime_s:.2f} s;"
            f" rows: {counts or 'none'})"
        )
        rows = [
            (
                r.label,
                float(r.measured),
                r.shown_relation,
                float(r.bound),
                float(r.ratio),
                "" if r.ci is None else f"[{r.ci[0]:.4g}, {r.ci[1]:.4g}]",
                r.verdict,
            )
            for r in self.rows
        ]
        header = ("row", "measured", "rel", "bound", "ratio", "CI", "verdict")
        if all(r.ci is None for r in self.rows):  # no interval anywhere: no CI column
            header = header[:5] + header[6:]
            rows = [r[:5] + r[6:] for r in rows]
        table = text_table(header, rows)
        lines = [head, table] if rows else [head]
        lines += [f"note: {n}" for n in self.notes]
        if self.counterexample:
            lines.append(f"counterexample: {self.counterexample}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        """Notebook display: the status and a measured-vs-bound table."""
        lines = [
            f"**{self.statement_id}** [{self.check_name}]: **{self.status.value}**"
            f" (arithmetic: {self.arithmetic}; seed {self.seed}; {self.runtime_s:.2f} s)",
            "",
            "| row | measured | relation | bound | ratio |",
            "|---|---|---|---|---|",
        ]
        for r in self.rows:
            relation = r.shown_relation if r.ok else f"{r.shown_relation} (**violated**)"
            lines.append(
                f"| {r.label} | {r.measured:.6g} | {relation} | {r.bound:.6g} | {r.ratio:.4g} |"
            )
        lines += [f"- {n}" for n in self.notes]
        if self.counterexample:
            lines.append(f"- counterexample: `{self.counterexample}`")
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
            row["verdict"] = r.verdict
        return json.loads(json.dumps(out, default=_json_default))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
