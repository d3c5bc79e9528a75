"""How obligations are discharged: z3 (nonlinear real arithmetic, exact), the arb
branch-and-bound (:mod:`verify.proofs.interval`), sympy (identities, limits, series).

Each constructor builds an :class:`~verify.proofs.core.Obligation` with its ``prove`` and
``refute_twin`` and registers it. A twin is refuted only by a concrete point that is checked
independently of the method that found it: the point's hypotheses hold and the twin's
conclusion fails, both decided in rigorous interval arithmetic at that point.

z3 encoding: every sympy symbol is a real variable; sqrt(x) and x^(p/q) become auxiliary
variables t >= 0 with t^2 = x (t^q = x^p); Abs, Max and Min become if-then-else terms. exp and
log are not polynomial: such steps go to the arb branch and bound, or are reduced to polynomial
ones by a stated substitution (E = e^R). The encoding and the z3 checks are
:mod:`verify.proofs.z3_encoding`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
import z3
from sympy.core.function import AppliedUndef

from verify.proofs.core import Obligation, Verdict, obligation
from verify.proofs.interval import Undefined, find_violation, point_value, prove_nonnegative

# the encoding's names the tests and callers import from here
from verify.proofs.z3_encoding import (  # noqa: F401
    _Z3,
    Z3_TIMEOUT_MS,
    _fmt_point,
    _z3_check,
    _z3_prove,
    _z3_refute,
    holds_at,
    side_conditions,
    z3_domain,
)

__all__ = ["Use", "arb_step", "check_uses", "custom_step", "holds_at", "sympy_identity", "z3_step"]


def _side_text(hyps: Sequence[sp.Basic], concl: sp.Basic) -> str:
    """The claim's side conditions, spelled out: the hypotheses' definedness is assumed with
    them, the conclusion's is proved from them."""
    hs = [c for h in hyps for c in side_conditions(h)]
    cs = side_conditions(concl)
    parts = []
    if hs:
        parts.append("hypotheses defined: " + ", ".join(map(str, dict.fromkeys(hs))))
    if cs:
        parts.append("conclusion defined (proved): " + ", ".join(map(str, cs)))
    return f" {{{'; '.join(parts)}}}" if parts else ""


@dataclass(frozen=True)
class Use:
    """A hypothesis ``hyp`` that stands for the conclusion of ``fact`` at the instance
    ``subst``: ``fact`` is an obligation (its claim) or an axiom (its scalar schema,
    :class:`~verify.proofs.core.Schema`); ``subst`` maps the cited claim's symbol names to
    expressions of the citing one, and every symbol of the cited claim must be given."""

    fact: str
    subst: Mapping[str, sp.Expr]
    hyp: sp.Basic


def _cited_claim(fact: str) -> tuple[tuple[sp.Basic, ...], sp.Basic]:
    """(hypotheses, conclusion) of a cited obligation or axiom (its scalar schema)."""
    from verify.proofs.core import AXIOMS, OBLIGATIONS

    ax = AXIOMS.get(fact)
    if ax is not None:
        if ax.schema is None:
            raise ValueError(f"{fact} has no scalar schema ({ax.no_schema or 'none given'})")
        return ax.schema.hyps, ax.schema.concl
    ob = OBLIGATIONS.get(fact)
    if ob is None:
        raise KeyError(f"no obligation or axiom {fact}")
    if ob.method == "z3" and "parts" in ob.meta:  # verify.proofs.positions: for every size
        if "schema" not in ob.meta:
            raise ValueError(f"{fact}: an induction on the size without a scalar schema")
        return ob.meta["schema"].hyps, ob.meta["schema"].concl
    if ob.method == "z3":
        # its hypotheses that stand for another obligation's conclusion were derived from the
        # rest when it was discharged (an obligation holds for every value of its domain), so
        # they are no premises; one that stands for an axiom stays a premise: an axiom's
        # schema holds only where its symbols mean what it says (C(2h, h), a log), which the
        # citing step must supply again
        stand = {u.hyp for u in ob.meta.get("uses", ()) if u.fact not in AXIOMS}
        return tuple(h for h in ob.meta["hyps"] if h not in stand), ob.meta["concl"]
    if ob.method == "sympy" and "lhs" in ob.meta:
        return (), sp.Eq(ob.meta["lhs"], ob.meta["rhs"])
    if ob.method == "arb":
        # proved on its box only: the box's sides are the premises a use must meet
        box = ob.meta["box"]
        sides = [
            r for s, (lo, hi) in box.items() for r in (s >= sp.Rational(lo), s <= sp.Rational(hi))
        ]
        return tuple(sides), ob.meta["concl"]
    raise ValueError(f"{fact} ({ob.method}) has no formal claim to instantiate")


