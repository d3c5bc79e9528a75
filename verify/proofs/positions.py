"""Claims over every number of positions (softmax positions, parameter groups, norms), proved
for every size, not at one (docs/proofs.md, "Every size").

- :func:`induction`: a claim proved by induction on the size, each part (base, step
  S -> S + 1, close) a z3 claim over real variables; the twin (and, when a part fails, the claim
  itself) is attacked at a concrete size, where the claim is an ordinary z3 claim.
- :func:`sum_induction`: the common case, a claim about sums over S positions of per-position
  terms. The sums are the aggregate symbols; the invariant is kept from the empty sums (S = 0)
  by adding one position's terms (S -> S + 1, the definition of a finite sum), and the claim
  follows from the invariant at S and the final hypotheses (e.g. sum_j p_j = 1).
- :func:`unroll`: a symbolic-size expression (sympy ``Sum`` over ``IndexedBase`` terms, S a
  symbol) at a concrete S, its indexed terms plain symbols (``p[2]`` -> ``p2``): where the twin
  of a symbolic-size identity is refuted.

A part that does not follow is not a disproof (the invariant may be too weak): the verdict is
``failed`` only with a counterexample to the claim at the concrete size, else ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import sympy as sp

from verify.proofs.core import Obligation, Verdict, obligation
from verify.proofs.methods import Use, check_uses
from verify.proofs.z3_encoding import _z3_prove, _z3_refute, z3_domain

__all__ = [
    "INSTANCE_SIZE",
    "SIZE",
    "Instance",
    "Part",
    "Schema",
    "induction",
    "sum_induction",
    "unroll",
]

SIZE = sp.Symbol("S", integer=True, positive=True)  # the number of positions in a Sum
INSTANCE_SIZE = 3  # where a twin is refuted (any size with a counterexample refutes)


def unroll(expr: sp.Expr, size: int, n: sp.Symbol = SIZE) -> sp.Expr:
    """``expr`` at ``n`` = ``size``: its sums written out, ``x[j]`` -> the symbol ``xj``."""
    out = sp.sympify(expr).subs(n, size).doit()
    return out.replace(
        lambda e: isinstance(e, sp.Indexed),
        lambda e: sp.Symbol(f"{e.base}{e.indices[0]}", real=True),
    )


@dataclass(frozen=True)
class Part:
    """One part of an induction: ``hyps`` imply each of ``goals`` (z3)."""

    name: str
    hyps: tuple[sp.Basic, ...]
    goals: tuple[sp.Basic, ...]
    pinned: tuple[sp.Symbol, ...] = ()  # fixed by a hypothesis on purpose (sum_j p_j = 1)


@dataclass(frozen=True)
class Schema:
    """A claim for every size over scalar symbols: ``hyps`` => ``concl``, each symbol of
    ``symbols`` (name -> what it stands for) a sum over the positions, a product over the
    norms, ... The induction proves it for those values; that a citing step's expression is
    that sum is stated in the citing claim, not checked (as for an axiom's schema)."""

    hyps: tuple[sp.Basic, ...]
    concl: sp.Basic
    symbols: Mapping[str, str]


@dataclass(frozen=True)
class Instance:
    """The claim at a concrete size (``name`` = ``size``): ``hyps`` => ``concl``; ``twin`` the
    weakened claim there."""

    size: int
    hyps: tuple[sp.Basic, ...]
    concl: sp.Basic
    twin: sp.Basic
    name: str = "S"

    @property
    def where(self) -> str:
        return f"{self.name} = {self.size}"


def _part_verdict(part: Part) -> Verdict:
    for goal in part.goals:
        if goal is sp.false:
            return Verdict("failed", f"{part.name}: the goal is false")
        v = _z3_prove(part.hyps, goal, part.pinned)
        if v.status != "proved":
            return Verdict(v.status, f"{part.name}: {goal}: {v.detail}", v.point)
    return Verdict("proved", part.name)


def induction(
    id: str,
    statement: str,
    step: str,
    doc: str,
    parts: Sequence[Part],
    instance: Instance,
    claim: str,
    *,
    facts: Sequence[str] = (),
    spec: Mapping[str, object] | None = None,
    schema: Schema | None = None,
    uses: Sequence[Use] = (),
    use_hyps: Sequence[sp.Basic] = (),
) -> Obligation:
    """A claim for every size by induction (module doc): proved when the claim at the concrete
    size has a genuine domain (z3) and every part's goals follow from its hypotheses (z3);
    the twin is refuted at the concrete size (a z3 model checked in interval arithmetic).
    ``spec``: how it was built (:func:`sum_induction`'s arguments), kept in ``meta``;
    ``schema``: the claim over scalar symbols that stand for the sums (what a citing step's
    ``uses=`` instantiates). ``uses``: hypotheses among ``use_hyps`` (a position's terms, the
    global ones) that stand for a fact at an instance, checked (:func:`check_uses`) before the
    parts."""
    parts, uses = tuple(parts), tuple(uses)
    for u in uses:
        if u.hyp not in use_hyps:
            raise ValueError(f"{id}: uses {u.fact} for {u.hyp}, which is not a hypothesis")

    def prove() -> Verdict:
        bad = check_uses(tuple(use_hyps), uses)
        if bad is not None:
            return bad
        bad = z3_domain(instance.hyps)
        if bad is not None:
            return Verdict(bad.status, f"at {instance.where}: {bad.detail}", bad.point)
        for part in parts:
            v = _part_verdict(part)
            if v.status in ("vacuous", "degenerate"):
                return v
            if v.status != "proved":
                at = _z3_prove(instance.hyps, instance.concl)
                if at.status == "failed":
                    return Verdict(
                        "failed",
                        f"the claim fails at {instance.where} ({v.detail})",
                        at.point,
                    )
                return Verdict("unknown", f"{v.detail}; no counterexample at {instance.where}")
        names = ", ".join(p.name for p in parts)
        return Verdict("proved", f"z3, induction on the size: {names} proved")

    def refute() -> Verdict:
        v = _z3_refute(instance.hyps, instance.twin)
        return Verdict(v.status, f"at {instance.where}: {v.detail}", v.point)

    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method="z3",
            claim=claim,
            twin_claim=f"{instance.twin} (at {instance.where}: the weakened claim)",
            prove=prove,
            refute_twin=refute,
            facts=tuple(dict.fromkeys((*facts, *(u.fact for u in uses)))),
            meta={
                "parts": parts,
                **({"uses": uses, "use_hyps": tuple(use_hyps)} if uses else {}),
                "instance": instance,
                "spec": dict(spec or {}),
                **({"schema": schema} if schema is not None else {}),
            },
        )
    )


