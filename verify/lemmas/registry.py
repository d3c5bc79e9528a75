"""The statement registry: one source of truth per formal statement.

A :class:`Statement` holds the paper's id ("Lemma 3.2"), the statement in words and formula (a
*reconstruction*: the papers' full texts were not at hand), its hypotheses, its explicit bound and
one or more :class:`Check` objects. ``theorems/`` and the report generator both read this registry;
nothing is written twice.

Defining a statement::

    LEMMA_3_2 = define_statement(
        id="Lemma 3.2", title="Deterministic blowup bound (eps > 0)",
        statement=r"For eps > 0, z <= eps^{-1/2}, so beta <= (1 + eps^{-1/2})^K.",
        paper="arXiv 2606.08768", confidence="[note]",
        hypotheses=(Hypothesis("eps > 0", "layer-norm epsilon is positive"),),
        bound_formula=r"(1 + eps^{-1/2})^K",
    )

    @statement_check("Lemma 3.2", name="holds on random and adversarial parameters")
    def _check(ctx: CheckContext) -> CheckResult: ...

A check measures a quantity, computes the bound, compares them and returns a CheckResult whose
rows print both. It never hard-codes the expected value.
"""

from __future__ import annotations

import enum
import importlib
import json
import math
import pkgutil
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Budget = Literal["quick", "default", "full"]

# where checks keep the parameters of a violated bound (strict expected failures point here)
COUNTEREXAMPLES = Path(__file__).resolve().parents[2] / "theorems" / "counterexamples"


class Status(str, enum.Enum):
    """Outcome of a check."""

    HOLDS = "holds"  # every measured value within the bound
    VACUOUS = "vacuous"  # the bound says nothing at the tested sizes (e.g. exponent <= 0)
    VIOLATED = "violated"  # a measured value exceeds the bound: a finding, with counterexample
    UNDECIDED = "undecided"  # the arithmetic could not settle it (uncertain bits, wide CI)


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis of a statement, with an optional predicate on a check's setting."""

    name: str
    description: str
    predicate: Callable[..., bool] | None = None


@dataclass
class Row:
    """One comparison: a measured quantity against its bound (both computed)."""

    label: str
    measured: float
    bound: float
    relation: Literal["<=", ">=", "=="] = "<="
    ci: tuple[float, float] | None = None  # confidence interval of the measured value
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """measured / bound (for '<=' rows, <= 1 means the bound holds)."""
        if self.bound == 0:
            return math.inf if self.measured > 0 else (0.0 if self.measured == 0 else -math.inf)
        return self.measured / self.bound

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
class CheckResult:
    """What a check measured. ``rows`` compare measured values with bounds."""

    statement_id: str
    check_name: str
    status: Status
    rows: list[Row] = field(default_factory=list)
    arithmetic: str = "float64"  # e.g. "float64", "float64 + arb 128-334 bits", "exact integer"
    seed: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)  # sizes, budgets, boxes used
    notes: list[str] = field(default_factory=list)
    counterexample: str | None = None  # path under theorems/counterexamples/
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
            row["ratio"] = r.ratio
            row["ok"] = r.ok
        return json.loads(json.dumps(out, default=_json_default))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return str(obj)


@dataclass(frozen=True)
class CheckContext:
    """How much work a check may do, and where its randomness comes from."""

    budget: Budget = "default"
    seed: int = 0
    progress: bool = False

    def pick(self, quick: Any, default: Any, full: Any) -> Any:
        """Choose a size by budget: ``ctx.pick(quick=200, default=1000, full=20000)``."""
        return {"quick": quick, "default": default, "full": full}[self.budget]


