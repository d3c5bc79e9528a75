"""Axioms' scalar schemas (:class:`~verify.proofs.core.Schema`): how one is built and how it is
checked to be the image of its axiom's attacked statement.

:func:`schema_violation` evaluates a schema on scalars computed from the attack's draws: every
hypothesis and the conclusion must hold there (relative violation <= 1e-9, the attacks'
tolerance). With ``tighten`` the conclusion's larger side is scaled by it (an equality's right
side by 1.01), a deliberately wrong schema: the draws reach the axiom's equality cases when
that is violated. ``prove`` runs :func:`check_schema` on every cited axiom with a schema."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.axiom_draws import violation
from verify.proofs.core import Schema

__all__ = ["check_schema", "relations", "schema", "schema_violation"]


def schema(
    symbols: Mapping[str, str],
    hyps: Sequence[sp.Basic],
    concl: sp.Basic,
    instances: Callable[[Any, int], Mapping[str, Any]],
) -> Schema:
    """A schema over ``symbols`` (name -> meaning); every free symbol of ``hyps`` and
    ``concl`` must be one of them."""
    free = set().union(*(r.free_symbols for r in (*hyps, concl)))
    unknown = sorted(s.name for s in free if s.name not in symbols)
    if unknown:
        raise ValueError(f"schema symbols without a meaning: {', '.join(unknown)}")
    return Schema(dict(symbols), tuple(hyps), concl, instances)


def relations(expr: sp.Basic) -> tuple[sp.Basic, ...]:
    """The relations of a relation or of an ``And`` of them."""
    return tuple(expr.args) if isinstance(expr, sp.And) else (expr,)


@functools.lru_cache(maxsize=512)
def _numeric(expr: sp.Expr, names: tuple[str, ...]) -> Callable[..., Any]:
    """``expr`` as a numpy function of the symbols ``names`` (matched by name: a schema's
    symbols may carry assumptions)."""
    expr = sp.sympify(expr)
    plain = expr.subs({s: sp.Symbol(s.name, real=True) for s in expr.free_symbols})
    return sp.lambdify([sp.Symbol(k, real=True) for k in names], plain, modules=["numpy", "scipy"])


def _side(expr: sp.Expr, names: Sequence[str], values: Mapping[str, Any], n: int) -> np.ndarray:
    fn = _numeric(expr, tuple(names))
    out = np.asarray(fn(*(np.asarray(values[k], dtype=float) for k in names)), dtype=float)
    return np.broadcast_to(out, (n,))


def _rel_violation(
    rel: sp.Basic, names: Sequence[str], values: Mapping[str, Any], n: int, tighten: float
) -> np.ndarray:
    lhs, rhs = (_side(e, names, values, n) for e in (rel.lhs, rel.rhs))
    if isinstance(rel, sp.Equality):
        return violation(lhs, rhs * (1.01 if tighten != 1.0 else 1.0), equality=True)
    if isinstance(rel, (sp.LessThan, sp.StrictLessThan)):
        small, big = lhs, rhs
    elif isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan)):
        small, big = rhs, lhs
    else:
        raise ValueError(f"schema: a relation, not {rel}")
    return violation(small, big * tighten)


def schema_violation(s: Schema, values: Mapping[str, Any], tighten: float = 1.0) -> np.ndarray:
    """Per draw, the largest relative violation of a hypothesis or of the conclusion (the
    conclusion's larger side times ``tighten``) at the scalars ``values``."""
    names = sorted(s.symbols)
    missing = sorted(set(names) - set(values))
    if missing:
        raise ValueError(f"the instances give no value for {', '.join(missing)}")
    n = max(np.size(values[k]) for k in names)
    parts = [_rel_violation(h, names, values, n, 1.0) for h in s.hyps]
    parts += [_rel_violation(c, names, values, n, tighten) for c in relations(s.concl)]
    return np.maximum.reduce(parts)


def check_schema(ax_id: str, draws: int = 1000, seed: int = 0, tighten: float = 1.0):
    """(the largest violation of the axiom's schema over ``draws`` instances, in batches of
    100 with seeds seed, seed + 1, ...; the batch seed where it occurred); (-inf, -1) for an
    axiom without a schema."""
    from verify.proofs.core import AXIOMS

    sch = AXIOMS[ax_id].schema
    if sch is None:
        return -math.inf, -1
    worst, where = -math.inf, seed
    for k in range(max(1, draws // 100)):
        values = sch.instances(np.random.default_rng(seed + k), 100)
        v = float(np.max(schema_violation(sch, values, tighten)))
        if v > worst:
            worst, where = v, seed + k
    return worst, where
