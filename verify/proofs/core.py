"""Proof obligations, named axioms and their registry (the blueprint's nodes).

An :class:`Obligation` is one step of a derivation (docs/derivations*.md) stated over real
variables: hypotheses and a conclusion (sympy), the facts it relies on (other obligations and
named axioms), the method that discharges it, and a *weakened twin* (the conclusion with a factor
halved or a term dropped) that the same method must refute with a concrete point. An
:class:`Axiom` is a cited external fact (Cauchy-Schwarz, Popoviciu, a union bound, ...): never
checked here, never silently assumed, always named with its reference.

Statuses: an obligation is ``proved``, ``failed`` (a counterexample to the claim),
``vacuous`` (its domain is empty: unsatisfiable hypotheses, a box with lo > hi), ``degenerate``
(its domain is one value of some variable that was not declared so) or ``unknown`` (the method
gave up: time or box budget); its twin is ``refuted`` (with the
counterexample point) or ``not refuted``. Chain obligations (method ``chain``) compare a coded
function of ``verify.theory`` with the composition of the steps; their status says "proved"
when the comparison holds at every tested point (``evidence`` = "points": a numerical check in
ball arithmetic at seeded points) or symbolically (``evidence`` = "symbolic").
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AXIOMS",
    "METHODS",
    "OBLIGATIONS",
    "PROSE",
    "Axiom",
    "Obligation",
    "Outcome",
    "Prose",
    "Schema",
    "Verdict",
    "axiom",
    "obligation",
    "prose",
    "scratch_registry",
]

METHODS = ("z3", "arb", "sympy", "chain")


@dataclass(frozen=True)
class Verdict:
    """What a method said: ``status`` (proved / failed / unknown for a claim; refuted /
    not refuted for a twin), a one-line ``detail`` and a counterexample ``point``."""

    status: str
    detail: str = ""
    point: dict[str, Any] | None = None


@dataclass(frozen=True)
class Schema:
    """An axiom's scalar form, the claim a citing step instantiates (``uses=``,
    :func:`~verify.proofs.methods.check_uses`): sympy ``hyps`` => ``concl`` (a relation or an
    ``And`` of relations) over scalar symbols whose meaning ``symbols`` gives (name -> what it
    stands for: a norm, an inner product, a probability). ``instances(rng, n)`` computes those
    scalars (name -> array) from draws of the axiom's attack with the same generator, so the
    schema is tested to be the image of the attacked statement
    (:func:`~verify.proofs.axiom_schemas.schema_violation`). What a substitution means (that
    the citing step's expression is that norm) is stated in the claim, not checked."""

    symbols: Mapping[str, str]
    hyps: tuple[Any, ...]
    concl: Any
    instances: Callable[[Any, int], Mapping[str, Any]]


@dataclass(frozen=True)
class Axiom:
    """A cited external fact, used by obligations and never proved here, but attacked:
    ``attack(rng, n)`` draws n instances of the axiom as stated (every hypothesis it names
    holds) and returns n relative violations, (lhs - rhs) / (1 + |lhs| + |rhs|) for an
    inequality lhs <= rhs (|lhs - rhs| / ... for an equality): > 1e-9 is a counterexample
    (tests/test_proofs_axioms.py runs >= 10^4 draws under Hypothesis). ``schema``: its scalar
    form (:class:`Schema`); an axiom without one says why in ``no_schema``."""

    id: str
    name: str
    text: str
    reference: str
    attack: Callable[[Any, int], Any] | None = None
    schema: Schema | None = None
    no_schema: str = ""


@dataclass(frozen=True)
class Prose:
    """A step left in prose: what it is and why it is not an obligation."""

    id: str
    statement: str
    step: str
    reason: str


@dataclass(frozen=True)
class Obligation:
    """One derivation step as a machine-checkable claim (module doc)."""

    id: str
    statement: str
    step: str
    doc: str
    method: str
    claim: str
    twin_claim: str
    prove: Callable[[], Verdict]
    refute_twin: Callable[[], Verdict]
    facts: tuple[str, ...] = ()
    evidence: str = "symbolic"  # chain obligations: "points" when checked at seeded points
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """The discharge of one obligation: its verdict, its twin's, and the time both took."""

    obligation: Obligation
    verdict: Verdict
    twin: Verdict
    seconds: float

    @property
    def ok(self) -> bool:
        return self.verdict.status == "proved" and self.twin.status == "refuted"

    def as_dict(self) -> dict[str, Any]:
        ob = self.obligation
        return {
            "id": ob.id,
            "statement": ob.statement,
            "step": ob.step,
            "method": ob.method,
            "status": self.verdict.status,
            "detail": self.verdict.detail,
            "twin": self.twin.status,
            "twin_point": self.twin.point,
            "twin_detail": self.twin.detail,
            "claim": ob.claim,
            "twin_claim": ob.twin_claim,
            "facts": list(ob.facts),
            "uses": list(dict.fromkeys(u.fact for u in ob.meta.get("uses", ()))),
            "evidence": ob.evidence,
            "doc": ob.doc,
            "seconds": round(self.seconds, 4),
        }


OBLIGATIONS: dict[str, Obligation] = {}
AXIOMS: dict[str, Axiom] = {}
PROSE: dict[str, Prose] = {}


def obligation(ob: Obligation) -> Obligation:
    """Register ``ob`` (ids are unique)."""
    if ob.id in OBLIGATIONS or ob.id in AXIOMS:
        raise ValueError(f"duplicate obligation id {ob.id}")
    if ob.method not in METHODS:
        raise ValueError(f"{ob.id}: unknown method {ob.method}")
    OBLIGATIONS[ob.id] = ob
    return ob


def axiom(
    id: str,
    name: str,
    text: str,
    reference: str,
    attack: Callable[[Any, int], Any] | None = None,
    *,
    schema: Schema | None = None,
    no_schema: str = "",
) -> Axiom:
    """Register a named axiom with its falsification attack and its scalar schema, or the
    reason it has none (see :class:`Axiom`)."""
    if id in AXIOMS or id in OBLIGATIONS:
        raise ValueError(f"duplicate axiom id {id}")
    if schema is not None and no_schema:
        raise ValueError(f"{id}: a schema and a reason for having none")
    AXIOMS[id] = Axiom(id, name, text, reference, attack, schema, no_schema)
    return AXIOMS[id]


def prose(id: str, statement: str, step: str, reason: str) -> Prose:
    """Register a step left in prose, with the reason."""
    PROSE[id] = Prose(id, statement, step, reason)
    return PROSE[id]


def discharge(ob: Obligation) -> Outcome:
    """Run an obligation and its twin; an exception is an ``unknown`` verdict naming it."""
    start = time.perf_counter()
    verdicts = []
    for fn in (ob.prove, ob.refute_twin):
        try:
            verdicts.append(fn())
        except Exception as exc:  # a method that raises decides nothing
            status = "unknown" if fn is ob.prove else "not refuted"
            verdicts.append(Verdict(status, f"{type(exc).__name__}: {exc}"))
    return Outcome(ob, verdicts[0], verdicts[1], time.perf_counter() - start)


@contextlib.contextmanager
def scratch_registry() -> Iterator[None]:
    """Register obligations, axioms and prose steps for a while (a test's attempt, a user's
    trial step): the registry is restored on exit."""
    saved = (dict(OBLIGATIONS), dict(AXIOMS), dict(PROSE))
    try:
        yield
    finally:
        for reg, old in zip((OBLIGATIONS, AXIOMS, PROSE), saved, strict=True):
            reg.clear()
            reg.update(old)
