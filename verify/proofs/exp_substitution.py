"""Steps with ``exp`` over their whole (unbounded) domain, by a stated substitution E = e^u
that makes them polynomial (issue 42: no compact box in place of the stated domain).

A step is given in its exp form: domain hypotheses, a conclusion and a twin in the variables
(R, ...), and for each new variable E the exponent u = k R (k a nonzero rational, R a variable
that occurs only inside exp). Its discharge, each part checked, none taken on trust:

1. the substitution: R = log(E)/k turns the conclusion and the twin into expressions free of
   exp, log and R (else the step is an error), and substituting E = e^u back gives the exp
   form's own sides again (sympy: each difference simplifies to 0);
2. the fact about E: the domain's hypotheses on R are exactly u >= 0 (z3, both directions), and
   u >= 0 gives E = e^u >= 1 by the exponential series: e^x = sum_n x^n/n! (sympy sums it),
   its term n = 0 is 1 and every later one is >= 0 for x >= 0 (sympy, for symbolic n); so the
   values E takes on the domain are exactly E >= 1;
3. the polynomial claim: the rest of the domain with E >= 1 implies the substituted conclusion
   (z3, as every z3 step, the domain checked genuine); the twin, substituted the same way, is
   refuted at a z3 model checked in interval arithmetic (E >= 1 there is e^u at u = log(E) >= 0,
   a point of the domain).

The obligation is a z3 step (method ``z3``) whose formal claim (``hyps``, ``concl``: what a step
citing it instantiates, what Coq states) is the substituted one; ``exp_form`` keeps the stated
one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import sympy as sp
import z3

from verify.proofs.core import Obligation, Verdict, obligation
from verify.proofs.z3_encoding import _z3_check, _z3_prove, _z3_refute

__all__ = ["exp_at_least_one", "exp_step", "substitute_exp"]


@lru_cache(maxsize=1)
def _series_at_least_one() -> str | None:
    """None when sympy confirms e^x = sum_n x^n/n! with term 0 equal to 1 and every term
    >= 0 for x >= 0 (so e^x >= 1 there); otherwise which part failed."""
    x = sp.Symbol("x", nonnegative=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    term = x**n / sp.factorial(n)
    if sp.simplify(sp.Sum(term, (n, 0, sp.oo)).doit() - sp.exp(x)) != 0:
        return "sympy does not sum x^n/n! to e^x"
    if term.subs(n, 0) != 1:
        return "the series' first term is not 1"
    if term.is_nonnegative is not True:
        return "the series' terms are not >= 0 for x >= 0"
    return None


def exp_at_least_one(domain: Sequence[sp.Basic], u: sp.Expr) -> Verdict | None:
    """None when ``domain`` (the hypotheses that involve u's variable) is exactly u >= 0 and
    e^u >= 1 follows from the series (module doc, step 2); otherwise a ``failed`` verdict."""
    bad = _series_at_least_one()
    if bad is not None:
        return Verdict("failed", f"e^x >= 1 for x >= 0: {bad}")
    if _z3_check(list(domain), sp.Ge(u, 0))[1] != z3.unsat:
        return Verdict("failed", f"the domain {list(domain)} does not give {u} >= 0")
    for h in domain:
        if _z3_check([sp.Ge(u, 0)], h)[1] != z3.unsat:
            return Verdict("failed", f"{u} >= 0 does not give the domain's {h}: E >= 1 is wider")
    return None


def substitute_exp(expr: sp.Basic, e: sp.Symbol, var: sp.Symbol, k: sp.Rational) -> sp.Basic:
    """``expr`` with var = log(E)/k (E = e^{k var}); ValueError if exp, log or var remain."""
    pos = sp.Dummy(e.name, positive=True)
    out = sp.powsimp(expr.subs(var, sp.log(pos) / k), force=True).subs(pos, e)
    if out.has(sp.exp, sp.log) or var in out.free_symbols:
        raise ValueError(f"{expr}: E = e^({k} {var}) does not make it polynomial ({out})")
    return out


def _sides(rel: sp.Basic) -> tuple[sp.Expr, sp.Expr]:
    return rel.lhs, rel.rhs


def _back(exp_rel: sp.Basic, e_rel: sp.Basic, e: sp.Symbol, u: sp.Expr) -> bool:
    """Whether E = e^u in the substituted relation gives the exp form's sides again."""
    if type(exp_rel) is not type(e_rel):
        return False
    return all(
        sp.simplify(a.subs(e, sp.exp(u)) - b) == 0
        for a, b in zip(_sides(e_rel), _sides(exp_rel), strict=True)
    )


def exp_step(
    id: str,
    statement: str,
    step: str,
    doc: str,
    hyps: Iterable[sp.Basic],
    concl: sp.Basic,
    twin: sp.Basic,
    subst: Mapping[sp.Symbol, tuple[sp.Symbol, sp.Rational]],
    *,
    facts: Sequence[str] = (),
    note: str = "",
) -> Obligation:
    """A step with exp over its whole domain (module doc): ``subst`` maps each new variable E
    to (R, k), E = e^{k R}."""
    hyps = tuple(hyps)
    e_hyps = [h for h in hyps if not ({v for v, _ in subst.values()} & h.free_symbols)]
    e_concl, e_twin = concl, twin
    for e, (var, k) in subst.items():
        e_concl = substitute_exp(e_concl, e, var, sp.Rational(k))
        e_twin = substitute_exp(e_twin, e, var, sp.Rational(k))
        e_hyps.append(sp.Ge(e, 1))
    subs_text = ", ".join(f"{e} = exp({k * var})" for e, (var, k) in subst.items())
    claim = (
        f"{' & '.join(map(str, hyps))} => {concl} [substitution {subs_text}: "
        f"{' & '.join(map(str, e_hyps))} => {e_concl}]" + (f" [{note}]" if note else "")
    )

    def prove() -> Verdict:
        for e, (var, k) in subst.items():
            u = sp.Rational(k) * var
            if not _back(concl, e_concl, e, u) or not _back(twin, e_twin, e, u):
                return Verdict("failed", f"{e} = exp({u}) does not give the exp form back")
            bad = exp_at_least_one([h for h in hyps if var in h.free_symbols], u)
            if bad is not None:
                return bad
        v = _z3_prove(e_hyps, e_concl)
        if v.status != "proved":
            return v
        return Verdict(
            "proved",
            f"every point of the domain: {subs_text} >= 1 (the exp series; the domain is exactly"
            f" the exponent >= 0), substitution checked by sympy, then {v.detail}",
        )

    return obligation(
        Obligation(
            id=id,
            statement=statement,
            step=step,
            doc=doc,
            method="z3",
            claim=claim,
            twin_claim=f"{twin} [{e_twin}]",
            prove=prove,
            refute_twin=lambda: _z3_refute(e_hyps, e_twin),
            facts=tuple(facts),
            meta={
                "hyps": tuple(e_hyps),
                "concl": e_concl,
                "twin": e_twin,
                "pinned": (),
                "uses": (),
                "exp_form": (hyps, concl, twin, dict(subst)),
            },
        )
    )
