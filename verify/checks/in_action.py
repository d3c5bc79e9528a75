"""Cor 5.1-5.4 and Conj 5.5 "in action": which functions sampled parameters recognise.

theta is drawn around a hand-built transformer recognising MAJORITY (:func:`majority_params`,
theta ~ Unif(theta* + [-rho, rho]^M)) and in the box (theta ~ Unif[-1, 1]^M, same architecture);
each draw's certified truth table at odd N is compared with PARITY, 2-sparse PARITY, DICTATOR,
FIRST and MAJORITY at margin xi. The five in-action checks (one per statement) read one shared
run: :func:`in_action_counts` is memoised on (budget, seed).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from verify.boolean import make_family
from verify.boolean.sampling import clopper_pearson
from verify.checks.certified_k0 import recognises
from verify.checks.exact_constructions import majority_params
from verify.model import Params
from verify.model.truth_table import truth_table
from verify.registry import CheckContext, FigureData, Outcome, Row, Sizes, slugify

__all__ = [
    "IN_ACTION_DISTRIBUTIONS",
    "IN_ACTION_DRAWS",
    "IN_ACTION_FAMILIES",
    "IN_ACTION_MARGIN",
    "IN_ACTION_N",
    "IN_ACTION_RHO",
    "InActionCounts",
    "in_action_counts",
    "in_action_outcome",
    "majority_params",
]

# (statement, family, family parameters): the statement whose in-action check reads the family
IN_ACTION_FAMILIES = (
    ("Cor 5.1", "parity", {}),
    ("Cor 5.2", "sparse_parity", {"m": 2}),
    ("Cor 5.3", "dictator", {"i": 2}),
    ("Cor 5.4", "first", {}),
)
IN_ACTION_MARGIN = 0.1  # xi
IN_ACTION_RHO = 0.02  # half-width of the cube around the MAJORITY construction
IN_ACTION_N = Sizes(quick=(5, 7, 9), default=(5, 7, 9, 11, 13), full=(5, 7, 9, 11, 13, 15))
IN_ACTION_DRAWS = Sizes(quick=12, default=50, full=200)  # per distribution and N
IN_ACTION_DISTRIBUTIONS = ("ball around MAJORITY construction", "box [-1,1]^M")


@dataclass(frozen=True)
class InActionCounts:
    """Hits per (distribution, N) and family, out of ``draws`` sampled theta each. Shared by
    the memo of :func:`in_action_counts`: read it, never mutate it."""

    ns: tuple[int, ...]
    draws: int
    counts: dict[tuple[str, int], dict[str, int]]


@functools.cache
def in_action_counts(budget: str, seed: int) -> InActionCounts:
    """For theta ~ Unif(theta*_MAJ + [-rho, rho]^M) and theta ~ Unif[-1,1]^M (same
    architecture), the number recognising each family with margin xi at odd N (certified
    truth tables).

    Memoised (``functools.lru_cache``): a pure function of (budget, seed), so the five in-action
    checks share one run per budget and seed; ``in_action_counts.cache_clear()`` forgets it."""
    ctx = CheckContext(budget=budget, seed=seed)
    ns = ctx.size(IN_ACTION_N)
    draws = ctx.size(IN_ACTION_DRAWS)
    star = majority_params()
    theta = star.flatten()
    rng = np.random.default_rng(seed)
    counts: dict[tuple[str, int], dict[str, int]] = {}
    for dist in IN_ACTION_DISTRIBUTIONS:
        for n in ns:
            targets = {fam: make_family(fam, n, **kw).table for _, fam, kw in IN_ACTION_FAMILIES}
            hits = dict.fromkeys(targets, 0)
            for _ in range(draws):
                if dist.startswith("ball"):
                    th = theta + rng.uniform(-IN_ACTION_RHO, IN_ACTION_RHO, theta.size)
                else:
                    th = rng.uniform(-1.0, 1.0, theta.size)
                tt = truth_table(Params.unflatten(star.config, th), n, margin=IN_ACTION_MARGIN)
                for fam, table in targets.items():
                    hits[fam] += recognises(tt, table.astype(np.int8)) is True
            counts[(dist, n)] = hits
    return InActionCounts(ns, draws, counts)


def in_action_outcome(
    statement_id: str, family: str, ctx: CheckContext, *, confidence: float
) -> Outcome:
    """The in-action check of ``statement_id`` for ``family`` (policy asymptotic): per
    distribution and N, the hits with a Clopper-Pearson interval (in counts); MAJORITY around
    its construction must be hit at least once, the other families never (a hit at small N is
    evidence, not a refutation: the statements are about large N)."""
    data = in_action_counts(ctx.budget, ctx.seed)
    rows: list[Row] = []
    series = []
    for dist in IN_ACTION_DISTRIBUTIONS:
        ys, los, his = [], [], []
        for n in data.ns:
            h = data.counts[(dist, n)][family]
            lo, hi = clopper_pearson(h, data.draws, confidence)
            ys.append(h / data.draws)
            los.append(lo)
            his.append(hi)
            ci = (lo * data.draws, hi * data.draws)
            if family == "majority":
                if dist.startswith("ball"):  # should not vanish: at least one hit
                    rows.append(Row(f"{dist}, N={n}: recognising", float(h), 1.0, ">=", ci))
            else:  # a.s. not recognised for large N: no hit expected
                rows.append(Row(f"{dist}, N={n}: recognising", float(h), 0.0, "<=", ci))
        series.append({"label": dist, "x": list(data.ns), "y": ys})
        series.append({"label": dist + " CI low", "x": list(data.ns), "y": los, "style": ":"})
        series.append({"label": dist + " CI high", "x": list(data.ns), "y": his, "style": ":"})
    notes = [
        f"theta ~ Unif(theta* + [-{IN_ACTION_RHO}, {IN_ACTION_RHO}]^M) around the MAJORITY"
        f" construction (majority_params) and theta ~ Unif[-1,1]^M; margin {IN_ACTION_MARGIN};"
        " odd N only (the construction leaves MAJORITY's ties at even N to chance); counts"
        " with Clopper-Pearson CIs",
    ]
    if family != "majority":
        notes.append("the statement is asymptotic: a hit at small N would be undecided")
    fig = FigureData(
        name=f"{slugify(statement_id)}_in_action",
        title=f"Fraction of sampled theta recognising {family.upper()} (margin {IN_ACTION_MARGIN})",
        kind="lines",
        data={"series": series, "xlabel": "N", "ylabel": "fraction recognising"},
    )
    return Outcome(
        rows=rows,
        arithmetic="certified truth tables (rigorous float64, arb fallback)",
        parameters={
            "N": data.ns,
            "draws": data.draws,
            "rho": IN_ACTION_RHO,
            "margin": IN_ACTION_MARGIN,
        },
        notes=notes,
        figures=[fig],
    )
