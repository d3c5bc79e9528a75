"""What Cor 5.1-5.4 share: the statement text built from a family's premise, and the premise
check (exhaustive sensitivity profile against the sympy closed form).

Cor 5.1-5.4 conclude from Cor 4.6 (premise K_0(N) < N^((D-1)/(2L)-5)) that PARITY, m-sparse
PARITY, DICTATOR and FIRST are almost surely not recognisable for large N; the part a computer
can check exhaustively is the premise K_0(N) = 0 (reconstructed statements:
docs/reference/paper-2606.08768.md, Section 3 "Cor 5.1-5.4").
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from verify.boolean import closed_form_profile, make_family, sensitivity
from verify.registry import (
    CheckContext,
    Counterexample,
    Hypothesis,
    Outcome,
    Row,
    Sizes,
    Statement,
    define_statement,
)

_PREMISE = (
    "By Cor 4.6 (a function family with $K_0(N) < N^{(D-1)/(2L)-5}$ for all large $N$ is, for "
    "almost every $\\theta$ in the box, not recognised with margin $\\xi$ for all sufficiently "
    "large $N$)"
)

PREMISE_CHECK = "premise: exhaustive sensitivity profile"
PREMISE_SIZES = Sizes(
    quick=[1, 2, 5, 8, 12], default=[1, 2, 5, 8, 12, 16, 20], full=[1, 4, 8, 16, 24]
)
_PREMISE_NOTE = (
    "K_0(N) = 0 at every tested N: the premise K_0(N) < N^e of Cor 4.6 holds for every exponent "
    "e = (D-1)/(2L) - 5 (N^e > 0). Targets (min/max s, K_0, average sensitivity) come from the "
    "sympy closed form, measured values from the Numba kernel's s(x) for all 2^N strings."
)

Case = tuple[str, int, dict[str, Any]]  # (family, N, family parameters)


def define_corollary(cor_id: str, name: str, premise: str, remark: str = "") -> Statement:
    """Define one of Cor 5.1-5.4: 'f has <premise>, so K_0(N) = 0 < N^e: a.s. not recognisable'."""
    return define_statement(
        id=cor_id,
        title=f"{name} is almost surely not recognisable for large N",
        statement=(
            f"{_PREMISE}: {premise}, so $K_0(N) = 0 < N^{{(D-1)/(2L)-5}}$, and {name} is almost "
            f"surely not recognisable for large $N$.{remark} (Reconstructed; the paper's wording "
            "was not available.)"
        ),
        confidence="[note]",
        hypotheses=(Hypothesis("Cor 4.6", "eps = 0, random theta in a compact box Theta"),),
        bound_formula=r"$K_0(N) = 0 < N^{(D-1)/(2L)-5}$",
        derivation="docs/boolean.md",
    )


def premise_rows(family: str, n: int, params: dict[str, Any]) -> list[Row]:
    """Exhaustive s(x) for all x, compared with the closed-form profile's targets."""
    f = make_family(family, n, **params)
    s = sensitivity(f)
    target = closed_form_profile(family, n, **params)
    levels = np.flatnonzero(target)
    as_target = Fraction(int(np.dot(np.arange(n + 1), target)), 1 << n)
    as_measured = Fraction(int(s.sum(dtype=np.int64)), 1 << n)
    label = f.name
    return [
        Row(f"{label}: min_x s(x)", int(s.min()), int(levels[0]), "=="),
        Row(f"{label}: max_x s(x)", int(s.max()), int(levels[-1]), "=="),
        Row(f"{label}: K_0 = #{{x: s(x)=0}}", int(np.count_nonzero(s == 0)), int(target[0]), "=="),
        Row(f"{label}: average sensitivity", float(as_measured), float(as_target), "=="),
    ]


def premise_outcome(cases: list[Case]) -> Outcome:
    """The premise check's outcome over ``cases`` (exact integers, strict)."""
    return Outcome(
        rows=[row for fam, n, params in cases for row in premise_rows(fam, n, params)],
        arithmetic="exact integer (exhaustive over 2^N strings)",
        parameters={"cases": [f"{fam}(N={n}, {p})" for fam, n, p in cases]},
        notes=[_PREMISE_NOTE],
        counterexample=Counterexample(setting={"cases": [[fam, n, p] for fam, n, p in cases]}),
    )


def premise_sizes(ctx: CheckContext) -> list[int]:
    return ctx.size(PREMISE_SIZES)
