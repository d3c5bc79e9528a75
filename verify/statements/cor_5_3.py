"""Cor 5.3 (arXiv 2606.08768, reconstruction): DICTATOR is almost surely not recognisable for
large N at eps = 0: s(x) = 1 for every x."""

from __future__ import annotations

import numpy as np

from verify.checks.in_action import in_action_outcome
from verify.registry import CheckContext, Outcome, Policy
from verify.statements._cor_5 import PREMISE_CHECK, define_corollary, premise_outcome, premise_sizes
from verify.statements._eps_zero import CONFIDENCE

COR_5_3 = define_corollary(
    "Cor 5.3",
    "DICTATOR",
    "a dictator $f(x) = x_i$ (or $1 - x_i$) has $s(x) = 1$ for every $x$",
    " Its average sensitivity is only 1. That 5.3 is DICTATOR and 5.4 FIRST is inferred.",
)


@COR_5_3.check(PREMISE_CHECK, policy=Policy.STRICT)
def premise(ctx: CheckContext) -> Outcome:
    """A random and the last coordinate, negated at random: s(x) = 1 for every x."""
    rng = np.random.default_rng(ctx.seed)
    cases = []
    for n in premise_sizes(ctx):
        for i in sorted({int(rng.integers(1, n + 1)), n}):
            cases.append(("dictator", n, {"i": i, "negate": bool(rng.integers(0, 2))}))
    return premise_outcome(cases)


@COR_5_3.check(
    "in action: P[still recognised] around an exact construction vs N, rho, D",
    policy=Policy.ASYMPTOTIC,
)
def in_action(ctx: CheckContext) -> Outcome:
    """An exact eps = 0 construction recognising DICTATOR x_2 (attention on position 2) with
    margin xi, perturbed by Unif([-rho, rho]^M): the certified fraction still recognising
    against N, rho and D (verify.checks.in_action); a positive fraction at a tested N is
    evidence, not a refutation (the corollary is about large N)."""
    return in_action_outcome("Cor 5.3", "dictator", ctx, confidence=CONFIDENCE)