def check_uses(hyps: Sequence[sp.Basic], uses: Sequence[Use]) -> Verdict | None:
    """None when every use is a checked instance; otherwise a ``failed`` verdict naming it.
    With D the hypotheses that stand for no fact (the domain; the facts are left out, so no
    use justifies itself), taken in order: D implies each premise of the cited claim at the
    instance (z3), and the cited conclusion at the instance (each relation of an ``And``), on
    its own (with its side conditions), implies the hypothesis (z3), which then joins D for the
    uses after it (a chain of facts in one step; a use never rests on itself or on a later
    one). The hypothesis is that conclusion at an instance: a weakened fact or a wrong instance
    fails here even where the domain would give the hypothesis anyway (z3 re-deriving a true
    fact from its premises checks no link). A cited obligation's premises are its hypotheses
    but those its own uses of other obligations stand for (derived when it was discharged); a
    hypothesis it takes from an axiom's schema stays a premise, since a schema holds only where
    its symbols mean what it says. A fact that cannot be instantiated (an unknown id, an axiom
    without a schema) is a ``failed`` verdict naming it."""
    stand = {u.hyp for u in uses}
    domain = [h for h in hyps if h not in stand]
    for u in uses:
        try:
            chyps, cconcl = _cited_claim(u.fact)
        except (KeyError, ValueError) as exc:
            return Verdict("failed", f"uses {u.fact}: {exc}")
        free = set().union(*(r.free_symbols for r in (*chyps, cconcl)))
        missing = sorted(s.name for s in free if s.name not in u.subst)
        if missing:
            return Verdict("failed", f"uses {u.fact}: no instance given for {', '.join(missing)}")
        sigma = {s: sp.sympify(u.subst[s.name]) for s in free}
        premises = [p.subs(sigma, simultaneous=True) for p in chyps]
        for p in premises:
            if _z3_check(domain, p)[1] != z3.unsat:
                return Verdict(
                    "failed", f"uses {u.fact}: its premise {p} does not follow from the domain"
                )
        inst = cconcl.subs(sigma, simultaneous=True)
        parts = list(inst.args) if isinstance(inst, sp.And) else [inst]
        if _z3_check(parts, u.hyp)[1] != z3.unsat:
            return Verdict("failed", f"uses {u.fact}: its conclusion {inst} does not give {u.hyp}")
        domain.append(u.hyp)
    return None


def z3_step(
    id: str,
    statement: str,
    step: str,
    doc: str,
    hyps: Iterable[sp.Basic],
    concl: sp.Basic,
    twin: sp.Basic,
    *,
    facts: Sequence[str] = (),
    note: str = "",
    pinned: Sequence[sp.Symbol] = (),
    uses: Sequence[Use] = (),
) -> Obligation:
    """A polynomial step: hypotheses imply the conclusion over the reals (z3); ``pinned``:
    variables the hypotheses are meant to fix to one value (any other pinned variable is an error);
    ``uses``: hypotheses that stand for another obligation's conclusion, each checked
    (:func:`check_uses`) before the step itself."""
    flat: list[sp.Basic] = []
    for h in hyps:
        flat.extend(h.args if isinstance(h, sp.And) else (h,))
    hyps = tuple(flat)
    uses = tuple(uses)
    for u in uses:
        if u.hyp not in hyps:
            raise ValueError(f"{id}: uses {u.fact} for {u.hyp}, which is not a hypothesis")
    used = "".join(
        f" [{u.hyp}: {u.fact} at {', '.join(f'{k} = {v}' for k, v in u.subst.items())}]"
        for u in uses
    )
    claim = (
        f"{' & '.join(map(str, hyps))} => {concl}"
        + _side_text(hyps, concl)
        + used
        + (f" [{note}]" if note else "")
    )

    def prove() -> Verdict:
        bad = check_uses(hyps, uses)
        return bad if bad is not None else _z3_prove(hyps, concl, pinned)

    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method="z3",
            claim=claim,
            twin_claim=str(twin),
            prove=prove,
            refute_twin=lambda: _z3_refute(hyps, twin),
            facts=tuple(dict.fromkeys((*facts, *(u.fact for u in uses)))),
            meta={
                "hyps": hyps,
                "concl": concl,
                "twin": twin,
                "pinned": tuple(pinned),
                "uses": uses,
            },
        )
    )


