"""Cor 5.4 (arXiv 2606.08768, reconstruction): FIRST is almost surely not recognisable for large
N at eps = 0, though its average sensitivity is only 1."""

from __future__ import annotations

from verify.checks.in_action import in_action_outcome
from verify.registry import CheckContext, Outcome, Policy
from verify.statements._cor_5 import PREMISE_CHECK, define_corollary, premise_outcome, premise_sizes
from verify.statements._eps_zero import CONFIDENCE

COR_5_4 = define_corollary(
    "Cor 5.4",
    "FIRST",
    "FIRST, $f(x) = x_1$, has $s(x) = 1$ for every $x$",
    " Its average sensitivity is 1, so average sensitivity cannot explain this.",
)


@COR_5_4.check(PREMISE_CHECK, policy=Policy.STRICT)
def premise(ctx: CheckContext) -> Outcome:
    """FIRST and its negation: s(x) = 1 for every x."""
    return premise_outcome(
        [("first", n, {"negate": neg}) for n in premise_sizes(ctx) for neg in (False, True)]
    )


@COR_5_4.check(
    "in action: P[still recognised] around an exact construction vs N, rho, D",
    policy=Policy.ASYMPTOTIC,
)
def in_action(ctx: CheckContext) -> Outcome:
    """An exact eps = 0 construction recognising FIRST (attention on position 1) with margin xi,
    perturbed by Unif([-rho, rho]^M): the certified fraction still recognising against N, rho
    and D (verify.checks.in_action); a positive fraction at a tested N is evidence, not a
    refutation (the corollary is about large N)."""
    return in_action_outcome("Cor 5.4", "first", ctx, confidence=CONFIDENCE)
