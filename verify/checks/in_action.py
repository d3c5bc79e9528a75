"""Cor 5.1-5.4 "in action": exact eps = 0 constructions that recognise PARITY, 2-sparse PARITY,
DICTATOR_2 and FIRST with a margin (verify.checks.exact_constructions, learned positions in
theta), perturbed by theta ~ Unif(theta* + [-rho, rho]^M): the certified fraction still
recognising, against N, rho and the width D (verify.checks.ball_recognition).

The corollaries say that for almost every theta the function is not recognised for all large N.
At a fixed N the recognising set is open, so a small enough ball recognises; what can be watched
is how fast the recognising fraction of a ball falls with N. PARITY's construction is built for
each N (its MLP interpolates the N + 1 counts); the other three work at every N up to the
position table, so the same draws are judged at every N and the fraction recognising at every
tested N' <= N is reported too. Strings: all 2^N up to N = 10, beyond that one per count plus
64 random ones (a pass then only means "not refuted": an upper bound).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from verify.checks.ball_recognition import BallCounts, ball_counts
from verify.checks.exact_constructions import (
    dictator_params,
    majority_params,
    parity_params,
    subset_parity_params,
)
from verify.model import Params
from verify.registry import CheckContext, FigureData, Outcome, Row, Sizes, slugify

__all__ = [
    "IN_ACTION_FAMILIES",
    "IN_ACTION_MARGIN",
    "in_action_counts",
    "in_action_outcome",
    "majority_params",
]

# (statement, family name, target of the bits)
IN_ACTION_FAMILIES: tuple[tuple[str, str, Callable[[np.ndarray], np.ndarray]], ...] = (
    ("Cor 5.1", "parity", lambda b: b.sum(axis=1) % 2),
    ("Cor 5.2", "sparse_parity", lambda b: b[:, 0] ^ b[:, 1]),
    ("Cor 5.3", "dictator", lambda b: b[:, 1]),
    ("Cor 5.4", "first", lambda b: b[:, 0]),
)
IN_ACTION_MARGIN = 0.1  # xi
IN_ACTION_N = Sizes(quick=(4, 8), default=(4, 8, 12, 16), full=(4, 8, 12, 16, 24, 32))
IN_ACTION_RHO = Sizes(quick=(0.01, 0.05), default=(0.003, 0.01, 0.03, 0.1), full=(0.003, 0.01,
                      0.03, 0.1))  # fmt: skip
IN_ACTION_DIMS = Sizes(quick=(4,), default=(4, 8), full=(4, 8, 16))
IN_ACTION_DRAWS = Sizes(quick=12, default=40, full=100)  # per (D, rho, N)


def _construction(family: str, n: int, max_len: int, d: int) -> Params:
    if family == "parity":
        return parity_params(n, d_model=d, max_len=max_len)
    if family == "sparse_parity":
        return subset_parity_params([1, 2], max_len, d)
    return dictator_params(2 if family == "dictator" else 1, max_len, d)


@functools.cache
def in_action_counts(budget: str, seed: int, family: str) -> dict[int, BallCounts]:
    """Per width D, the ball counts of ``family``'s construction (memoised on its arguments:
    a pure function of them; read the result, never mutate it)."""
    ctx = CheckContext(budget=budget, seed=seed)
    ns, rhos = ctx.size(IN_ACTION_N), ctx.size(IN_ACTION_RHO)
    draws = ctx.size(IN_ACTION_DRAWS)
    target = next(t for _, f, t in IN_ACTION_FAMILIES if f == family)
    out = {}
    for d in ctx.size(IN_ACTION_DIMS):
        if family == "parity":  # one construction per N, judged at that N only
            counts = BallCounts(draws)
            for n in ns:
                star = _construction(family, n, max(ns), d)
                one = ball_counts([(family, star, "sampled")], target, [n], rhos, draws,
                                  IN_ACTION_MARGIN, seed)  # fmt: skip
                for name in ("hits", "undecided", "every_n", "exact"):
                    getattr(counts, name).update(getattr(one, name))
        else:
            star = _construction(family, max(ns), max(ns), d)
            counts = ball_counts([(family, star, "sampled")], target, ns, rhos, draws,
                                 IN_ACTION_MARGIN, seed)  # fmt: skip
        out[d] = counts
    return out


def in_action_outcome(
    statement_id: str, family: str, ctx: CheckContext, *, confidence: float
) -> Outcome:
    """The in-action check of ``statement_id`` (policy asymptotic): per (D, rho, N) the
    certified fraction of the ball still recognising ``family`` (Clopper-Pearson), against 0,
    the corollary's limit for large N (never decisive: at a fixed N the recognising set is
    open, so a positive fraction refutes nothing); for the constructions that work at every N,
    also the fraction recognising at every tested N' <= N."""
    data = in_action_counts(ctx.budget, ctx.seed, family)
    ns, rhos = ctx.size(IN_ACTION_N), ctx.size(IN_ACTION_RHO)
    rows: list[Row] = []
    series, evidence = [], []
    for d, counts in data.items():
        for rho in rhos:
            ys, lo, hi = [], [], []
            for n in ns:
                key = (family, rho, n)
                frac, ci = counts.fraction(key, confidence)
                upper = "" if counts.exact[key] else " (upper)"
                extra = {"hits": counts.hits[key], "undecided": counts.undecided[key],
                         "draws": counts.draws, "exact": counts.exact[key]}  # fmt: skip
                tag = f"D={d}, rho={rho:g}, N={n}{upper}"
                rows.append(Row(f"{tag}: P[still recognised]", frac, 0.0, "<=", ci, extra,
                                decisive=False))  # fmt: skip
                if family != "parity":
                    every = counts.every_n[key] / counts.draws
                    rows.append(Row(f"{tag}: P[recognised at every tested N' <= N]", every, 0.0,
                                    "<=", None, extra, decisive=False))  # fmt: skip
                ys.append(frac)
                lo.append(ci[0])
                hi.append(ci[1])
            series.append({"label": f"D={d}, rho={rho:g}", "x": list(ns), "y": ys,
                           "ylo": lo, "yhi": hi, "n": counts.draws})  # fmt: skip
            evidence.append(f"D={d}, rho={rho:g}: " + ", ".join(
                f"N={n}: {counts.hits[(family, rho, n)]}/{counts.draws}" for n in ns))  # fmt: skip
    notes = [
        f"theta ~ Unif(theta* + [-rho, rho]^M) around the exact construction of {family}"
        f" (eps = 0, learned positions in theta, margin {IN_ACTION_MARGIN}); certified verdicts",
        "still recognised (of the draws): " + "; ".join(evidence),
        "the corollary is asymptotic (a.e. theta fails for all large N): a positive fraction at"
        " a tested N is evidence about the rate, not a refutation, so the rows are undecided"
        " whenever the fraction is positive",
    ]
    fig = FigureData(
        name=f"{slugify(statement_id)}_in_action",
        title=f"P[still recognising {family.upper()}] around an exact construction",
        kind="lines",
        data={
            "series": series,
            "xlabel": "N",
            "ylabel": "fraction still recognising",
            "probability": True,
            "interval": f"{confidence:.0%} Clopper-Pearson",
        },
    )
    return Outcome(
        rows=rows,
        arithmetic="rigorous float64 (midpoint-radius) outputs of every tested string",
        parameters={
            "N": list(ns),
            "rho": list(rhos),
            "D": list(data),
            "margin": IN_ACTION_MARGIN,
            "draws": ctx.size(IN_ACTION_DRAWS),
        },  # fmt: skip
        notes=notes,
        figures=[fig],
    )
