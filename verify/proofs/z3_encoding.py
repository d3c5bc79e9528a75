"""z3 for the proof obligations (:mod:`verify.proofs.methods`): the sympy -> z3 encoding, and the
checks built on it (a domain is genuine, a conclusion follows, a twin is refuted at a z3 model
checked in interval arithmetic).

z3 encoding: every sympy symbol is a real variable; sqrt(x) and x^(p/q) become auxiliary
variables t >= 0 with t^2 = x (t^q = x^p); Abs, Max and Min become if-then-else terms. exp and
log are not polynomial: such steps go to the arb branch and bound, or are reduced to polynomial
ones by a stated substitution (E = e^R).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import sympy as sp
import z3

from verify.proofs.core import Verdict
from verify.proofs.interval import Undefined, point_value

__all__ = ["Z3_TIMEOUT_MS", "holds_at", "side_conditions", "z3_domain"]

Z3_TIMEOUT_MS = 30_000


# ----------------------------------------------------------------------------- sympy -> z3
def side_conditions(e: sp.Basic) -> list[sp.Basic]:
    """Where ``e`` is defined, as relations: every radicand (the base of a non-integer power)
    >= 0 (> 0 under a negative power), every divisor (the base of a negative integer power)
    != 0, every log's argument > 0. Syntactic, in the order met, without repeats."""
    out: list[sp.Basic] = []

    def add(r: sp.Basic) -> None:
        if r is not sp.true and r not in out:
            out.append(r)

    for node in sp.preorder_traversal(e):
        if isinstance(node, sp.Pow):
            b, x = node.args
            if x.is_Rational and not x.is_Integer:
                add(sp.Gt(b, 0) if x < 0 else sp.Ge(b, 0))
            elif x.is_Integer and x < 0:
                add(sp.Ne(b, 0))
        elif isinstance(node, sp.log):
            add(sp.Gt(node.args[0], 0))
    return out


class _Z3:
    """The encoding of one check, in a z3 context of its own: a model z3 returns then depends
    on that check alone, not on what the process asked z3 before (with the shared main context
    the refuting points of a `report --only` differed from the whole report's).

    Partial functions are never silently total: x^(p/q) becomes an auxiliary t defined only
    where its base is >= 0 (``defs``: base >= 0 implies t >= 0, t^q = base^p); the definedness
    conditions met while encoding a relation (:func:`side_conditions`) are collected by
    :meth:`defined_rel`, so a hypothesis asserts them and a conclusion must prove them."""

    def __init__(self) -> None:
        self.ctx = z3.Context()
        self.vars: dict[sp.Symbol, z3.ArithRef] = {}
        self.defs: list[z3.BoolRef] = []
        self.n_aux = 0

    def aux(self) -> z3.ArithRef:
        self.n_aux += 1
        return z3.Real(f"_aux{self.n_aux}", self.ctx)

    def term(self, e: sp.Expr) -> z3.ArithRef:
        if e.is_Symbol:
            if e not in self.vars:
                self.vars[e] = z3.Real(e.name, self.ctx)
            return self.vars[e]
        if e.is_Rational:
            return z3.RealVal(f"{e.p}/{e.q}", self.ctx)
        if isinstance(e, sp.Add):
            return z3.Sum([self.term(a) for a in e.args])
        if isinstance(e, sp.Mul):
            return z3.Product([self.term(a) for a in e.args])
        if isinstance(e, sp.Pow):
            b, x = e.args
            if x.is_Integer:
                n = int(x)
                base = self.term(b)
                p = z3.Product([base] * abs(n)) if n != 0 else z3.RealVal(1, self.ctx)
                return p if n > 0 else 1 / p
            if x.is_Rational:
                num, den = int(x.p), int(x.q)
                base = self.term(b)
                t = self.aux()
                self.defs.append(
                    z3.Implies(
                        base >= 0,
                        z3.And(t >= 0, z3.Product([t] * den) == z3.Product([base] * abs(num))),
                    )
                )
                return t if num > 0 else 1 / t
            raise NotImplementedError(f"z3: non-rational power {e}")
        if isinstance(e, sp.Abs):
            a = self.term(e.args[0])
            return z3.If(a >= 0, a, -a)
        if isinstance(e, (sp.Max, sp.Min)):
            out = self.term(e.args[0])
            for a in e.args[1:]:
                t = self.term(a)
                out = z3.If(out >= t, out, t) if isinstance(e, sp.Max) else z3.If(out <= t, out, t)
            return out
        raise NotImplementedError(f"z3: no encoding for {type(e).__name__} ({e})")

    def rel(self, r: sp.Basic) -> z3.BoolRef:
        if r is sp.true or r is sp.false:  # a relation sympy decided (an instance's 2 = 1)
            return z3.BoolVal(r is sp.true, self.ctx)
        lhs, rhs = self.term(r.lhs), self.term(r.rhs)
        ops = {
            sp.LessThan: lambda: lhs <= rhs,
            sp.StrictLessThan: lambda: lhs < rhs,
            sp.GreaterThan: lambda: lhs >= rhs,
            sp.StrictGreaterThan: lambda: lhs > rhs,
            sp.Equality: lambda: lhs == rhs,
            sp.Unequality: lambda: lhs != rhs,
        }
        for kind, fn in ops.items():
            if isinstance(r, kind):
                return fn()
        raise NotImplementedError(f"z3: relation {r}")

    def defined_rel(self, r: sp.Basic) -> z3.BoolRef:
        """The relation and its side conditions (it is defined and holds)."""
        return z3.And(self.rel(r), *(self.rel(c) for c in side_conditions(r)))


