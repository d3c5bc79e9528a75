"""Conj 5.5 (arXiv 2606.08768, reconstruction): MAJORITY is recognised on a set of parameters of
positive measure.

Checks: in action (sampled theta around a hand-built MAJORITY transformer and in the box;
verify.checks.in_action, shared with Cor 5.1-5.4) and a certified cube around that construction
on which arb enclosures prove every label with margin xi.
"""

from __future__ import annotations

import math

from verify.boolean import all_bit_strings, make_family
from verify.checks.in_action import (
    IN_ACTION_MARGIN,
    IN_ACTION_RHO,
    in_action_outcome,
    majority_params,
)
from verify.model.enclosure import enclose_output
from verify.registry import CheckContext, Outcome, Policy, Row, Sizes, define_statement
from verify.statements._eps_zero import CONFIDENCE, DERIVATION, EPS_ZERO

CONJ_5_5 = define_statement(
    id="Conj 5.5",
    title="MAJORITY is recognised on a set of positive measure",
    statement=(
        r"The set of parameters recognising MAJORITY (with margin $\xi$) has positive Lebesgue"
        r" measure. (Reconstruction; a conjecture with empirical support only.)"
    ),
    confidence="[note]",
    hypotheses=(EPS_ZERO,),
    bound_formula=(
        r"\exists\ \text{cube } \theta^*+[-r,r]^M \text{ on which every string is labelled"
        r" MAJORITY}_N \text{ with margin } \xi \text{ (arb-certified)}"
    ),
    derivation=DERIVATION + "#6-cor-46-cor-51-54-conj-55",
)

N_BITS = Sizes(quick=(3, 5, 7), default=(3, 5, 7, 9), full=(3, 5, 7, 9, 11))  # odd N
RADII = [10.0 ** (-e / 2) for e in range(4, 17)]  # candidate half-widths 1e-2 .. 1e-8


@CONJ_5_5.check(
    "in action: fraction of sampled theta recognising MAJORITY", policy=Policy.ASYMPTOTIC
)
def in_action(ctx: CheckContext) -> Outcome:
    """Sampled theta around the MAJORITY construction recognise MAJORITY (at least one hit per
    odd N); the box is reported alongside."""
    return in_action_outcome("Conj 5.5", "majority", ctx, confidence=CONFIDENCE)


@CONJ_5_5.check("certified cube around a MAJORITY construction", policy=Policy.ASYMPTOTIC)
def certified_cube(ctx: CheckContext) -> Outcome:
    """For odd N, the largest r in 10^(-2..-8 by 1/2) such that arb enclosures over the whole
    cube theta* + [-r, r]^M prove T >= xi on MAJORITY's ones and T <= -xi on its zeros: a set
    of positive Lebesgue measure recognising MAJORITY_N with margin xi. No certified radius down
    to 1e-8 leaves the check undecided (the arithmetic, not the function, may be the limit)."""
    ns = ctx.size(N_BITS)
    star = majority_params()
    rows: list[Row] = []
    start = 0
    for n in ns:
        target = make_family("majority", n).table
        bits = all_bit_strings(n)
        best = 0.0
        for j in range(start, len(RADII)):
            balls = enclose_output(star, bits, prec=64, radius=RADII[j])
            ok = all(
                (b >= IN_ACTION_MARGIN) if t else (b <= -IN_ACTION_MARGIN)
                for b, t in zip(balls, target, strict=True)
            )
            if ok:
                best, start = RADII[j], j
                break
        m = star.flatten().size
        rows.append(
            Row(
                f"N={n}: certified cube half-width r (M={m})",
                best,
                RADII[-1],
                ">=",
                extra={"log10_volume": m * math.log10(2 * best) if best else None},
            )
        )
    notes = [
        "the radius is limited by the wrapping of arb over ~M-dimensional balls, not by the"
        " function; Monte Carlo around theta* (the 'in action' check) recognises MAJORITY at"
        f" rho = {IN_ACTION_RHO}"
    ]
    return Outcome(
        rows=rows,
        arithmetic="arb balls (64 bits) over the parameter cube",
        parameters={"N": ns, "margin": IN_ACTION_MARGIN, "radii": RADII},
        notes=notes,
    )
