"""Lemma 4.4 (arXiv 2606.08768, reconstruction): global blowup bound by cube covering at eps = 0,
and its conclusion s_N(x, f_theta) <= N - k with high probability.

Checks: on 1-3 dimensional slices of Theta through a degenerate point, certified (arb) bounds on
the measure of the bad set by branch and bound over parameter cubes, a Monte Carlo over a cover
by cubes of side 2 rho that must agree with them, and the explicit slice small-ball bound
(verify.theory.cube_covering); and the sensitivity event itself, estimated directly from
certified signs at x and its neighbours against the chain's explicit bound
(verify.checks.sensitivity_event).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from verify.boolean.sampling import clopper_pearson
from verify.checks.sensitivity_event import k_values, lemma_4_4_bound, sensitivity_samples
from verify.model import ModelConfig, init_params
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
from verify.statements._eps_zero import CONFIDENCE, DERIVATION, EPS_ZERO
from verify.theory.cube_covering import (
    certify_bad_measure,
    degenerate_params,
    monte_carlo_cover,
    slice_small_ball_bound,
    theta_slice,
)

LEMMA_4_4 = define_statement(
    id="Lemma 4.4",
    title="Global blowup bound by cube covering (eps = 0)",
    statement=(
        r"For $\theta\sim\mathrm{Unif}(\Theta)$, w.h.p. $s_N(\mathbf x, T(\theta,\cdot))\le N-k$;"
        r" proof by covering $\Theta$ with cubes of side $2\rho$ and applying Lemma 4.2 per cube."
        r" (Reconstruction.)"
    ),
    confidence="[note]",
    hypotheses=(EPS_ZERO,),
    bound_formula=(
        r"$P_{\Theta}[\text{bad}] = \sum_c \frac{|c|}{|\Theta|} P_c[\text{bad}]"
        r" \le \max_c (\text{Lemma 4.2 bound, side } 2\rho);\ \text{slices: certified"
        r" measure of } \{\exists k,n: \mathrm{var}(d_{kn}) < \delta\}$; sensitivity event:"
        r" $P[s_N(x) > N-k] \le \min\{1, B_{4.2}(t,k) + \min(1, \|w\|_\Theta"
        r" C_{\rm infl}(\Theta)\, t^2/N)\}$"
    ),
    derivation=DERIVATION + "#4-lemma-44",
)


class Slice(NamedTuple):
    """One slice of the plan: k free coordinates, the variance threshold delta, the depth of
    the branch and bound, and the Monte Carlo cover (cubes per axis, draws per cube)."""

    k: int
    delta: float
    depth: int
    cubes_per_axis: int
    draws_per_cube: int


PLAN = Sizes(
    quick=(Slice(1, 1e-2, 10, 4, 40), Slice(1, 1e-3, 10, 4, 40), Slice(2, 1e-3, 4, 2, 40)),
    default=(
        Slice(1, 1e-2, 14, 8, 100),
        Slice(1, 1e-3, 14, 8, 100),
        Slice(2, 1e-3, 6, 4, 60),
        Slice(3, 1e-2, 3, 2, 60),
    ),
    full=(
        Slice(1, 1e-2, 16, 16, 200),
        Slice(1, 1e-3, 16, 16, 200),
        Slice(2, 1e-2, 7, 8, 100),
        Slice(2, 1e-3, 7, 8, 100),
        Slice(3, 1e-2, 5, 4, 100),
    ),
)
HALF_WIDTH = 0.5  # the slice box is theta[free] +- HALF_WIDTH
BITS = np.array([1, 0, 1], dtype=np.uint8)


@LEMMA_4_4.check(
    "cube covering of parameter slices: certified and Monte Carlo", policy=Policy.STATISTICAL
)
def cube_covering(ctx: CheckContext) -> Outcome:
    """On 1-3 dimensional slices of Theta through a degenerate point (D=4, L=1, eps=0): the bad
    set {some position's norm1 input variance <= delta} gets certified lower/upper measure bounds
    by branch and bound (arb enclosures over parameter cubes), tightening as cubes shrink; a
    Monte Carlo over a cover by cubes of side 2 rho (CI per cube, aggregated by volume) must lie
    inside them, and the certified bad measure below the explicit slice small-ball bound."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.0)
    params = degenerate_params(init_params(cfg, "uniform", ctx.seed, 1.0), BITS, 0)
    plan = ctx.size(PLAN)
    rows: list[Row] = []
    notes: list[str] = []
    series = []
    seq_len = cfg.seq_len(BITS.size)
    for k, delta, depth, per_axis, draws in plan:
        free = theta_slice(params, 0, k)
        cover = certify_bad_measure(params, BITS, free, HALF_WIDTH, delta, max_depth=depth)
        mc = monte_carlo_cover(
            params,
            BITS,
            free,
            HALF_WIDTH,
            delta,
            cubes_per_axis=per_axis,
            draws_per_cube=draws,
            seed=ctx.seed + k,
        )
        explicit = slice_small_ball_bound(delta, cfg.d_model, k, HALF_WIDTH, seq_len)
        lo, hi = cover.lower[-1], cover.upper[-1]
        tag = f"k={k}, delta={delta:g}"
        rows.append(
            Row(
                f"{tag}: certified bad fraction (lower) vs explicit bound",
                lo,
                explicit,
                "<=",
                (lo, hi),
                {"cube_side": cover.side[-1]},
                trivial=1.0,  # a fraction of the slice
            )
        )
        # statistical consistency: the CI of the Monte Carlo must meet [lower, upper]
        rows.append(
            Row(
                f"{tag}: Monte Carlo (side {mc.side:g}) CI lower end vs certified upper",
                mc.ci[0],
                hi,
                "<=",
                mc.ci,
                {"estimate": mc.estimate, "worst_cube": float(mc.per_cube.max())},
            )
        )
        rows.append(
            Row(
                f"{tag}: Monte Carlo CI upper end vs certified lower",
                mc.ci[1],
                lo,
                ">=",
                mc.ci,
                {"estimate": mc.estimate},
            )
        )
        notes.append(
            f"{tag}: certified upper bound by cube side "
            + ", ".join(f"{s:.3g}: {u:.4f}" for s, u in zip(cover.side, cover.upper, strict=True))
            + f" ({cover.enclosures} enclosures)"
        )
        series += [
            {"label": f"{tag} certified upper", "x": cover.side, "y": cover.upper},
            {"label": f"{tag} certified lower", "x": cover.side, "y": cover.lower, "style": ":"},
            {
                "label": f"{tag} explicit bound",
                "x": [cover.side[0], cover.side[-1]],
                "y": [explicit, explicit],
                "style": "--",
            },
        ]
    fig = FigureData(
        name="lemma_4_4_cube_covering",
        title="Certified bad-set measure on parameter slices vs cube side (eps = 0)",
        kind="lines",
        data={
            "series": series,
            "xlabel": "cube side",
            "ylabel": "bad fraction of slice",
            "logx": True,
            "logy": True,
        },
    )
    notes.append(
        "watched: every position of layer 0's norm1 (its input is affine in the free bias"
        " coordinates); the slice passes through a point where the readout input is constant"
    )
    return Outcome(
        rows=rows,
        arithmetic="arb balls (64 bits) over parameter cubes; float64 Monte Carlo",
        parameters={"D": 4, "L": 1, "half_width": HALF_WIDTH, "plan": plan},
        notes=notes,
        figures=[fig],
        counterexample=Counterexample(
            setting={"bits": BITS.tolist(), "half_width": HALF_WIDTH, "norm_index": 0},
            params=params,
            stem="lemma_4_4_slice",
        ),
    )


EVENT_N = Sizes(quick=(8, 32, 128), default=(8, 32, 128, 512), full=(8, 64, 512, 1024))
EVENT_DRAWS = Sizes(quick=60, default=200, full=150)  # (theta, x) pairs per (D, N)
EVENT_DIMS = (8, 16)  # D, with L = 1


@LEMMA_4_4.check(
    "the sensitivity event s_N(x) <= N - k estimated directly", policy=Policy.STATISTICAL
)
def sensitivity_event(ctx: CheckContext) -> Outcome:
    """theta ~ Unif[-1,1]^M (D = 8, 16, L = 1, eps = 0), x uniform: P[s_N(x) > N - k] for
    k = 1, N/2, N (Clopper-Pearson; s_N from certified signs of T at x and its N neighbours)
    against the explicit bound of the toolkit's chain (Lemma 4.2's bound plus the small-ball
    of the readout bias; verify.checks.sensitivity_event), which is 1 at tractable N."""
    ns = ctx.size(EVENT_N)
    draws = ctx.size(EVENT_DRAWS)
    rows: list[Row] = []
    series, notes = [], []
    for d in EVENT_DIMS:
        cfg = ModelConfig(d_model=d, n_layers=1, n_heads=2, ln_eps=0.0)
        curves: dict[str, list[tuple[float, float, float]]] = {}
        for n in ns:
            s, uncertain = sensitivity_samples(cfg, n, draws, ctx.seed * 7 + d)
            for k in k_values(n):
                bad = int(np.count_nonzero(s > n - k))
                lo, hi = clopper_pearson(bad, draws, CONFIDENCE)
                kk = "1" if k == 1 else ("N" if k == n else "N/2")
                rows.append(
                    Row(f"D={d}, N={n}, k={kk}: P[s_N(x) > N - k]", bad / draws,
                        lemma_4_4_bound(cfg, n, k), "<=", (lo, hi),
                        {"uncertain_signs": uncertain, "median_s": float(np.median(s))},
                        decisive=lo > lemma_4_4_bound(cfg, n, k), trivial=1.0)
                )  # fmt: skip
                curves.setdefault(kk, []).append((1.0 - bad / draws, 1.0 - hi, 1.0 - lo))
            notes.append(f"D={d}, N={n}: s_N(x) quartiles {np.percentile(s, [25, 50, 75])}")
        for kk, ys in curves.items():
            series.append({"label": f"D={d}, k={kk}", "x": list(ns), "y": [v[0] for v in ys],
                           "ylo": [v[1] for v in ys], "yhi": [v[2] for v in ys],
                           "n": draws})  # fmt: skip
    notes.append(
        "the chain's bound is 1 at these N (C_infl of the box is astronomically large), so the"
        " rows are vacuous; the estimates P[s_N(x) <= N - k] (figure) are the content: with"
        " k = N it is the probability that x is zero-sensitive"
    )
    return Outcome(
        rows=rows,
        arithmetic="rigorous float64 (midpoint-radius) signs of T; Clopper-Pearson",
        parameters={"N": list(ns), "draws": draws, "D": list(EVENT_DIMS), "L": 1, "box": 1.0},
        notes=notes,
        figures=[
            FigureData(
                name="lemma_4_4_sensitivity_event",
                title="P[s_N(x) <= N - k] for theta ~ Unif[-1,1]^M (eps = 0)",
                kind="lines",
                data={
                    "series": series,
                    "xlabel": "N",
                    "ylabel": "P[s_N(x) <= N - k]",
                    "logx": True,
                    "probability": True,
                    "interval": f"{CONFIDENCE:.0%} Clopper-Pearson",
                },
            )
        ],
    )
