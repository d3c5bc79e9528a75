"""Conj 5.5 (arXiv 2606.08768, reconstruction): MAJORITY is recognised on a set of parameters of
positive measure.

Two readings. *Fixed N*: for each N the set {theta: T(theta, .) recognises MAJORITY_N with margin
xi} has positive measure. This is automatic once one theta recognises MAJORITY_N with a margin
(recognition with a margin is an open condition; the same holds for PARITY at any fixed N), so
the certified cube is reported as that, not as evidence for the conjecture. *Uniform* (the
reading with content): one set of positive measure recognises MAJORITY_N for all large N. That
is open; the checks measure the recognising fraction of a ball around a MAJORITY construction
against N and the radius, with and without positional encodings (verify.checks.ball_recognition,
verify.checks.exact_constructions), and the status is undecided with the evidence stated.
"""

from __future__ import annotations

import math

import numpy as np

from verify.boolean import all_bit_strings, clopper_pearson, make_family
from verify.checks.ball_recognition import ball_counts
from verify.checks.exact_constructions import majority_params
from verify.model.generic.enclosure import enclose_output
from verify.registry import (
    CheckContext,
    FigureData,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)
from verify.statements._eps_zero import CONFIDENCE, DERIVATION, EPS_ZERO

CONJ_5_5 = define_statement(
    id="Conj 5.5",
    title="MAJORITY is recognised on a set of positive measure",
    statement=(
        r"The set of parameters recognising MAJORITY (with margin $\xi$) has positive Lebesgue"
        r" measure. Read at a fixed $N$ this is automatic (recognition with a margin is an open"
        r" condition, true of PARITY too); the reading with content, checked here, is uniform"
        r" in $N$: $\mu(\{\theta : T(\theta,\cdot)$ recognises MAJORITY$_N$ with margin $\xi$"
        r" for all $N \ge N_0\}) > 0$. (Reconstruction; a conjecture with empirical support"
        r" only: open.)"
    ),
    confidence="[note]",
    hypotheses=(EPS_ZERO,),
    bound_formula=(
        r"$\mu\{\theta : T(\theta,\cdot) \text{ recognises MAJORITY}_N \text{ with margin }"
        r" \xi\ \forall N \ge N_0\} > 0$"
    ),
    derivation=DERIVATION + "#6-cor-46-cor-51-54-conj-55",
)

MARGIN = 0.1  # xi
MEASURE_N = Sizes(
    quick=(5, 17, 65, 129),
    default=(5, 17, 65, 129, 257, 513),
    full=(5, 17, 65, 129, 257, 513, 1025),
)
MEASURE_RHO = Sizes(quick=(0.02, 0.05), default=(0.005, 0.02, 0.05), full=(0.005, 0.02, 0.05))
MEASURE_DRAWS = Sizes(quick=30, default=60, full=200)
CUBE_N = Sizes(quick=(3, 5, 7), default=(3, 5, 7, 9), full=(3, 5, 7, 9, 11))  # odd N
RADII = [10.0 ** (-e / 2) for e in range(4, 17)]  # candidate half-widths 1e-2 .. 1e-8
NO_PE = "no positional encoding"
LEARNED = "learned positions (table in theta)"


def _majority(bits: np.ndarray) -> np.ndarray:
    return (2 * bits.sum(axis=1, dtype=np.int64) > bits.shape[1]).astype(np.int8)


