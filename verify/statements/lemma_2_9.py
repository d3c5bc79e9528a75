"""Lemma 2.9 (arXiv 2606.08768, reconstruction): the influence of one bit on the readout vector
is at most C_infl beta(x) beta(x^n) (1/N + delta_{r,n}), with C_infl explicit from the parameter
norms (verify.theory.bounds.c_infl; docs/derivations.md#lemma-29)."""

from __future__ import annotations

import numpy as np

from verify.checks import constructions, infl_constructions
from verify.checks import gradient_search as gradient_search_mod
from verify.checks.adversarial import (
    EPS_CHOICES,
    SEARCH_EXAMPLES,
    SearchResult,
    draw_flip,
    draw_model,
    maximise_ratio,
    search_outcome,
)
from verify.checks.random_models import MODELS_PER_SCHEME, flips, random_models
from verify.checks.summaries import Worst
from verify.model import Params, forward
from verify.registry import (
    CheckContext,
    FigureData,
    Hypothesis,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)
from verify.statements._eps_positive import DERIVATIONS
from verify.theory.bounds import c_infl, lemma_2_9_bound
from verify.theory.trivial import readout_swing_bound

LEMMA_2_9 = define_statement(
    id="Lemma 2.9",
    title="Influence of one bit bounded by the blowup",
    statement=(
        r"For parameters $\theta$, input $x$ of length $N$, readout position $r$ and flipped"
        r" bit $n$: $I_n = \|y^L_r(\theta,x) - y^L_r(\theta,x^{\oplus n})\|_2 \le C_{infl}\,"
        r"\beta(\theta,x)\,\beta(\theta,x^{\oplus n})\,(1/N + \delta_{r,n})$ (reconstruction;"
        r" the paper's norm is not known, the toolkit uses the Euclidean norm)."
    ),
    confidence="[note]",
    hypotheses=(Hypothesis("any eps >= 0", "holds wherever beta is finite"),),
    bound_formula=(
        r"$C_{\rm infl}(\theta)\,\beta(x)\,\beta(x^{\oplus n})\,(1/N + \delta_{r,n})$,"
        r" $C_{\rm infl}$ from the parameter norms"
    ),
    derivation=DERIVATIONS + "#lemma-29",
)

# flipped strings per random model, by budget
FLIPS_PER_MODEL = Sizes(quick=8, default=16, full=32)


def influence(params: Params, x: np.ndarray, xn: np.ndarray, n: np.ndarray):
    """Measured I_n, Lemma 2.9 bound, and the two forward results."""
    r, rn = forward(params, x, diagnostics=True), forward(params, xn, diagnostics=True)
    meas = np.linalg.norm(r.y_readout - rn.y_readout, axis=1)
    n_bits = x.shape[1]
    at_r = (not params.config.eos) & (n == n_bits - 1)
    bound = lemma_2_9_bound(c_infl(params), r.beta, rn.beta, n_bits, at_r)
    return meas, bound, r, rn


@LEMMA_2_9.check("random parameters of the four init schemes", policy=Policy.STRICT)
def random_parameters(ctx: CheckContext) -> Outcome:
    """Worst I_n / bound per init scheme over random models (eps = 0 included) and flips."""
    rng = np.random.default_rng(ctx.seed + 1)
    worst, undefined, overflow = Worst(), 0, 0
    models = random_models(ctx, ctx.size(MODELS_PER_SCHEME), (0.0, *EPS_CHOICES))
    for scheme, p, scale in models:
        n_bits = int(rng.integers(2, 17))
        x, xn, n = flips(rng, n_bits, ctx.size(FLIPS_PER_MODEL))
        meas, bound, _, _ = influence(p, x, xn, n)
        swing = readout_swing_bound(p)  # trivial: |y - y'| <= 2 sqrt(D) max|g|
        defined = np.isfinite(meas)  # NaN: a 0/0 layer norm at eps = 0
        undefined += int(np.sum(~defined))
        overflow += int(np.sum(defined & np.isinf(bound)))  # C_infl beyond float64
        for i in np.flatnonzero(defined):
            info = {"config": p.config.to_dict(), "scale": scale, "N": n_bits, "n": int(n[i])}
            worst.add(f"{scheme}: worst I_n vs bound", meas[i], bound[i], info, swing)
    return Outcome(
        rows=worst.rows(),
        parameters={"models_per_scheme": ctx.size(MODELS_PER_SCHEME), "N": "2..16"},
        notes=[
            f"worst measured/bound over all schemes: {worst.worst_ratio():.4g}",
            "eps drawn from {0, 1e-5, ..., 1} (the lemma does not need eps > 0);"
            f" {undefined} flips skipped as undefined (0/0 layer norm at eps = 0);"
            f" {overflow} flips had a bound beyond float64 (C_infl overflows: holds trivially)",
        ],
    )


