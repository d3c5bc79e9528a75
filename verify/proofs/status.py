"""Earned status: what each obligation's evidence is, and what each statement has earned
through everything it uses (docs/proofs.md, "Status earned").

An obligation's *class*: ``genuine`` (z3 or sympy over its whole stated domain), ``instance``
(a fixed size: D = 3, K = 4, N <= 3, ...; :data:`INSTANCE`), ``box`` (arb on a
compact box), ``chain proved`` (the code equals the composition symbolically), ``chain
sampled`` (at seeded points). Its *evidence* on the scale :data:`RANKS` (strongest first):
proved < instance < box < sampled chain < prose < axiom-only < not discharged < failed. A
statement is
``proved`` only when every obligation of it, and every obligation those cite (``facts``,
transitively, whichever statement owns it), is proved over its domain; otherwise its status is
the weakest evidence on that path (a prose step of it counts as ``prose``; a statement with
steps in prose only and no obligation is ``prose``). Statement edges are the citations
between statements' obligations (:func:`statement_uses`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from verify.proofs.citations import checked_counts
from verify.proofs.core import AXIOMS, OBLIGATIONS, PROSE, Obligation, Outcome

__all__ = [
    "INSTANCE",
    "RANKS",
    "citation_counts",
    "earned_statuses",
    "obligation_class",
    "obligation_evidence",
    "statement_uses",
    "trust_base",
    "weakest",
]

RANKS = (
    "proved",
    "instance",
    "box",
    "sampled chain",
    "prose",
    "axiom-only",
    "not discharged",  # a partial run (report --only): some obligation on the path was not run
    "failed",
)

# obligations stated at a fixed size (the size): the general case follows by the same step,
# but what is checked is this instance
INSTANCE: dict[str, str] = {
    "thm_4_5.series_order": "every (D, L) the toolkit runs: Thm 4.5's SERIES_GRID, Cor 4.6's",
    "thm_4_5.series_convergence": "every (D, L) the toolkit runs: SERIES_GRID, Cor 4.6's",
    "hr_cor_5.edge_symmetry": "every f on N = 3 bits",
}


def obligation_class(ob: Obligation) -> str:
    """genuine / instance / box / chain proved / chain sampled (module doc)."""
    if ob.method == "chain":
        # "sizes": symbolic, with a size enumerated (CHAIN_SIZES says which); "bnb": branch and
        # bound over the whole stated domain (chain proved), "subbox": over a stated sub-box
        return {"points": "chain sampled", "sizes": "instance", "subbox": "box"}.get(
            ob.evidence, "chain proved"
        )
    if ob.method == "arb":
        return "box"
    if ob.id in INSTANCE:
        return "instance"
    return "genuine"


_EVIDENCE = {
    "genuine": "proved",
    "chain proved": "proved",
    "instance": "instance",
    "box": "box",
    "chain sampled": "sampled chain",
}


def obligation_evidence(ob: Obligation) -> str:
    """The obligation's own evidence on :data:`RANKS` (when it holds)."""
    return _EVIDENCE[obligation_class(ob)]


def weakest(statuses: Iterable[str]) -> str:
    """The weakest of some statuses on :data:`RANKS` ("proved" for none)."""
    return max(statuses, key=RANKS.index, default="proved")


def statement_uses(obligations: Iterable[Obligation] | None = None) -> dict[str, list[str]]:
    """statement -> the other statements whose obligations its obligations cite."""
    obs = list(OBLIGATIONS.values() if obligations is None else obligations)
    owner = {ob.id: ob.statement for ob in OBLIGATIONS.values()}
    out: dict[str, set[str]] = {}
    for ob in obs:
        deps = out.setdefault(ob.statement, set())
        deps |= {owner[f] for f in ob.facts if f in owner and owner[f] != ob.statement}
    return {st: sorted(d) for st, d in out.items()}


def _own(ids: Sequence[str], prose: Sequence[str], ok: Mapping[str, bool]) -> tuple[str, str]:
    """(weakest own evidence, the obligation or prose step holding it)."""
    items = [
        (
            obligation_evidence(OBLIGATIONS[i])
            if ok.get(i)
            else ("failed" if i in ok else "not discharged"),
            i,
        )
        for i in ids
    ]
    items += [("prose", p) for p in prose]
    if not items:
        return "axiom-only", ""
    worst = max(items, key=lambda it: RANKS.index(it[0]))
    return worst if worst[0] != "proved" else ("proved", "")  # nothing holds a proof back


