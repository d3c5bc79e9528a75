"""Sec 6 random functions (the control of arXiv 2606.08768's random-initialisation experiment;
reconstructed, unnumbered: the id and its '6' are ours): a uniformly random Boolean function has
a zero-sensitivity string with probability -> 1 - 1/e. Derivation:
docs/boolean.md#random-functions; the rate: verify.theory.random_functions."""

from __future__ import annotations

from fractions import Fraction

from verify.boolean.random_functions import (
    MAX_BRUTE_FORCE_N,
    MAX_EXACT_N,
    brute_force_count_no_zero_sensitive,
    count_no_zero_sensitive,
    monte_carlo_probability_some_zero_sensitive,
)
from verify.checks.estimates import ci_contains_rows
from verify.registry import (
    CheckContext,
    Counterexample,
    FigureData,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)
from verify.theory.random_functions import ONE_MINUS_INV_E, chen_stein_radius

SEC_6_RANDOM_FUNCTIONS = define_statement(
    id="Sec 6 random functions",
    title="A uniformly random Boolean function has a zero-sensitivity string w.p. -> 1 - 1/e",
    statement=(
        "For $f$ uniform over all Boolean functions on $N$ bits, $E[K_0] = 1$ and "
        "$P[K_0 \\ge 1] \\to 1 - 1/e \\approx 0.632$ as $N \\to \\infty$ (the control of the "
        "paper's random-initialisation experiment, which quotes 0.63; reconstructed; "
        "unnumbered: the id and its '6' are ours, placing it after Section 5)."
    ),
    confidence="[note]",
    bound_formula=r"$|P[K_0 \ge 1] - (1 - 1/e)| \le (1 - 1/e)(1 + 3N + 3\binom{N}{2}) 2^{-N}$",
    derivation="docs/boolean.md#random-functions",
)

EXACT_SAMPLES = Sizes(quick=20_000, default=100_000, full=400_000)
LIMIT_SIZES = Sizes(quick=[12, 16], default=[12, 14, 16, 18], full=[12, 14, 16, 18, 20])
LIMIT_SAMPLES = Sizes(quick=4000, default=20_000, full=40_000)


@SEC_6_RANDOM_FUNCTIONS.check("exact P[K_0>=1] vs Monte Carlo", policy=Policy.STATISTICAL)
def exact_vs_monte_carlo(ctx: CheckContext) -> Outcome:
    """Exact P[K_0 >= 1] (N <= 5) against brute force (N <= 4) (identities: decisive) and Monte
    Carlo CIs (statistical: a row outside its 99.9% interval is decisive only outside the
    Bonferroni interval over the check's Monte Carlo rows, verify.checks.estimates)."""
    samples = ctx.size(EXACT_SAMPLES)
    rows = []
    exact_values = {}
    for n in range(1, MAX_EXACT_N + 1):
        count = count_no_zero_sensitive(n)
        exact = 1 - Fraction(count, 1 << (1 << n))
        exact_values[n] = exact
        if n <= MAX_BRUTE_FORCE_N:
            brute = brute_force_count_no_zero_sensitive(n)
            rows.append(
                Row(f"N={n}: #{{f: K_0=0}} split method vs brute force", count, brute, "==")
            )
        mc = monte_carlo_probability_some_zero_sensitive(n, samples, ctx.seed + n)
        rows += ci_contains_rows(
            f"N={n}: MC P[K_0>=1] vs exact",
            mc.hits,
            samples,
            float(exact),
            confidence=mc.confidence,
            family=2 * MAX_EXACT_N,
        )
    return Outcome(
        rows=rows,
        arithmetic="exact integer counts; Monte Carlo with Clopper-Pearson 99.9% CIs",
        parameters={"samples": samples, "N": f"1..{MAX_EXACT_N}", "MC seeds": "seed + N"},
        notes=[
            "exact P[K_0>=1]: "
            + ", ".join(f"N={n}: {v} = {float(v):.6f}" for n, v in exact_values.items()),
            "exact method: split the last coordinate and sum over orbit representatives of "
            "Q_(N-1) colourings (reach N <= 5); brute force over all 2^(2^N) functions for "
            "N <= 4.",
        ],
        counterexample=Counterexample(setting={"samples": samples, "seed": ctx.seed}),
    )


@SEC_6_RANDOM_FUNCTIONS.check(
    "Monte Carlo vs 1 - 1/e within the Chen-Stein radius", policy=Policy.STATISTICAL
)
def limit_within_chen_stein_radius(ctx: CheckContext) -> Outcome:
    """Monte Carlo CIs of P[K_0 >= 1] against 1 - 1/e +- delta_N (Chen-Stein)."""
    sizes = ctx.size(LIMIT_SIZES)
    samples = ctx.size(LIMIT_SAMPLES)
    rows = []
    xs, ys, lo, hi, radii = [], [], [], [], []
    for n in sizes:
        mc = monte_carlo_probability_some_zero_sensitive(n, samples, ctx.seed + n)
        delta = chen_stein_radius(n)
        rows += ci_contains_rows(
            f"N={n}: MC P[K_0>=1] vs 1-1/e -+ delta_N",
            mc.hits,
            samples,
            ONE_MINUS_INV_E - delta,
            ONE_MINUS_INV_E + delta,
            confidence=mc.confidence,
            family=2 * len(sizes),
            extra={"delta_N": delta},
        )
        xs.append(n)
        ys.append(mc.estimate)
        lo.append(mc.ci[0])
        hi.append(mc.ci[1])
        radii.append(delta)
    exact_n = list(range(1, MAX_EXACT_N + 1))
    exact_p = [1 - count_no_zero_sensitive(n) / float(1 << (1 << n)) for n in exact_n]
    series = [
        {"label": "exact", "x": exact_n, "y": exact_p},
        {
            "label": "Monte Carlo",
            "x": xs,
            "y": ys,
            "ylo": lo,
            "yhi": hi,
            "n": samples,
            "style": "o",
        },  # fmt: skip
        {"label": "1 - 1/e", "x": [1, max(sizes)], "y": [ONE_MINUS_INV_E] * 2, "style": "--"},
        {
            "label": "1 - 1/e - delta_N (Chen-Stein)",
            "x": xs,
            "y": [ONE_MINUS_INV_E - d for d in radii],
            "style": ":",
        },
    ]
    return Outcome(
        rows=rows,
        arithmetic="Monte Carlo with Clopper-Pearson 99.9% CIs; Chen-Stein radius in float64",
        parameters={"samples": samples, "N": sizes, "MC seeds": "seed + N"},
        notes=[
            "delta_N = (1-1/e)(1 + 3N + 3 C(N,2)) / 2^N bounds |P[K_0>=1] - (1-1/e)| at finite N"
            " (Chen-Stein), so the limit is the statement and delta_N -> 0 its rate; a plain "
            "'limit inside the CI' test would fail at N = 12 with enough samples (P ~ 0.624).",
            "delta_N: " + ", ".join(f"N={n}: {d:.4g}" for n, d in zip(sizes, radii, strict=True)),
            "exact values N=1..5: " + ", ".join(f"{p:.4f}" for p in exact_p),
        ],
        figures=[
            FigureData(
                "sec6_random_functions",
                "P[K_0 >= 1] for a uniformly random Boolean function",
                "lines",
                {
                    "series": series,
                    "xlabel": "N",
                    "ylabel": "P[K_0 >= 1]",
                    "interval": "99.9% Clopper-Pearson",
                },  # fmt: skip
            )
        ],
        counterexample=Counterexample(setting={"samples": samples, "N": sizes, "seed": ctx.seed}),
    )