def _z3_value(v: z3.ExprRef) -> Fraction:
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    a = v.approx(40)  # algebraic number: a rational within 1e-40
    return Fraction(a.numerator_as_long(), a.denominator_as_long())


def _strict(r: sp.Basic) -> sp.Basic:
    if isinstance(r, sp.LessThan):
        return sp.StrictLessThan(r.lhs, r.rhs)
    if isinstance(r, sp.GreaterThan):
        return sp.StrictGreaterThan(r.lhs, r.rhs)
    return r


def holds_at(rel: sp.Basic, point: Mapping[sp.Symbol, object]) -> bool | None:
    """True / False when the relation is decided at the point in interval arithmetic, None
    when the enclosure cannot decide it."""
    if rel is sp.true:
        return True
    try:
        d = point_value(rel.rhs - rel.lhs, point)
    except (Undefined, KeyError):
        return None
    if isinstance(rel, sp.Equality):
        if d.lo == 0 and d.hi == 0:
            return True
        return False if not d.contains_zero() else None
    if isinstance(rel, (sp.LessThan, sp.GreaterThan)):
        d = d if isinstance(rel, sp.LessThan) else -d
        return True if d.lo >= 0 else (False if d.hi < 0 else None)
    d = d if isinstance(rel, sp.StrictLessThan) else -d
    return True if d.lo > 0 else (False if d.hi <= 0 else None)


def _fmt_point(pt: Mapping[sp.Symbol, Fraction]) -> dict[str, str]:
    return {str(k): str(v) for k, v in sorted(pt.items(), key=lambda kv: str(kv[0]))}


def _z3_check(hyps: Sequence[sp.Basic], goal: sp.Basic | None, strict_hyps: bool = False):
    """Hypotheses (each defined and holding) and, with a goal, its negation (the goal
    undefined or false): satisfiable means a counterexample."""
    enc = _Z3()
    s = z3.Solver(ctx=enc.ctx)
    s.set("timeout", Z3_TIMEOUT_MS)
    for h in hyps:
        s.add(enc.defined_rel(_strict(h) if strict_hyps else h))
    if goal is not None:
        s.add(z3.Not(enc.defined_rel(goal)))
    s.add(*enc.defs)
    return s, s.check(), enc


def z3_domain(hyps: Sequence[sp.Basic], pinned: Iterable[sp.Symbol] = ()) -> Verdict | None:
    """None when the hypotheses describe a genuine domain; otherwise why not: ``vacuous`` (no
    real point satisfies them: the obligation would claim nothing) or ``degenerate`` (they pin
    a variable to one value, unless it is declared in ``pinned``)."""
    s, res, enc = _z3_check(hyps, None)
    if res == z3.unsat:
        return Verdict("vacuous", "the hypotheses are unsatisfiable: the obligation claims nothing")
    if res != z3.sat:
        return Verdict("unknown", f"z3 could not decide the hypotheses: {s.reason_unknown()}")
    model = s.model()
    keep = set(pinned)
    for sym, var in sorted(enc.vars.items(), key=lambda kv: str(kv[0])):
        if sym in keep:
            continue
        value = model.eval(var, model_completion=True)
        s.push()
        s.add(var != value)
        res = s.check()
        s.pop()
        if res == z3.unsat:
            return Verdict(
                "degenerate",
                f"the hypotheses pin {sym} = {_z3_value(value)}: the domain is one value"
                " (declare it pinned if that is meant)",
                {str(sym): str(_z3_value(value))},
            )
    return None


def _z3_prove(
    hyps: Sequence[sp.Basic], concl: sp.Basic, pinned: Iterable[sp.Symbol] = ()
) -> Verdict:
    bad = z3_domain(hyps, pinned)
    if bad is not None:
        return bad
    s, res, enc = _z3_check(hyps, concl)
    if res == z3.unsat:
        return Verdict("proved", "z3: hypotheses and the negated conclusion are unsatisfiable")
    if res == z3.sat:
        m = s.model()
        pt = {k: _z3_value(m.eval(v, model_completion=True)) for k, v in enc.vars.items()}
        return Verdict("failed", "z3 found a counterexample", _fmt_point(pt))
    return Verdict("unknown", f"z3: {s.reason_unknown()}")


def _refute_point(hyps: Sequence[sp.Basic], twin: sp.Basic, pt: Mapping) -> bool:
    return all(holds_at(h, pt) is True for h in hyps) and holds_at(twin, pt) is False


def _z3_refute(hyps: Sequence[sp.Basic], twin: sp.Basic) -> Verdict:
    for strict in (False, True):
        s, res, enc = _z3_check(hyps, twin, strict_hyps=strict)
        if res != z3.sat:
            continue
        m = s.model()
        pt = {k: _z3_value(m.eval(v, model_completion=True)) for k, v in enc.vars.items()}
        if _refute_point(hyps, twin, pt):
            return Verdict("refuted", "z3 model, checked in interval arithmetic", _fmt_point(pt))
    return Verdict("not refuted", "no checked counterexample")