# ----------------------------------------------------------------------------- arb
def _gap(rel: sp.Basic) -> tuple[sp.Expr, bool]:
    """f with rel <=> f >= 0 (or f > 0, strict)."""
    if isinstance(rel, (sp.LessThan, sp.StrictLessThan)):
        return rel.rhs - rel.lhs, isinstance(rel, sp.StrictLessThan)
    if isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan)):
        return rel.lhs - rel.rhs, isinstance(rel, sp.StrictGreaterThan)
    raise ValueError(f"arb: an inequality, not {rel}")


def box_domain(box: Mapping, fixed: Iterable[sp.Symbol] = ()) -> Verdict | None:
    """None when every side of the box is a genuine interval lo < hi (or lo = hi for a
    variable declared ``fixed``); otherwise ``vacuous`` (a reversed side: the box is empty, and
    a claim over it says nothing) or ``degenerate`` (an undeclared zero-width side)."""
    keep = set(fixed)
    for sym, (lo, hi) in box.items():
        if lo > hi:
            return Verdict(
                "vacuous",
                f"{sym} in [{lo}, {hi}]: lo > hi, the box is empty (nothing is claimed)",
                {str(sym): f"[{lo}, {hi}]"},
            )
        if lo == hi and sym not in keep:
            return Verdict(
                "degenerate",
                f"{sym} in [{lo}, {hi}]: a zero-width side (declare it fixed if that is meant)",
                {str(sym): f"[{lo}, {hi}]"},
            )
    return None


def _arb_prove(
    box: Mapping, concl: sp.Basic, max_boxes: int, fixed: Iterable[sp.Symbol] = ()
) -> Verdict:
    bad = box_domain(box, fixed)
    if bad is not None:
        return bad
    f, strict = _gap(concl)
    res = prove_nonnegative(f, box, strict=strict, max_boxes=max_boxes)
    if res.proved:
        return Verdict("proved", f"arb branch and bound: {res.boxes} boxes")
    if res.counterexample is not None:
        return Verdict("failed", "arb: counterexample", _fmt_point(res.counterexample))
    return Verdict("unknown", f"arb: box budget ({max_boxes}) exhausted")


def _arb_refute(box: Mapping, twin: sp.Basic) -> Verdict:
    f, strict = _gap(twin)
    pt = find_violation(f, box, strict=strict)
    if pt is None:
        return Verdict("not refuted", "no grid point violates the twin")
    return Verdict("refuted", "grid point, checked in interval arithmetic", _fmt_point(pt))


def arb_step(
    id: str,
    statement: str,
    step: str,
    doc: str,
    box: Mapping[sp.Symbol, tuple],
    concl: sp.Basic,
    twin: sp.Basic,
    *,
    facts: Sequence[str] = (),
    substitution: str = "",
    max_boxes: int = 20000,
    fixed: Sequence[sp.Symbol] = (),
) -> Obligation:
    """A step with exp/log/sqrt on a compact box, by the arb branch and bound; ``fixed``:
    variables whose side is meant to be one value (any other zero-width side is an error, a
    reversed side always)."""
    box = {s: (Fraction(lo), Fraction(hi)) for s, (lo, hi) in box.items()}
    dom = ", ".join(f"{s} in [{lo}, {hi}]" for s, (lo, hi) in box.items())
    claim = f"{concl} for {dom}" + (f" ({substitution})" if substitution else "")
    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method="arb",
            claim=claim,
            twin_claim=str(twin),
            prove=lambda: _arb_prove(box, concl, max_boxes, fixed),
            refute_twin=lambda: _arb_refute(box, twin),
            facts=tuple(facts),
            meta={"box": box, "concl": concl, "twin": twin, "fixed": tuple(fixed)},
        )
    )