def _constants(rels: Sequence[sp.Basic]) -> tuple[sp.Symbol, ...]:
    """The symbols an equation sets to a number (a sum fixed by a final hypothesis)."""
    return tuple(
        x
        for r in rels
        if isinstance(r, sp.Equality) and (r.lhs.is_number or r.rhs.is_number)
        for x in sorted(r.free_symbols, key=str)
    )


def _conj(rels: Sequence[sp.Basic], empty: str) -> str:
    return ", ".join(map(str, rels)) or empty


def sum_induction(
    id: str,
    statement: str,
    step: str,
    doc: str,
    *,
    terms: Sequence[sp.Symbol],
    term_hyps: Sequence[sp.Basic],
    sums: Mapping[sp.Symbol, sp.Expr],
    invariant: Sequence[sp.Basic],
    concl: sp.Basic,
    twin: sp.Basic | Callable[[list[dict[sp.Symbol, sp.Symbol]]], sp.Basic],
    global_hyps: Sequence[sp.Basic] = (),
    final: Sequence[sp.Basic] = (),
    facts: Sequence[str] = (),
    note: str = "",
    size: int = INSTANCE_SIZE,
    cite_hyps: Sequence[sp.Basic] = (),
    uses: Sequence[Use] = (),
) -> Obligation:
    """For every S >= 0 and positions j = 1..S whose ``terms`` satisfy ``term_hyps``: with each
    aggregate X = sum_j sums[X] (at position j), ``global_hyps`` and ``final`` imply ``concl``.

    Proof: ``invariant`` holds for the empty sums (base, under ``global_hyps``), is kept when
    one position is added (step: X -> X + sums[X], under ``term_hyps`` for the new position),
    and with ``final`` gives ``concl`` (close). ``twin``: a weakened conclusion over the
    aggregates, or a function of the positions' symbols (at the concrete size). Its
    :class:`Schema` (what ``uses=`` instantiates): ``global_hyps``, ``final`` and ``cite_hyps``
    (facts of the sums a citing step must show, e.g. sum_j L_j^2 >= 0 under a root) =>
    ``concl``. ``uses``: term or global hypotheses that stand for a fact at an instance in a
    position's terms (a bound applied at each position, then summed)."""
    glob, th, inv = tuple(global_hyps), tuple(term_hyps), tuple(invariant)
    zero = dict.fromkeys(sums, sp.S.Zero)
    grown = {x: x + t for x, t in sums.items()}
    parts = (
        Part("base S = 0", glob, tuple(r.subs(zero, simultaneous=True) for r in inv)),
        Part("step S -> S + 1", (*glob, *th, *inv),
             tuple(r.subs(grown, simultaneous=True) for r in inv)),
        Part("close", (*glob, *inv, *final), (concl,), _constants(final)),
    )  # fmt: skip
    positions = [{t: sp.Symbol(f"{t.name}{j + 1}", real=True) for t in terms} for j in range(size)]
    total = {
        x: sp.Add(*(t.subs(pos, simultaneous=True) for pos in positions)) for x, t in sums.items()
    }
    inst_hyps = (
        *glob,
        *(h.subs(pos, simultaneous=True) for pos in positions for h in th),
        *(f.subs(total, simultaneous=True) for f in final),
    )
    inst_twin = twin(positions) if callable(twin) else twin.subs(total, simultaneous=True)
    instance = Instance(size, inst_hyps, concl.subs(total, simultaneous=True), inst_twin)
    defs = ", ".join(f"{x} = sum_j {t}" for x, t in sums.items())
    claim = (
        f"every S >= 0, positions j = 1..S with {_conj(th, 'any real terms')} (each term at"
        f" position j): {defs}; {_conj((*glob, *final), 'nothing')} => {concl} [induction on S:"
        f" invariant {_conj(inv, 'none')};"
        " base S = 0, step S -> S + 1, close]" + (f" [{note}]" if note else "")
    )
    spec = {
        "terms": terms, "term_hyps": th, "sums": dict(sums), "invariant": inv, "concl": concl,
        "twin": twin, "global_hyps": glob, "final": tuple(final), "note": note, "size": size,
        "cite_hyps": tuple(cite_hyps),
    }  # fmt: skip
    each = f" over j = 1..S, each position with {_conj(th, 'any real terms')}"
    meaning = {x.name: f"sum_j {t}{each}" for x, t in sums.items()}
    schema = Schema((*glob, *final, *cite_hyps), concl, meaning)
    return induction(
        id, statement, step, doc, parts, instance, claim, facts=facts, spec=spec, schema=schema,
        uses=uses, use_hyps=(*glob, *th),
    )  # fmt: skip
