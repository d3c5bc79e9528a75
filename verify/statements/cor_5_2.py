"""Cor 5.2 (arXiv 2606.08768, reconstruction): m-sparse PARITY is almost surely not recognisable
for large N at eps = 0: its minimum sensitivity is m >= 1."""

from __future__ import annotations

import numpy as np

from verify.checks.in_action import in_action_outcome
from verify.registry import CheckContext, Outcome, Policy
from verify.statements._cor_5 import PREMISE_CHECK, define_corollary, premise_outcome, premise_sizes
from verify.statements._eps_zero import CONFIDENCE

COR_5_2 = define_corollary(
    "Cor 5.2",
    "m-sparse PARITY",
    "the parity of a fixed set of $m \\ge 1$ bits has $s(x) = m$ for every $x$ (minimum "
    "sensitivity $m$)",
)


@COR_5_2.check(PREMISE_CHECK, policy=Policy.STRICT)
def premise(ctx: CheckContext) -> Outcome:
    """Random subsets of sizes 1, 2, ceil(N/2), N: s(x) = m for every x."""
    rng = np.random.default_rng(ctx.seed)
    cases = []
    for n in premise_sizes(ctx):
        for m in sorted({1, 2, (n + 1) // 2, n} & set(range(1, n + 1))):
            subset = sorted(int(v) for v in rng.choice(np.arange(1, n + 1), m, replace=False))
            cases.append(("sparse_parity", n, {"subset": subset}))
    return premise_outcome(cases)


@COR_5_2.check(
    "in action: P[still recognised] around an exact construction vs N, rho, D",
    policy=Policy.ASYMPTOTIC,
)
def in_action(ctx: CheckContext) -> Outcome:
    """An exact eps = 0 construction recognising the 2-sparse PARITY x_1 XOR x_2 (attention on
    positions 1, 2) with margin xi, perturbed by Unif([-rho, rho]^M): the certified fraction
    still recognising against N, rho and D (verify.checks.in_action); a positive fraction at a
    tested N is evidence, not a refutation (the corollary is about large N)."""
    return in_action_outcome("Cor 5.2", "sparse_parity", ctx, confidence=CONFIDENCE)