@dataclass
class Check:
    name: str
    func: Callable[[CheckContext], CheckResult]
    slow: bool = False  # only in --runslow / report --full
    # A documented finding: the check is *expected* to return VIOLATED, with this counterexample
    # file (path from the repository root). Like a strict xfail: the report shows it as a known
    # finding, and fails if it stops reproducing.
    expected_violation: str | None = None

    def run(self, ctx: CheckContext, statement_id: str) -> CheckResult:
        start = time.perf_counter()
        result = self.func(ctx)
        result.runtime_s = time.perf_counter() - start
        if result.seed is None:
            result.seed = ctx.seed
        if result.statement_id != statement_id or result.check_name != self.name:
            raise RuntimeError(
                f"check {self.name!r} of {statement_id} returned a result labelled"
                f" {result.statement_id!r}/{result.check_name!r}"
            )
        return result


@dataclass
class Statement:
    id: str  # as in the paper: "Lemma 3.2", "Cor 5.1", "Thm 4.5", "Conj 5.5", "Fact ..."
    title: str
    statement: str  # words and formula (markdown with $...$); a reconstruction
    paper: str = "arXiv 2606.08768"
    confidence: str = "[note]"  # [paper] / [note] / [inferred], as in docs/reference
    hypotheses: tuple[Hypothesis, ...] = ()
    bound_formula: str = ""  # the explicit bound the toolkit checks, as a formula
    derivation: str = ""  # pointer into docs/derivations.md
    checks: list[Check] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "_", self.id.lower()).strip("_")

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"{self.id} has no check {name!r}; it has {[c.name for c in self.checks]}")

    def run(self, ctx: CheckContext, *, include_slow: bool = False) -> list[CheckResult]:
        return [c.run(ctx, self.id) for c in self.checks if include_slow or not c.slow]


_STATEMENTS: dict[str, Statement] = {}


def define_statement(**kwargs: Any) -> Statement:
    """Register a statement (once per id)."""
    stmt = Statement(**kwargs)
    if stmt.id in _STATEMENTS:
        raise ValueError(f"statement {stmt.id!r} is defined twice")
    _STATEMENTS[stmt.id] = stmt
    return stmt


def statement_check(
    statement_id: str, *, name: str, slow: bool = False, expected_violation: str | None = None
) -> Callable[[Callable[[CheckContext], CheckResult]], Callable]:
    """Decorator attaching a check to a defined statement (import the defining module first).

    ``expected_violation``: the counterexample file of a documented finding (see Check)."""

    def deco(func: Callable[[CheckContext], CheckResult]) -> Callable[[CheckContext], CheckResult]:
        stmt = _STATEMENTS[statement_id]
        if any(c.name == name for c in stmt.checks):
            raise ValueError(f"{statement_id} already has a check named {name!r}")
        stmt.checks.append(
            Check(name=name, func=func, slow=slow, expected_violation=expected_violation)
        )
        return func

    return deco


def _sort_key(stmt_id: str) -> tuple:
    nums = [int(x) for x in re.findall(r"\d+", stmt_id)]
    return (tuple(nums) if nums else (999,), stmt_id)


def load_all() -> None:
    """Import every module of verify.lemmas so that all statements and checks are registered."""
    import verify.lemmas as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_") and info.name != "registry":
            importlib.import_module(f"verify.lemmas.{info.name}")


def get_statement(statement_id: str) -> Statement:
    load_all()
    try:
        return _STATEMENTS[statement_id]
    except KeyError:
        known = ", ".join(s.id for s in all_statements())
        raise KeyError(f"unknown statement {statement_id!r}; known: {known}") from None


def all_statements() -> list[Statement]:
    """Every registered statement, in paper order (by its numbering)."""
    load_all()
    return sorted(_STATEMENTS.values(), key=lambda s: _sort_key(s.id))


def iter_checks(include_slow: bool = False) -> Iterator[tuple[Statement, Check]]:
    for stmt in all_statements():
        for c in stmt.checks:
            if include_slow or not c.slow:
                yield stmt, c


def run_check(statement_id: str, check_name: str, ctx: CheckContext | None = None) -> CheckResult:
    """Run one named check of one statement."""
    stmt = get_statement(statement_id)
    return stmt.check(check_name).run(ctx or CheckContext(), stmt.id)