def earned_statuses(
    outcomes: Sequence[Outcome], statements: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """statement -> {"status": earned with the chain to the code, "derivation": earned by the
    derivation steps alone (chains left out), "own": its own weakest evidence, "weakest": the
    obligation or prose step (or the statement it uses) holding the status, "uses"}. An
    obligation not among ``outcomes`` is "not discharged" (weaker than any evidence, not
    failed: a partial run says so). Computed as the
    fixpoint of status(st) = weakest(own(st), status(u) for u it uses), so a cycle of uses
    (Lemma 2.9 and Lemma 3.1 cite each other's steps) shares its weakest evidence."""
    ok = {o.obligation.id: o.ok for o in outcomes}
    by_st: dict[str, list[str]] = {}
    for ob in OBLIGATIONS.values():
        by_st.setdefault(ob.statement, []).append(ob.id)
    prose: dict[str, list[str]] = {}
    for p in PROSE.values():
        prose.setdefault(p.statement, []).append(p.id)
    uses = statement_uses()
    every = sorted(set(by_st) | set(prose))

    def fixpoint(select) -> dict[str, tuple[str, str]]:
        st_of = {st: _own([i for i in by_st.get(st, []) if select(i)], prose.get(st, []), ok)
                 for st in every}  # fmt: skip
        changed = True
        while changed:
            changed = False
            for st in every:
                for u in uses.get(st, []):
                    if RANKS.index(st_of[u][0]) > RANKS.index(st_of[st][0]):
                        st_of[st] = (st_of[u][0], f"{u} ({st_of[u][1]})" if u != st else "")
                        changed = True
        return st_of

    full = fixpoint(lambda i: True)
    deriv = fixpoint(lambda i: OBLIGATIONS[i].method != "chain")
    sts = list(statements) if statements is not None else every
    out: dict[str, dict[str, Any]] = {}
    for st in sts:
        own = _own(by_st.get(st, []), prose.get(st, []), ok)
        status, where = full.get(st, own)
        out[st] = {
            "status": status,
            "derivation": deriv.get(st, own)[0],
            "own": own[0],
            "weakest": where,
            "uses": uses.get(st, []),
        }
    return out


def trust_base(statement: str) -> dict[str, list[str]]:
    """What a statement's status rests on, over the statement and every statement it uses:
    the named axioms (attacked, not proved; ``axioms_cited_only``: those some step cites with
    no ``uses=`` checking its hypothesis against the axiom's schema; ``axioms_no_schema``:
    those with no scalar schema at all, each with its reason in the registry), the solvers
    that discharged its obligations (z3, the arb branch and bound, sympy, the chain
    comparisons), the obligations checked only at sampled points, those at fixed sizes or on a
    compact box, and the prose steps."""
    uses = statement_uses()
    todo, seen = [statement], set()
    while todo:
        cur = todo.pop()
        if cur not in seen:
            seen.add(cur)
            todo.extend(uses.get(cur, ()))
    obs = [ob for ob in OBLIGATIONS.values() if ob.statement in seen]
    classes = {ob.id: obligation_class(ob) for ob in obs}
    axioms = sorted({f for ob in obs for f in ob.facts if f.startswith("axiom.")})
    linked = {ob.id: {u.fact for u in ob.meta.get("uses", ())} for ob in obs}
    return {
        "statements": sorted(seen),
        "axioms": axioms,
        "axioms_cited_only": sorted(
            {f for ob in obs for f in ob.facts if f in axioms and f not in linked[ob.id]}
        ),
        "axioms_no_schema": [a for a in axioms if getattr(AXIOMS.get(a), "schema", None) is None],
        "solvers": sorted({ob.method for ob in obs}),
        "sampled": sorted(i for i, c in classes.items() if c == "chain sampled"),
        "instances": sorted(i for i, c in classes.items() if c == "instance"),
        "boxes": sorted(i for i, c in classes.items() if c == "box"),
        "prose": sorted(p.id for p in PROSE.values() if p.statement in seen),
    }


def citation_counts(obligations: Iterable[Obligation] | None = None) -> dict[str, list[int]]:
    """How many citations (``facts`` entries) are checked by a ``uses=``: kind ("obligation",
    "axiom") -> [checked, total] (:func:`verify.proofs.citations.checked_counts`)."""
    return checked_counts(obligations)
