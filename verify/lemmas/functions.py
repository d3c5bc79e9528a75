"""Statements about Boolean functions (arXiv 2606.08768, Section 5) and their exhaustive checks.

The statement texts are *reconstructions* (docs/reference/paper-2606.08768.md, Section 3 "Cor
5.1-5.4" and the MAJORITY discussion; the random-function control of the experiments), not
quotes. Cor 5.1-5.4 conclude from Cor 4.6 (premise K_0(N) < N^((D-1)/(2L)-5)) that PARITY,
m-sparse PARITY, DICTATOR and FIRST are almost surely not recognisable for large N; the part a
computer can check is the premise, K_0(N) = 0, measured exhaustively here against the closed
form of verify.boolean.closed_forms. Other modules attach further checks to these ids.

Two statements are unnumbered in the reconstruction; their ids are ours:
"Sec 5 MAJORITY" (the MAJORITY discussion after Cor 5.4) and "Sec 6 random functions" (the
uniformly-random-function control, P[K_0 >= 1] -> 1 - 1/e, reported in the experiments).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy as np

from verify.boolean import (
    closed_form_profile,
    make_family,
    sensitivity,
    sensitivity_profile,
)
from verify.boolean.random_functions import (
    MAX_BRUTE_FORCE_N,
    MAX_EXACT_N,
    brute_force_count_no_zero_sensitive,
    count_no_zero_sensitive,
    monte_carlo_probability_some_zero_sensitive,
)
from verify.lemmas.registry import (
    COUNTEREXAMPLES,
    CheckContext,
    CheckResult,
    FigureData,
    Hypothesis,
    Row,
    Status,
    define_statement,
    statement_check,
)

_PREMISE = (
    "By Cor 4.6 (a function family with $K_0(N) < N^{(D-1)/(2L)-5}$ for all large $N$ is, for "
    "almost every $\\theta$ in the box, not recognised with margin $\\xi$ for all sufficiently "
    "large $N$)"
)


def _corollary(cor_id: str, name: str, premise: str, remark: str = "") -> Any:
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
        bound_formula=r"K_0(N) = 0 < N^{(D-1)/(2L)-5}",
        derivation="docs/boolean.md",
    )


COR_5_1 = _corollary(
    "Cor 5.1", "PARITY", "PARITY $x_1 \\oplus \\dots \\oplus x_N$ has $s(x) = N$ for every $x$"
)
COR_5_2 = _corollary(
    "Cor 5.2",
    "m-sparse PARITY",
    "the parity of a fixed set of $m \\ge 1$ bits has $s(x) = m$ for every $x$ (minimum "
    "sensitivity $m$)",
)
COR_5_3 = _corollary(
    "Cor 5.3",
    "DICTATOR",
    "a dictator $f(x) = x_i$ (or $1 - x_i$) has $s(x) = 1$ for every $x$",
    " Its average sensitivity is only 1. That 5.3 is DICTATOR and 5.4 FIRST is inferred.",
)
COR_5_4 = _corollary(
    "Cor 5.4",
    "FIRST",
    "FIRST, $f(x) = x_1$, has $s(x) = 1$ for every $x$",
    " Its average sensitivity is 1, so average sensitivity cannot explain this.",
)

MAJORITY = define_statement(
    id="Sec 5 MAJORITY",
    title="MAJORITY has exponentially many zero-sensitivity strings (unnumbered)",
    statement=(
        "For odd $N$, MAJORITY has $K_0(N) = 2^N - 2\\binom{N}{(N-1)/2}$ zero-sensitivity strings "
        "(even $N$: $2^N - \\binom{N}{N/2} - \\binom{N}{N/2+1}$ under either tie rule), which "
        "exceeds $N^c$ for every fixed $c$ once $N$ is large; so Cor 4.6 does not apply to "
        "MAJORITY (reconstructed from the discussion after Cor 5.4; unnumbered, id ours)."
    ),
    confidence="[note]",
    bound_formula=r"K_0(N) > N^c \text{ for } N \ge N^*(c)",
    derivation="docs/boolean.md#majority",
)

RANDOM_FUNCTIONS = define_statement(
    id="Sec 6 random functions",
    title="A uniformly random Boolean function has a zero-sensitivity string w.p. -> 1 - 1/e",
    statement=(
        "For $f$ uniform over all Boolean functions on $N$ bits, $E[K_0] = 1$ and "
        "$P[K_0 \\ge 1] \\to 1 - 1/e \\approx 0.632$ as $N \\to \\infty$ (the control of the "
        "paper's random-initialisation experiment, which quotes 0.63; reconstructed; "
        "unnumbered: the id and its '6' are ours, placing it after Section 5)."
    ),
    confidence="[note]",
    bound_formula=r"|P[K_0 \ge 1] - (1 - 1/e)| \le (1 - 1/e)(1 + 3N + 3\binom{N}{2}) 2^{-N}",
    derivation="docs/boolean.md#random-functions",
)


# ---------------------------------------------------------------------------------------------
# helpers


def _finish(result: CheckResult, setting: dict[str, Any]) -> CheckResult:
    """Set the status from the rows; on a violation save the setting as a counterexample."""
    if all(r.ok for r in result.rows):
        result.status = Status.HOLDS
        return result
    result.status = Status.VIOLATED
    COUNTEREXAMPLES.mkdir(parents=True, exist_ok=True)
    slug = "".join(c if c.isalnum() else "_" for c in f"{result.statement_id}_{result.check_name}")
    path = COUNTEREXAMPLES / f"{slug.lower()}.json"
    failing = [
        {"label": r.label, "measured": r.measured, "bound": r.bound, "relation": r.relation}
        for r in result.rows
        if not r.ok
    ]
    path.write_text(json.dumps({"setting": setting, "failing_rows": failing}, indent=1))
    result.counterexample = str(path.relative_to(COUNTEREXAMPLES.parents[1]))
    return result


def _premise_rows(family: str, n: int, params: dict[str, Any]) -> list[Row]:
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


def _sizes(ctx: CheckContext) -> list[int]:
    return ctx.pick(
        quick=[1, 2, 5, 8, 12], default=[1, 2, 5, 8, 12, 16, 20], full=[1, 4, 8, 16, 24]
    )


_PREMISE_NOTE = (
    "K_0(N) = 0 at every tested N: the premise K_0(N) < N^e of Cor 4.6 holds for every exponent "
    "e = (D-1)/(2L) - 5 (N^e > 0). Targets (min/max s, K_0, average sensitivity) come from the "
    "sympy closed form, measured values from the Numba kernel's s(x) for all 2^N strings."
)


def _premise_result(
    stmt: str, name: str, cases: list[tuple[str, int, dict[str, Any]]], ctx: CheckContext
) -> CheckResult:
    rows = [row for fam, n, params in cases for row in _premise_rows(fam, n, params)]
    result = CheckResult(
        stmt,
        name,
        Status.UNDECIDED,
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings)",
        seed=ctx.seed,
        parameters={"cases": [f"{fam}(N={n}, {p})" for fam, n, p in cases]},
        notes=[_PREMISE_NOTE],
    )
    return _finish(result, {"cases": [[fam, n, p] for fam, n, p in cases]})


_PREMISE_CHECK = "premise: exhaustive sensitivity profile"


@statement_check("Cor 5.1", name=_PREMISE_CHECK)
def _parity(ctx: CheckContext) -> CheckResult:
    return _premise_result("Cor 5.1", _PREMISE_CHECK, [("parity", n, {}) for n in _sizes(ctx)], ctx)


@statement_check("Cor 5.2", name=_PREMISE_CHECK)
def _sparse_parity(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed)
    cases = []
    for n in _sizes(ctx):
        for m in sorted({1, 2, (n + 1) // 2, n} & set(range(1, n + 1))):
            subset = sorted(int(v) for v in rng.choice(np.arange(1, n + 1), m, replace=False))
            cases.append(("sparse_parity", n, {"subset": subset}))
    return _premise_result("Cor 5.2", _PREMISE_CHECK, cases, ctx)


@statement_check("Cor 5.3", name=_PREMISE_CHECK)
def _dictator(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed)
    cases = []
    for n in _sizes(ctx):
        for i in sorted({int(rng.integers(1, n + 1)), n}):
            cases.append(("dictator", n, {"i": i, "negate": bool(rng.integers(0, 2))}))
    return _premise_result("Cor 5.3", _PREMISE_CHECK, cases, ctx)


@statement_check("Cor 5.4", name=_PREMISE_CHECK)
def _first(ctx: CheckContext) -> CheckResult:
    cases = [("first", n, {"negate": neg}) for n in _sizes(ctx) for neg in (False, True)]
    return _premise_result("Cor 5.4", _PREMISE_CHECK, cases, ctx)


# ---------------------------------------------------------------------------------------------
# MAJORITY


def majority_k0_formula(n: int, tie: str = "zero") -> int:
    """K_0 of MAJORITY on n bits: 2^n - 2 C(n, (n-1)/2) (odd n); 2^n - C(n, n/2) - C(n, n/2+1)
    (even n, the same under both tie rules by symmetry C(n, n/2-1) = C(n, n/2+1))."""
    if n % 2:
        return (1 << n) - 2 * math.comb(n, (n - 1) // 2)
    other = n // 2 + 1 if tie == "zero" else n // 2 - 1
    return (1 << n) - math.comb(n, n // 2) - math.comb(n, other)


def _majority_lower_bound_exceeds(n: int, c: int) -> bool:
    """Whether 2^n (1 - sqrt(8/(3n))) > n^c, decided in exact integers.

    From C(2h, h) <= 4^h / sqrt(pi h): K_0(n) >= 2^n (1 - sqrt(8/(pi n))) >= 2^n (1 -
    sqrt(8/(3n))) for every n >= 1 (odd n: 2 C(n, (n-1)/2) = C(n+1, (n+1)/2); even n:
    C(n, n/2) + C(n, n/2+1) <= 2 C(n, n/2))."""
    gap = (1 << n) - n**c
    return gap > 0 and gap * gap * 3 * n > 8 * (1 << (2 * n))


def majority_polynomial_threshold(c: int, tie: str = "zero") -> tuple[int, int]:
    """(N*, N_tail): K_0(N) > N^c for every N >= N*, and N* - 1 fails (or N* = 1).

    Exact K_0 is scanned up to N_tail, the first N >= c / ln 2 at which the lower bound
    2^N (1 - sqrt(8/(3N))) exceeds N^c; beyond N_tail that bound over N^c is increasing (both
    2^N / N^c and 1 - sqrt(8/(3N)) increase there), so no failure can follow."""
    last_fail = 0
    n = 1
    while True:
        if majority_k0_formula(n, tie) <= n**c:
            last_fail = n
        if n >= c / math.log(2) and _majority_lower_bound_exceeds(n, c):
            return last_fail + 1, n
        n += 1


@statement_check("Sec 5 MAJORITY", name="K_0 formula, exhaustive")
def _majority_formula(ctx: CheckContext) -> CheckResult:
    top = ctx.pick(quick=15, default=21, full=25)
    rows = []
    for n in range(1, top + 1):
        ties = ("zero",) if n % 2 else ("zero", "one")
        for tie in ties:
            k0 = int(sensitivity_profile(make_family("majority", n, tie=tie))[0])
            rows.append(Row(f"N={n} tie={tie}: K_0", k0, majority_k0_formula(n, tie), "=="))
    result = CheckResult(
        "Sec 5 MAJORITY",
        "K_0 formula, exhaustive",
        Status.UNDECIDED,
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings)",
        seed=ctx.seed,
        parameters={"N": f"1..{top}", "tie rules": ["zero", "one"]},
        notes=["bound column: 2^N - 2 C(N,(N-1)/2) (odd N), 2^N - C(N,N/2) - C(N,N/2+1) (even)"],
    )
    return _finish(result, {"N": list(range(1, top + 1))})


@statement_check("Sec 5 MAJORITY", name="K_0 exceeds N^c: where")
def _majority_polynomial(ctx: CheckContext) -> CheckResult:
    rows = []
    series = []
    for c in range(1, 11):
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
    result = CheckResult(
        "Sec 5 MAJORITY",
        "K_0 exceeds N^c: where",
        Status.UNDECIDED,
        rows=rows,
        arithmetic="exact integer (closed form; tail by a monotone lower bound)",
        seed=ctx.seed,
        parameters={"c": list(range(1, 11)), "tie": "zero"},
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
                    "series": [{"label": "N*(c)", "x": list(range(1, 11)), "y": series}],
                    "xlabel": "c",
                    "ylabel": "N*(c)",
                },
            )
        ],
    )
    return _finish(result, {"c": list(range(1, 11))})


# ---------------------------------------------------------------------------------------------
# random functions

_LIMIT = 1.0 - math.exp(-1.0)


@statement_check("Sec 6 random functions", name="exact P[K_0>=1] vs Monte Carlo")
def _random_exact(ctx: CheckContext) -> CheckResult:
    samples = ctx.pick(quick=20_000, default=100_000, full=400_000)
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
        rows.append(
            Row(
                f"N={n}: MC CI lower <= exact P",
                mc.ci[0],
                float(exact),
                "<=",
                ci=mc.ci,
                extra={"estimate": mc.estimate, "samples": samples},
            )
        )
        rows.append(
            Row(
                f"N={n}: exact P <= MC CI upper",
                float(exact),
                mc.ci[1],
                "<=",
                ci=mc.ci,
                extra={"estimate": mc.estimate, "samples": samples},
            )
        )
    result = CheckResult(
        "Sec 6 random functions",
        "exact P[K_0>=1] vs Monte Carlo",
        Status.UNDECIDED,
        rows=rows,
        arithmetic="exact integer counts; Monte Carlo with Clopper-Pearson 99.9% CIs",
        seed=ctx.seed,
        parameters={"samples": samples, "N": f"1..{MAX_EXACT_N}", "MC seeds": "seed + N"},
        notes=[
            "exact P[K_0>=1]: "
            + ", ".join(f"N={n}: {v} = {float(v):.6f}" for n, v in exact_values.items()),
            "exact method: split the last coordinate and sum over orbit representatives of "
            "Q_(N-1) colourings (reach N <= 5); brute force over all 2^(2^N) functions for "
            "N <= 4.",
        ],
    )
    return _finish(result, {"samples": samples, "seed": ctx.seed})


def chen_stein_radius(n: int) -> float:
    """delta_N with |P[K_0 >= 1] - (1 - 1/e)| <= delta_N for a uniform random f on N bits.

    Chen-Stein (Arratia, Goldstein, Gordon 1989) for K_0 = sum_x I_x, I_x = [s(x) = 0],
    p_x = 2^-N, lambda = E K_0 = 1, dependency sets B_x = {y : d(x, y) <= 2} (I_x is
    independent of the I_y with d(x, y) >= 3: their neighbourhoods are disjoint), so b3 = 0,
    b1 = 2^N |B_x| 4^-N, b2 = 2^N (N + C(N,2)) 2 4^-N (two closed neighbourhoods at distance 1
    or 2 cover 2N points), and |P[K_0 = 0] - e^-1| <= (1 - e^-1)(b1 + b2)."""
    pairs = 1 + n + math.comb(n, 2)
    near = n + math.comb(n, 2)
    return (1.0 - math.exp(-1.0)) * (pairs + 2 * near) / 2.0**n


_LIMIT_CHECK = "Monte Carlo vs 1 - 1/e within the Chen-Stein radius"


@statement_check("Sec 6 random functions", name=_LIMIT_CHECK)
def _random_limit(ctx: CheckContext) -> CheckResult:
    sizes = ctx.pick(quick=[12, 16], default=[12, 14, 16, 18], full=[12, 14, 16, 18, 20])
    samples = ctx.pick(quick=4000, default=20_000, full=40_000)
    rows = []
    xs, ys, lo, hi, radii = [], [], [], [], []
    for n in sizes:
        mc = monte_carlo_probability_some_zero_sensitive(n, samples, ctx.seed + n)
        delta = chen_stein_radius(n)
        extra = {"estimate": mc.estimate, "samples": samples, "delta_N": delta}
        rows.append(
            Row(
                f"N={n}: MC CI lower <= 1-1/e + delta_N",
                mc.ci[0],
                _LIMIT + delta,
                "<=",
                ci=mc.ci,
                extra=extra,
            )
        )
        rows.append(
            Row(
                f"N={n}: 1-1/e - delta_N <= MC CI upper",
                _LIMIT - delta,
                mc.ci[1],
                "<=",
                ci=mc.ci,
                extra=extra,
            )
        )
        xs.append(n)
        ys.append(mc.estimate)
        lo.append(mc.ci[0])
        hi.append(mc.ci[1])
        radii.append(delta)
    exact_n = list(range(1, MAX_EXACT_N + 1))
    exact_p = [1 - count_no_zero_sensitive(n) / float(1 << (1 << n)) for n in exact_n]
    result = CheckResult(
        "Sec 6 random functions",
        _LIMIT_CHECK,
        Status.UNDECIDED,
        rows=rows,
        arithmetic="Monte Carlo with Clopper-Pearson 99.9% CIs; Chen-Stein radius in float64",
        seed=ctx.seed,
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
                    "series": [
                        {"label": "exact", "x": exact_n, "y": exact_p},
                        {"label": "Monte Carlo", "x": xs, "y": ys, "style": "o"},
                        {"label": "99.9% CI lower", "x": xs, "y": lo, "style": "^"},
                        {"label": "99.9% CI upper", "x": xs, "y": hi, "style": "v"},
                        {
                            "label": "1 - 1/e",
                            "x": [1, max(sizes)],
                            "y": [_LIMIT, _LIMIT],
                            "style": "--",
                        },
                        {
                            "label": "1 - 1/e - delta_N (Chen-Stein)",
                            "x": xs,
                            "y": [_LIMIT - d for d in radii],
                            "style": ":",
                        },
                    ],
                    "xlabel": "N",
                    "ylabel": "P[K_0 >= 1]",
                },
            )
        ],
    )
    return _finish(result, {"samples": samples, "N": sizes, "seed": ctx.seed})
