"""Sec 5 MAJORITY (arXiv 2606.08768, the discussion after Cor 5.4; reconstructed, unnumbered:
the id is ours): MAJORITY has exponentially many zero-sensitivity strings, so Cor 4.6 does not
apply to it. Derivation: docs/boolean.md#majority; the math: verify.theory.majority."""

from __future__ import annotations

from verify.boolean import make_family, sensitivity_profile
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
from verify.theory.majority import majority_k0_formula, majority_polynomial_threshold

SEC_5_MAJORITY = define_statement(
    id="Sec 5 MAJORITY",
    title="MAJORITY has exponentially many zero-sensitivity strings (unnumbered)",
    statement=(
        "For odd $N$, MAJORITY has $K_0(N) = 2^N - 2\\binom{N}{(N-1)/2}$ zero-sensitivity strings "
        "(even $N$: $2^N - \\binom{N}{N/2} - \\binom{N}{N/2+1}$ under either tie rule), which "
        "exceeds $N^c$ for every fixed $c$ once $N$ is large; so Cor 4.6 does not apply to "
        "MAJORITY (reconstructed from the discussion after Cor 5.4; unnumbered, id ours)."
    ),
    confidence="[note]",
    bound_formula=r"$K_0(N) > N^c \text{ for } N \ge N^*(c)$",
    derivation="docs/boolean.md#majority",
)

LARGEST_N = Sizes(quick=15, default=21, full=25)  # exhaustive profiles for N = 1..this
EXPONENTS = range(1, 11)  # c in N^c


@SEC_5_MAJORITY.check("K_0 formula, exhaustive", policy=Policy.STRICT)
def k0_formula(ctx: CheckContext) -> Outcome:
    """The exhaustive K_0 of MAJORITY equals the closed form at every N (both tie rules)."""
    top = ctx.size(LARGEST_N)
    rows = []
    for n in range(1, top + 1):
        ties = ("zero",) if n % 2 else ("zero", "one")
        for tie in ties:
            k0 = int(sensitivity_profile(make_family("majority", n, tie=tie))[0])
            rows.append(Row(f"N={n} tie={tie}: K_0", k0, majority_k0_formula(n, tie), "=="))
    return Outcome(
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings)",
        parameters={"N": f"1..{top}", "tie rules": ["zero", "one"]},
        notes=["bound column: 2^N - 2 C(N,(N-1)/2) (odd N), 2^N - C(N,N/2) - C(N,N/2+1) (even)"],
        counterexample=Counterexample(setting={"N": list(range(1, top + 1))}),
    )


@SEC_5_MAJORITY.check("K_0 exceeds N^c: where", policy=Policy.STRICT)
def polynomial_threshold(ctx: CheckContext) -> Outcome:
    """N*(c), the smallest N beyond which K_0(N) > N^c, for c = 1..10 (exact, with a monotone
    lower bound for the tail)."""
    rows = []
    series = []
    for c in EXPONENTS:
        n_star, n_tail = majority_polynomial_threshold(c)
        k0 = majority_k0_formula(n_star)
        extra = {"N*": n_star, "exact scan up to": n_tail}
        if n_star > 1:
            extra["K_0(N*-1)"] = majority_k0_formula(n_star - 1)
            extra["(N*-1)^c"] = (n_star - 1) ** c
        rows.append(
            Row(f"c={c}: K_0(N*={n_star}) vs N*^c", float(k0), float(n_star**c), ">=", extra=extra)
        )
        series.append(n_star)
    return Outcome(
        rows=rows,
        arithmetic="exact integer (closed form; tail by a monotone lower bound)",
        parameters={"c": list(EXPONENTS), "tie": "zero"},
        notes=[
            "N*(c) = smallest N with K_0(M) > M^c for every M >= N* (default tie rule at even "
            "N). Exact K_0 up to the scan end, then K_0(N) >= 2^N (1 - sqrt(8/(3N))) and "
            "monotonicity cover all larger N. N*(c) for c = 1..10: " + ", ".join(map(str, series)),
            "In Thm 4.5's terms, c = (D-1)/(2L) - 5 <= 10 covers every D <= 30 L + 1.",
        ],
        figures=[
            FigureData(
                "sec5_majority_threshold",
                "Smallest N beyond which MAJORITY's K_0(N) exceeds N^c",
                "lines",
                {
                    "series": [{"label": "N*(c)", "x": list(EXPONENTS), "y": series}],
                    "xlabel": "c",
                    "ylabel": "N*(c)",
                },
            )
        ],
        counterexample=Counterexample(setting={"c": list(EXPONENTS)}),
    )