def lemma_2_9_search(ctx: CheckContext, constant_factor: float = 1.0) -> SearchResult:
    """Adversarial search on I_n / (factor * bound); factor < 1 tests that the search has teeth."""

    def evaluate(draw):
        p, info = draw_model(draw, eps_choices=(*EPS_CHOICES, 0.0))
        x, flip, finfo = draw_flip(draw, p.config)
        xn = x.copy()
        xn[flip] ^= 1
        meas, bound, _, _ = influence(p, x[None], xn[None], np.array([flip]))
        b = constant_factor * float(bound[0])
        info = {**info, **finfo, "measured": float(meas[0]), "bound": b}
        return float(meas[0]) / b, {**info, "trivial": readout_swing_bound(p)}

    return maximise_ratio(evaluate, max_examples=ctx.size(SEARCH_EXAMPLES), seed=ctx.seed)


@LEMMA_2_9.check("adversarial search (Hypothesis, target = ratio)", policy=Policy.STRICT)
def adversarial_search(ctx: CheckContext) -> Outcome:
    """Hypothesis drives I_n / bound up over structured model knobs and flips."""
    res = lemma_2_9_search(ctx)
    return search_outcome(LEMMA_2_9.id, ctx, res, "worst I_n vs C_infl beta beta' (1/N + delta)")


# sequence length of the unit attention steps (S >> e^{2R} for R <= 2)
STEP_SEQ_LEN = 4097
# input lengths of the full-model constructions, by budget
CONSTRUCTION_LENGTHS = Sizes(
    quick=(4, 64, 1024), default=(4, 16, 64, 256, 1024), full=(4, 16, 64, 256, 1024)
)
# gradient search: input lengths, random starts, steps per start, by budget
GRADIENT_LENGTHS = Sizes(quick=(4, 16, 64), default=(4, 16, 64, 256), full=(4, 16, 64, 256, 1024))
GRADIENT_STARTS = Sizes(quick=3, default=4, full=4)
GRADIENT_STEPS = Sizes(quick=8, default=10, full=12)


@LEMMA_2_9.check("derivation steps: a near-tight construction per step", policy=Policy.STRICT)
def derivation_steps(ctx: CheckContext) -> Outcome:
    """Each step of the C_infl derivation on its own (layer norm, attention at another position
    and at the flipped one, two heads, MLP), with a construction that makes it nearly tight;
    every bound from the factor functions of verify.theory.bounds."""
    rows = infl_constructions.infl_steps(STEP_SEQ_LEN)
    return Outcome(
        rows=constructions.outcome_rows(rows),
        parameters={"S (attention steps)": STEP_SEQ_LEN},
        notes=[
            *constructions.factor_table(rows),
            "attention at another position: with the attended position flipped from -Y to +Y the"
            " ratio tends to 1/(1 + 2R) (S >> e^{2R}; tight for small R: e^{2R} and the value"
            " term); with its key and value moved radially to their maxima it tends to 1 at any"
            " R (the reweighting term 2 v_c G_k attained too); at the flipped position the"
            " reweighting term v_c (max Δs - min Δs)/2 (Popoviciu) is attained when the query and"
            " the key of n turn apart at p_n = 1/2 (ratio 1.5x/(1 + 1.5x), x = QKY^2/sqrt(d_h));"
            " a query change alone reaches 2/3 of it",
            "blocks evaluated by the numpy transcriptions of model-spec in"
            " verify.checks.constructions (checked against verify.model.plain.forward in"
            " tests/test_constructions.py)",
        ],
        figures=[
            constructions.factor_figure(
                "lemma_2_9_steps_best_ratio",
                "Lemma 2.9: best measured/bound per factor of C_infl (unit steps)",
                rows,
            )
        ],
    )


