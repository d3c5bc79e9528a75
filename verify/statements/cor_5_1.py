"""Cor 5.1 (arXiv 2606.08768, reconstruction): PARITY is almost surely not recognisable for
large N at eps = 0, because it has no zero-sensitivity string."""

from __future__ import annotations

from verify.registry import CheckContext, Outcome, Policy
from verify.statements._cor_5 import PREMISE_CHECK, define_corollary, premise_outcome, premise_sizes

COR_5_1 = define_corollary(
    "Cor 5.1", "PARITY", "PARITY $x_1 \\oplus \\dots \\oplus x_N$ has $s(x) = N$ for every $x$"
)


@COR_5_1.check(PREMISE_CHECK, policy=Policy.STRICT)
def premise(ctx: CheckContext) -> Outcome:
    """PARITY's s(x) = N for every x, so K_0(N) = 0, at every tested N."""
    return premise_outcome([("parity", n, {}) for n in premise_sizes(ctx)])
