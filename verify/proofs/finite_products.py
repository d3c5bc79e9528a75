"""A product of K factors, each in [1, u], is at most u^K: for every K, by induction on K
(:func:`verify.proofs.positions.induction`). Lemma 3.2's K layer-norm factors
(u = 1 + eps^{-1/2}) and Lemma 4.2's union threshold (u = t^{1/K}) are this claim.

The product P and the power A = u^K are aggregates: A_0 = 1, A_{K+1} = u A_K (the power of a
natural exponent), P_0 = 1, P_{K+1} = tau_{K+1} P_K. Invariant 1 <= P <= A: base K = 0 (the
empty product), step K -> K + 1 under 1 <= tau <= u (z3). The claim at K = 4 (the size the
obligation was once checked at) is where its domain is checked and its twin u^{K-1} refuted.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from verify.proofs.core import Obligation
from verify.proofs.positions import Instance, Part, induction

__all__ = ["INSTANCE_K", "product_bound"]

INSTANCE_K = 4
_P, _A, _TAU = sp.symbols("P A tau", real=True)


def _power(bound: sp.Expr, k: int) -> sp.Expr:
    """bound^k at a natural k (the empty product at k = 0)."""
    return bound**k


def _invariant(prod: sp.Expr, power: sp.Expr) -> tuple[sp.Basic, ...]:
    return (sp.Ge(prod, 1), sp.Le(prod, power))


def product_bound(
    id: str,
    statement: str,
    step: str,
    doc: str,
    bound: sp.Expr,
    domain: Sequence[sp.Basic],
    *,
    facts: Sequence[str] = (),
    note: str = "",
) -> Obligation:
    """For every K >= 0 and tau_1..tau_K in [1, ``bound``] (``domain``: the bound's own
    hypotheses, e.g. m >= 0): prod_k tau_k <= bound^K."""
    dom = tuple(domain)
    taus = sp.symbols(f"tau1:{INSTANCE_K + 1}", real=True)
    factors = tuple(h for t in taus for h in (t >= 1, t <= bound))
    prod = sp.Mul(*taus)
    return induction(
        id,
        statement,
        step,
        doc,
        (
            Part("base K = 0", dom, _invariant(sp.S.One, _power(bound, 0))),
            Part(
                "step K -> K + 1",
                (*dom, *_invariant(_P, _A), _TAU >= 1, _TAU <= bound),
                _invariant(_P * _TAU, _A * bound),
            ),
        ),
        Instance(
            INSTANCE_K,
            (*dom, *factors),
            sp.Le(prod, _power(bound, INSTANCE_K)),
            sp.Le(prod, _power(bound, INSTANCE_K - 1)),
            "K",
        ),
        f"every K >= 0 and tau_1..tau_K in [1, {bound}] ({', '.join(map(str, dom))}):"
        f" prod_k tau_k <= ({bound})^K [induction on K: invariant 1 <= P <= A, P = prod_k"
        f" tau_k, A = ({bound})^K (A_0 = 1, A_(K+1) = ({bound}) A_K); base K = 0, step"
        " K -> K + 1]" + (f" [{note}]" if note else ""),
        facts=facts,
    )
