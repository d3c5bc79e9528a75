"""Cor 5.1 (arXiv 2606.08768, reconstruction): PARITY is almost surely not recognisable for
large N at eps = 0, because it has no zero-sensitivity string."""

from __future__ import annotations

from verify.checks.in_action import in_action_outcome
from verify.registry import CheckContext, Outcome, Policy
from verify.statements._cor_5 import PREMISE_CHECK, define_corollary, premise_outcome, premise_sizes
from verify.statements._eps_zero import CONFIDENCE

COR_5_1 = define_corollary(
    "Cor 5.1", "PARITY", "PARITY $x_1 \\oplus \\dots \\oplus x_N$ has $s(x) = N$ for every $x$"
)


@COR_5_1.check(PREMISE_CHECK, policy=Policy.STRICT)
def premise(ctx: CheckContext) -> Outcome:
    """PARITY's s(x) = N for every x, so K_0(N) = 0, at every tested N."""
    return premise_outcome([("parity", n, {}) for n in premise_sizes(ctx)])


@COR_5_1.check(
    "in action: P[still recognised] around an exact construction vs N, rho, D",
    policy=Policy.ASYMPTOTIC,
)
def in_action(ctx: CheckContext) -> Outcome:
    """An exact eps = 0 construction recognising PARITY (built for each N: an MLP over the N + 1
    counts) with margin xi, perturbed by Unif([-rho, rho]^M): the certified fraction still
    recognising against N, rho and D (verify.checks.in_action); a positive fraction at a tested
    N is evidence, not a refutation (the corollary is about large N)."""
    return in_action_outcome("Cor 5.1", "parity", ctx, confidence=CONFIDENCE)