@LEMMA_2_9.check(
    "constructions: layer-norm corner, MLP corner, concentrated attention", policy=Policy.STRICT
)
def full_constructions(ctx: CheckContext) -> Outcome:
    """I_n against C_infl beta beta' (1/N + delta) on models built for one regime each, N from 4
    to 1024; for concentrated attention also the derived off-position bound bt_L beta beta'/S."""
    rows: list[constructions.StepRow] = []
    series: dict[str, list[float]] = {}
    ns = list(ctx.size(CONSTRUCTION_LENGTHS))
    for n_bits in ns:
        cases = [
            ("layer-norm corner, post-LN", "layer-norm factor g/4, a0", constructions.ln_corner),
            (
                "layer-norm corner, pre-LN",
                "layer-norm factor g/4 (pre-LN)",
                lambda n: constructions.ln_corner(n, True),
            ),
            (
                "pre-LN corner through norm2 and the MLP",
                "layer-norm factor g/4 (pre-LN)",
                infl_constructions.pre_ln_corner,
            ),
            ("MLP corner, post-LN", "MLP factor 1 + F", constructions.mlp_corner),
        ]
        for regime, factor, make in cases:
            p = make(n_bits)
            m, b, _ = constructions.influence(p, n_bits, n_bits - 1)
            rows.append(
                constructions.StepRow(
                    "Lemma 2.9: I_n vs bound", factor, f"{regime}, N={n_bits}", m, b
                )
            )
            series.setdefault(regime, []).append(rows[-1].ratio)
        p = constructions.concentrated_attention(n_bits)
        m, b, off = constructions.influence(p, n_bits, n_bits // 2)
        reg = f"concentrated attention (issue 11), N={n_bits}"
        full = constructions.StepRow("Lemma 2.9: I_n vs bound", "e^{2R} (full constant)", reg, m, b)
        step6 = "Lemma 2.9 step 6: I_n vs bt_L beta beta' / S (r != n)"
        rows += [full, constructions.StepRow(step6, "e^{2R} (off-position bound)", reg, m, off)]
        series.setdefault("concentrated attention", []).append(full.ratio)
        pre = constructions.concentrated_attention(n_bits, norm_first=True)
        mp, bp, _ = constructions.influence(pre, n_bits, n_bits // 2)
        factor = "e^{2R} (full constant, pre-LN)"
        rows.append(
            constructions.StepRow("Lemma 2.9: I_n vs bound", factor, reg + ", pre-LN", mp, bp)
        )
        series.setdefault("concentrated attention, pre-LN", []).append(rows[-1].ratio)
    return Outcome(
        rows=constructions.outcome_rows(rows),
        parameters={"N": ns},
        notes=[
            *constructions.factor_table(rows),
            "post-LN corners tend to N/(N+1) (the readout bit is flipped: 1/N + 1); pre-LN the"
            " plain corner's residual path skips norm1 and norm2 while beta beta' counts them"
            " (ratio 1/16); the pre-LN corner through norm2 and the MLP (FFN(h) = 1000 h, z ~ 1 at"
            " norm2 and the final norm, norm1 saturated so its factor of beta is ~1) tends to"
            " (1 + s)/(4 + s) N/(N+1)",
            "concentrated attention: D = 4, W_q = W_k = 3 e1 e1^T, the eos query attends to the"
            " flipped token; the true constant holds with a large margin (e^{2R} ~ 3e4), the"
            " measured change stays O(1) as N grows, so a constant without e^{2R} fails at large N"
            " (tests/test_mutations.py)",
        ],
        figures=[
            FigureData(
                "lemma_2_9_constructions_vs_n",
                "Lemma 2.9: measured/bound of the constructions vs N",
                "lines",
                {
                    "series": [{"label": k, "x": ns, "y": v} for k, v in series.items()],
                    "xlabel": "N",
                    "ylabel": "I_n / bound",
                    "logx": True,
                    "logy": True,
                    "annotate": "last",  # the ratios near 1 as numbers
                },
            )
        ],
    )


@LEMMA_2_9.check(
    "gradient search (finite differences) in the concentrated-attention regime",
    policy=Policy.STRICT,
)
def gradient_search(ctx: CheckContext) -> Outcome:
    """Finite-difference ascent of log(I_n / bound) over the concentrated-attention family
    (W_q = W_k scale, embedding scale, eos key, W_v, W_o, eps) at each N, post-LN and pre-LN;
    seeded."""
    rows, notes, ns = [], [], list(ctx.size(GRADIENT_LENGTHS))
    best: dict[str, list[float]] = {}
    for norm_first in (False, True):
        tag = "pre-LN" if norm_first else "post-LN"
        for n_bits in ns:
            res, info = gradient_search_mod.search_concentrated_attention(
                n_bits,
                starts=ctx.size(GRADIENT_STARTS),
                steps=ctx.size(GRADIENT_STEPS),
                seed=ctx.seed + n_bits,
                norm_first=norm_first,
            )
            rows.append(
                Row(
                    f"{tag}, N={n_bits}: best I_n vs C_infl beta beta' / N (gradient ascent)",
                    info["measured"],
                    info["bound"],
                    extra=info,
                )
            )
            best.setdefault(tag, []).append(rows[-1].ratio)
            notes.append(f"{tag}, N={n_bits}: ratio {rows[-1].ratio:.4g} at {info['knobs']}")
    return Outcome(
        rows=rows,
        parameters={
            "N": ns,
            "starts": ctx.size(GRADIENT_STARTS),
            "steps": ctx.size(GRADIENT_STEPS),
            "search": "numpy central differences, normalised steps, step halving",
        },
        notes=notes,
        figures=[
            FigureData(
                "lemma_2_9_gradient_search",
                "Lemma 2.9: best I_n / bound found by the gradient search vs N",
                "lines",
                {
                    "series": [{"label": k, "x": ns, "y": v} for k, v in best.items()],
                    "xlabel": "N",
                    "ylabel": "I_n / bound",
                    "logx": True,
                },
            )
        ],
    )
