"""The statement registry: one source of truth per formal statement.

A :class:`Statement` holds the paper's id ("Lemma 3.2"), the statement in words and formula (a
*reconstruction*: the papers' full texts were not at hand), its hypotheses, its explicit bound
and its checks. ``theorems/`` and the report both read this registry; nothing is written twice.
Each statement lives in its own module under ``verify/statements/``::

    LEMMA_3_2 = define_statement(
        id="Lemma 3.2", title="Deterministic blowup bound (eps > 0)",
        statement=r"For eps > 0, z <= eps^{-1/2}, so beta <= (1 + eps^{-1/2})^K.",
        confidence="[note]", hypotheses=(EPS_POSITIVE,),
        bound_formula=r"(1 + eps^{-1/2})^K", derivation="docs/derivations.md#lemma-32",
    )

    @LEMMA_3_2.check("random parameters of the four init schemes", policy=Policy.STRICT)
    def random_parameters(ctx: CheckContext) -> Outcome: ...

A check measures a quantity, computes the bound, and returns an :class:`Outcome` whose rows hold
both; it never hard-codes the expected value and never sets its own status: the registry stamps
the statement id and check name, decides the status with the declared policy and saves a
violation's counterexample through one function.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from verify.plugins import STATEMENT_GROUP, load_plugins
from verify.registry.context import CheckContext
from verify.registry.counterexamples import save_counterexample
from verify.registry.policy import ACCEPTED, Policy, decide_status
from verify.registry.results import CheckResult, Outcome, Status


def slugify(text: str) -> str:
    """Lower-case, runs of non-alphanumerics as one underscore: "Lemma 3.2" -> "lemma_3_2"."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis of a statement, with an optional predicate on a check's setting."""

    name: str
    description: str
    predicate: Callable[..., bool] | None = None


@dataclass(frozen=True)
class Finding:
    """A documented finding: the check is *expected* to report a violation, reproduced from the
    saved counterexample (path from the repository root). Like a strict xfail: the report shows
    it as known and fails if it stops reproducing; the theorem suite makes it a strict xfail."""

    counterexample: str
    reason: str


@dataclass
class Check:
    name: str
    func: Callable[[CheckContext], Outcome]
    policy: Policy = Policy.STRICT
    slow: bool = False  # only in --runslow / report --full
    finding: Finding | None = None
    # optional packages the check needs (e.g. ("torch",)): without them it reports undecided
    # with the reason, and the theorem suite skips it
    requires: tuple[str, ...] = ()
    # checks with one ``shares`` tag reuse one in-process result (e.g. the trained models of
    # verify.experiments.train.check_models): a parallel report runs them in one worker
    shares: str = ""

    @property
    def missing(self) -> list[str]:
        """The packages of ``requires`` that are not installed."""
        import importlib.util

        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    @property
    def expected_violation(self) -> str | None:
        """The counterexample file of a documented finding, else None."""
        return self.finding.counterexample if self.finding else None

    @property
    def accepted(self) -> tuple[Status, ...]:
        """Statuses the theorem suite accepts (a finding expects VIOLATED instead)."""
        return ACCEPTED[self.policy]

    def run(self, ctx: CheckContext, statement: Statement) -> CheckResult:
        """Run the check; stamp, decide the status, save a violation's counterexample."""
        start = time.perf_counter()
        outcome = self.func(ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(
                f"check {self.name!r} of {statement.id} returned {type(outcome).__name__},"
                " expected an Outcome"
            )
        status = decide_status(self.policy, outcome.rows, outcome.unsettled)
        saved = None
        if status is Status.VIOLATED and outcome.counterexample is not None:
            saved = save_counterexample(
                outcome.counterexample,
                statement_id=statement.id,
                check_name=self.name,
                default_stem=f"{statement.slug}_{slugify(self.name)}",
                seed=ctx.seed,
                failing=[r for r in outcome.rows if not r.ok],
            )
        return CheckResult(
            statement_id=statement.id,
            check_name=self.name,
            status=status,
            rows=outcome.rows,
            arithmetic=outcome.arithmetic,
            seed=ctx.seed,
            parameters=outcome.parameters,
            notes=outcome.notes,
            counterexample=saved,
            figures=outcome.figures,
            runtime_s=time.perf_counter() - start,
        )


@dataclass
class Statement:
    id: str  # as in the paper: "Lemma 3.2", "Cor 5.1", "Thm 4.5", "Conj 5.5", "Sec 5 ..."
    title: str
    statement: str  # words and formula (markdown with $...$); a reconstruction
    paper: str = "arXiv 2606.08768"
    confidence: str = "[note]"  # [paper] / [note] / [inferred], as in docs/reference
    hypotheses: tuple[Hypothesis, ...] = ()
    bound_formula: str = ""  # the explicit bound the toolkit checks, as a formula
    derivation: str = ""  # pointer into docs/derivations*.md
    checks: list[Check] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return slugify(self.id)

    def check(
        self,
        name: str,
        *,
        policy: Policy = Policy.STRICT,
        slow: bool = False,
        finding: Finding | None = None,
        requires: tuple[str, ...] = (),
        shares: str = "",
    ) -> Callable[[Callable[[CheckContext], Outcome]], Callable[[CheckContext], Outcome]]:
        """Decorator attaching a check (``policy`` decides its status from its rows;
        ``requires`` names optional packages it needs; ``shares`` tags checks that reuse one
        in-process result, run in one worker by a parallel report)."""

        def deco(func: Callable[[CheckContext], Outcome]) -> Callable[[CheckContext], Outcome]:
            if any(c.name == name for c in self.checks):
                raise ValueError(f"{self.id} already has a check named {name!r}")
            self.checks.append(
                Check(name, func, Policy(policy), slow, finding, tuple(requires), str(shares))
            )
            return func

        return deco

    def get_check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"{self.id} has no check {name!r}; it has {[c.name for c in self.checks]}")

    def run(self, ctx: CheckContext, *, include_slow: bool = False) -> list[CheckResult]:
        return [c.run(ctx, self) for c in self.checks if include_slow or not c.slow]


_STATEMENTS: dict[str, Statement] = {}
STATEMENT_PACKAGES: list[str] = ["verify.statements"]  # packages whose modules define statements


def define_statement(**kwargs: Any) -> Statement:
    """Register a statement (once per id)."""
    stmt = Statement(**kwargs)
    if stmt.id in _STATEMENTS:
        raise ValueError(f"statement {stmt.id!r} is defined twice")
    _STATEMENTS[stmt.id] = stmt
    return stmt


def _sort_key(stmt_id: str) -> tuple:
    nums = [int(x) for x in re.findall(r"\d+", stmt_id)]
    return (tuple(nums) if nums else (999,), stmt_id)


def load_all() -> None:
    """Import every statement module: each public module of ``STATEMENT_PACKAGES``, then the
    modules of installed packages (entry-point group "verify.statements") and ``--import``."""
    for package_name in STATEMENT_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_") and not info.ispkg:
                importlib.import_module(f"{package_name}.{info.name}")
    if STATEMENT_PACKAGES:  # an emptied list isolates the registry (tests)
        load_plugins(STATEMENT_GROUP)


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
    return stmt.get_check(check_name).run(ctx or CheckContext(), stmt)