@CONJ_5_5.check(
    "uniform in N: recognising fraction of a ball around a MAJORITY construction",
    policy=Policy.ASYMPTOTIC,
)
def measure_vs_n(ctx: CheckContext) -> Outcome:
    """theta ~ Unif(theta* + [-rho, rho]^M) around the MAJORITY construction (D = 4, H = 1,
    eps = 0), the same draws at every odd N: the certified fraction recognising MAJORITY_N with
    margin xi (Clopper-Pearson CI), and the fraction recognising at *every* tested N' <= N (the
    uniform reading needs the latter to stay positive as N grows). Without positions the output
    depends only on the number of ones, so N + 1 strings decide exactly; with a learned position
    table (in theta, zero at theta*) all strings are tested up to N = 10, beyond that one string
    per count plus 64 random ones (a pass is 'not refuted': an upper bound). Each row compares
    the fraction with one draw in the sample (some certified draw recognises: the recognising set
    has positive measure at that N, by openness); the quantifier over all N stays open."""
    ns = ctx.size(MEASURE_N)
    rhos = ctx.size(MEASURE_RHO)
    draws = ctx.size(MEASURE_DRAWS)
    settings = [
        (NO_PE, majority_params(), "counts"),
        (LEARNED, majority_params(pos_encoding="learned", max_len=max(ns)), "sampled"),
    ]
    counts = ball_counts(settings, _majority, ns, rhos, draws, MARGIN, ctx.seed)
    rows: list[Row] = []
    series = []
    for name, _, _ in settings:
        for rho in rhos:
            fr, every, ci_fr, ci_every = [], [], [], []
            for n in ns:
                key = (name, rho, n)
                frac, (lo, hi) = counts.fraction(key, CONFIDENCE)
                exact = "exact" if counts.exact[key] else "upper bound (sampled strings)"
                extra = {
                    "hits": counts.hits[key],
                    "undecided": counts.undecided[key],
                    "draws": draws,
                    "verdict": exact,
                    "rho * (N + 1)": rho * (n + 1),
                }
                tag = f"{name}, rho={rho:g}, N={n}" + ("" if counts.exact[key] else " (upper)")
                rows.append(
                    Row(f"{tag}: fraction recognising", frac, 1 / draws, ">=", (lo, hi), extra)
                )
                all_n = counts.every_n[key] / draws
                rows.append(
                    Row(
                        f"{tag}: fraction recognising at every tested N' <= N",
                        all_n,
                        1 / draws,
                        ">=",
                    )
                )
                fr.append(frac)
                every.append(all_n)
                ci_fr.append((lo, hi))
                ci_every.append(clopper_pearson(counts.every_n[key], draws, CONFIDENCE))
            for label, ys, cis, style in (
                (f"{name}, rho={rho:g}", fr, ci_fr, "o-"),
                (f"{name}, rho={rho:g}, all N' <= N", every, ci_every, "s:"),
            ):
                series.append(
                    {
                        "label": label,
                        "x": list(ns),
                        "y": ys,
                        "ylo": [c[0] for c in cis],
                        "yhi": [c[1] for c in cis],
                        "n": draws,
                        "style": style,
                    }
                )
    first, last = ns[0], ns[-1]
    evidence = []
    for name, _, _ in settings:
        for rho in rhos:
            evidence.append(
                f"{name}, rho={rho:g}: {counts.hits[(name, rho, first)]}/{draws} at N={first},"
                f" {counts.hits[(name, rho, last)]}/{draws} at N={last}"
                f" (every N: {counts.every_n[(name, rho, last)]}/{draws})"
            )
    notes = [
        "evidence: " + "; ".join(evidence),
        "against the uniform reading: the construction's signal at a tie is r = 1/(N+1) (eos input"
        " r g) while a perturbation of size rho moves the eos input by O(rho), so draws are lost"
        " once rho (N + 1) is of order 1; for it: a decaying fraction at a fixed ball does not"
        " exclude a smaller positive-measure set (another mechanism) working for all N",
        "fixed N: every N with a certified hit has a recognising set of positive measure (an open"
        " condition), PARITY included: that reading is automatic (see the certified-cube check)",
    ]
    fig = FigureData(
        name="conj_5_5_measure",
        title=f"Fraction of theta* + [-rho, rho]^M recognising MAJORITY_N (margin {MARGIN})",
        kind="lines",
        data={
            "series": series,
            "xlabel": "N",
            "ylabel": "fraction recognising",
            "logx": True,
            "probability": True,
            "interval": f"{CONFIDENCE:.0%} Clopper-Pearson",
        },
    )
    return Outcome(
        rows=rows,
        arithmetic="rigorous float64 (midpoint-radius) outputs of every tested string",
        parameters={"N": list(ns), "rho": list(rhos), "draws": draws, "margin": MARGIN},
        notes=notes,
        figures=[fig],
        unsettled=[
            "Conj 5.5 quantifies over all N (one set of positive measure for all large N): a"
            " finite sample of N can neither prove nor refute it; the conjecture is open"
        ],
    )


@CONJ_5_5.check(
    "fixed N (automatic, not the conjecture): certified cube around the construction",
    policy=Policy.ASYMPTOTIC,
)
def certified_cube(ctx: CheckContext) -> Outcome:
    """For odd N, the largest r in 10^(-2..-8 by 1/2) such that arb enclosures over the whole
    cube theta* + [-r, r]^M prove T >= xi on MAJORITY's ones and T <= -xi on its zeros: a set
    of positive Lebesgue measure recognising MAJORITY_N with margin xi *at this N*. This is the
    fixed-N reading, automatic for any function recognised with a margin; no certified radius
    down to 1e-8 leaves the check undecided (the arithmetic, not the function, may be the
    limit)."""
    ns = ctx.size(CUBE_N)
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
                (b >= MARGIN) if t else (b <= -MARGIN) for b, t in zip(balls, target, strict=True)
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
                # automatic (recognition with a margin is open): not about the conjecture
                definitional=True,
            )
        )
    notes = [
        "what this shows: at each tested N, a cube of positive measure recognises MAJORITY_N;"
        " any function recognised with a margin at one theta has such a cube, so this says"
        " nothing about the uniform-in-N conjecture",
        "the radius is limited by the wrapping of arb over ~M-dimensional balls, not by the"
        " function",
        "definitional rows: true of any function a theta recognises with a margin (an open"
        " condition), so never counted as holding for the conjecture",
    ]
    return Outcome(
        rows=rows,
        arithmetic="arb balls (64 bits) over the parameter cube",
        parameters={"N": ns, "margin": MARGIN, "radii": RADII},
        notes=notes,
    )