# ----------------------------------------------------------------------------- sympy
def _is_zero(e: sp.Expr) -> bool:
    for simp in (sp.expand, sp.cancel, sp.simplify):
        e = simp(e)
        if e == 0:
            return True
    return False


def _nonzero_point(diff: sp.Expr, positive: bool, seed: int) -> dict | None:
    """A seeded rational point where ``diff`` is certainly nonzero (interval arithmetic), or
    None; an unspecified function is taken to be ReLU (an identity in an unspecified function
    holds for every function, so one refutes it)."""
    diff = diff.replace(lambda x: isinstance(x, AppliedUndef), lambda x: sp.Max(x.args[0], 0))
    syms = sorted(diff.free_symbols, key=str)
    rng = random.Random(seed)
    for _ in range(50):
        pt = {
            s: Fraction(rng.randint(1, 6), 2) if positive else Fraction(rng.randint(-6, 6), 2)
            for s in syms
        }
        try:
            d = point_value(diff, pt)
        except Undefined:
            continue
        if not d.contains_zero():
            return pt
    return None


def sympy_identity(
    id: str,
    statement: str,
    step: str,
    doc: str,
    lhs: sp.Expr,
    rhs: sp.Expr,
    twin_rhs: sp.Expr,
    *,
    facts: Sequence[str] = (),
    positive: bool = True,
    seed: int = 0,
    instance: tuple[int, Callable[[sp.Expr], sp.Expr]] | None = None,
) -> Obligation:
    """An identity lhs = rhs (sympy); the twin is refuted at a seeded rational point (positive
    coordinates in [1/2, 3] with ``positive``, else in [-3, 3]). ``instance``: (n, f) for an
    identity of symbolic size (sums over S positions), f(expr) the expression at S = n
    (:func:`verify.proofs.positions.unroll`): the twin is refuted there, and an identity sympy
    cannot reduce to 0 is ``failed`` when it differs there at a point."""
    size, at = instance if instance is not None else (None, lambda e: e)
    where = f" at S = {size}" if size is not None else ""

    def prove() -> Verdict:
        if _is_zero(lhs - rhs):
            return Verdict("proved", "sympy: lhs - rhs simplifies to 0")
        pt = _nonzero_point(at(lhs - rhs), positive, seed) if size is not None else None
        if pt is not None:
            return Verdict("failed", f"lhs != rhs{where} at a rational point", _fmt_point(pt))
        return Verdict("unknown", "sympy could not simplify lhs - rhs to 0")

    def refute() -> Verdict:
        pt = _nonzero_point(at(lhs - twin_rhs), positive, seed)
        if pt is None:
            return Verdict("not refuted", "the twin agreed at every point tried")
        return Verdict("refuted", f"lhs != twin{where} at a rational point", _fmt_point(pt))

    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method="sympy",
            claim=f"{lhs} = {rhs}" + (" for every S >= 1" if size is not None else ""),
            twin_claim=f"{lhs} = {twin_rhs}",
            prove=prove,
            refute_twin=refute,
            facts=tuple(facts),
            meta={"lhs": lhs, "rhs": rhs, **({"instance": instance} if instance else {})},
        )
    )


def custom_step(
    id: str,
    statement: str,
    step: str,
    doc: str,
    method: str,
    claim: str,
    twin_claim: str,
    prove: Callable[[], Verdict],
    refute_twin: Callable[[], Verdict],
    *,
    facts: Sequence[str] = (),
    evidence: str = "symbolic",
) -> Obligation:
    """An obligation with its own discharge (sympy limits and series, the chain to the code)."""
    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method=method,
            claim=claim,
            twin_claim=twin_claim,
            prove=prove,
            refute_twin=refute_twin,
            facts=tuple(facts),
            evidence=evidence,
        )
    )
