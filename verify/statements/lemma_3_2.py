"""Lemma 3.2 (arXiv 2606.08768, reconstruction): for eps > 0, z <= eps^{-1/2} and
beta <= (1 + eps^{-1/2})^K with K = n_norms layer norms on the path; tight as the layer-norm
inputs shrink. The paper counts one norm per layer (beta_L with L factors, bound exponent L);
both conventions are checked, each with its own beta, and the spec's beta against the paper's
exponent is a convention note (theorems/counterexamples/lemma_3_2_exponent_L.txt), not a
violation.

The upper bound holds for every model by construction (z = 1/sqrt(var + eps) <= eps^{-1/2}
whatever var >= 0 is): its rows test the implementation of z and beta, not a lemma, and are
*definitional* (never counted as holds). The lemma's content is its tightness: beta reaches the
bound as the layer-norm input variance goes to 0 (the tightness check, whose rows compare beta
with a lower bound computed from the parameter norms)."""

from __future__ import annotations

import math

import numpy as np

from verify.checks.adversarial import (
    SEARCH_EXAMPLES,
    draw_flip,
    draw_model,
    maximise_ratio,
    search_outcome,
)
from verify.checks.random_models import MODELS_PER_SCHEME, random_models
from verify.checks.summaries import Worst, definitional
from verify.model import ModelConfig, Params, forward, init_params
from verify.model.arithmetic.rounding import U
from verify.registry import (
    COUNTEREXAMPLES,
    CheckContext,
    FigureData,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)
from verify.statements._eps_positive import DERIVATIONS, EPS_POSITIVE
from verify.theory.bounds import (
    beta_lower_bound,
    lemma_3_2_bound,
    lemma_3_2_per_layer_bound,
    z_max,
)
from verify.theory.norms import n_layer_norms

LEMMA_3_2 = define_statement(
    id="Lemma 3.2",
    title="Deterministic blowup bound (eps > 0)",
    statement=(
        r"For $\epsilon>0$: $z^k_n \le \epsilon^{-1/2}$, hence $\beta(\theta,x)\le"
        r"(1+\epsilon^{-1/2})^K$ for all $\theta, x$, with $K$ the number of layer norms on the"
        r" path (the paper writes $L$, counting one norm per layer; the spec's layers have two)."
    ),
    confidence="[note]",
    hypotheses=(EPS_POSITIVE,),
    bound_formula=(
        r"$\beta \le (1+\epsilon^{-1/2})^K$ ($K$ = config.n_norms, one factor per norm);"
        r" $\beta_L \le (1+\epsilon^{-1/2})^L$ (one factor per layer)"
    ),
    derivation=DERIVATIONS + "#lemma-32",
)

# strings per random model, by budget
STRINGS_PER_MODEL = Sizes(quick=8, default=32, full=64)
# parameter scales 10^0 .. 10^-(k-1) of the tightness sweep: k by budget
TIGHTNESS_SCALES = Sizes(quick=5, default=6, full=7)
EXPONENT_L_STEM = "lemma_3_2_exponent_L"

ROUNDING_NOTE = (
    "bounds include a float64 rounding allowance: beta's bound times 1 + gamma_(5K+8) and z's"
    " times 1 + gamma_6, gamma_n = n u / (1 - n u), u = 2^-53, each rounded up one ulp"
    " (rounded_bounds)"
)


def rounding_allowance(n_roundings: int) -> float:
    """A float64 number >= (1 + u)^n, u = 2^-53: 1 + gamma_n with gamma_n = n u / (1 - n u)
    (Higham, Lemma 3.1: |prod (1 + delta_i)^(+-1) - 1| <= gamma_n), rounded up one ulp."""
    u = U / 2  # the unit roundoff 2^-53
    gamma = n_roundings * u / (1.0 - n_roundings * u)
    return math.nextafter(1.0 + gamma, math.inf)


def rounded_bounds(cfg: ModelConfig) -> tuple[float, float]:
    """Lemma 3.2's bounds on z and beta, enlarged by the float64 rounding of both sides.

    Measured side: the forward pass computes z = 1/sqrt(var + eps) with var >= 0 (a sum of
    squares), then tau = max(1 + z) and beta = prod of K taus: at most 4 roundings per factor
    and K + 4 more, so the computed beta exceeds the exact one by at most (1 + u)^(4K + 4).
    Bound side: (1 + eps^{-1/2})^K is itself computed in float64 (a power, a sum, a power: at
    most K + 4 roundings when pow is within K + 2 ulps). Together at most n = 5K + 8 roundings,
    allowed for by the factor 1 + gamma_n >= (1 + u)^n (:func:`rounding_allowance`) and one
    more upward ulp for the product; for z, n = 6 (sqrt, +, /, and eps^{-1/2}). This is the
    allowance for rounding, not a loosened bound (a relative 1e-15 at K = 4); it matters only
    where the search drives beta to the bound (ratio 1 - 1e-8)."""
    k = n_layer_norms(cfg)
    z = math.nextafter(z_max(cfg) * rounding_allowance(6), math.inf)
    beta = math.nextafter(lemma_3_2_bound(cfg) * rounding_allowance(5 * k + 8), math.inf)
    return z, beta


DEFINITIONAL_NOTE = (
    "definitional: z = 1/sqrt(var + eps) <= eps^-1/2 for every var >= 0, so these rows hold for"
    " every model by construction and test the implementation of z and beta (a failing row is"
    " a bug); the lemma's content is its tightness (the tightness check)"
)


@LEMMA_3_2.check("random parameters of the four init schemes", policy=Policy.STRICT)
def random_parameters(ctx: CheckContext) -> Outcome:
    """Worst max z and max beta against their bounds per init scheme over random models."""
    rng = np.random.default_rng(ctx.seed + 2)
    worst = Worst()
    for scheme, p, _ in random_models(ctx, ctx.size(MODELS_PER_SCHEME)):
        x = rng.integers(0, 2, (ctx.size(STRINGS_PER_MODEL), int(rng.integers(1, 17))))
        r = forward(p, x, diagnostics=True)
        zb, bb = rounded_bounds(p.config)
        worst.add(f"{scheme}: max z vs eps^-1/2", float(r.z.max()), zb)
        worst.add(f"{scheme}: max beta vs (1+eps^-1/2)^K", float(r.beta.max()), bb)
    return Outcome(
        rows=definitional(worst.rows()),
        parameters={"models_per_scheme": ctx.size(MODELS_PER_SCHEME)},
        notes=[ROUNDING_NOTE, DEFINITIONAL_NOTE],
    )


@LEMMA_3_2.check("adversarial search (Hypothesis, target = ratio)", policy=Policy.STRICT)
def adversarial_search(ctx: CheckContext) -> Outcome:
    """Hypothesis drives beta / bound up over structured model knobs and strings."""

    def evaluate(draw):
        p, info = draw_model(draw)
        x, _, finfo = draw_flip(draw, p.config, n_min=1)
        beta = float(forward(p, x[None], diagnostics=True).beta[0])
        bound = rounded_bounds(p.config)[1]
        return beta / bound, {**info, **finfo, "measured": beta, "bound": bound}

    res = maximise_ratio(evaluate, max_examples=ctx.size(SEARCH_EXAMPLES), seed=ctx.seed)
    outcome = search_outcome(LEMMA_3_2.id, ctx, res, "worst beta vs (1+eps^-1/2)^K")
    outcome.rows = definitional(outcome.rows)
    outcome.notes += [ROUNDING_NOTE, DEFINITIONAL_NOTE]
    return outcome


def tightness_config(norm_first: bool) -> ModelConfig:
    return ModelConfig(
        d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, norm_first=norm_first, pos_encoding="none"
    )


@LEMMA_3_2.check("tight as the layer-norm input variance goes to 0", policy=Policy.STRICT)
def tight_as_variance_vanishes(ctx: CheckContext) -> Outcome:
    """beta between the computed lower bound and (1+eps^-1/2)^K as the parameter scale -> 0."""
    rng = np.random.default_rng(ctx.seed + 3)
    rows, series = [], []
    scales = [10.0**-k for k in range(ctx.size(TIGHTNESS_SCALES))]
    for nf in (False, True):
        cfg = tightness_config(nf)
        ratios = []
        for s in scales:
            p = init_params(cfg, "uniform", ctx.seed, s)
            r = forward(p, rng.integers(0, 2, (16, 8)), diagnostics=True)
            upper, lower = rounded_bounds(cfg)[1], beta_lower_bound(p)
            tag = f"{'pre' if nf else 'post'}-LN, scale {s:.0e}"
            upper_row = Row(f"{tag}: max beta vs (1+eps^-1/2)^K", float(r.beta.max()), upper)
            rows += definitional([upper_row])
            rows.append(
                Row(
                    f"{tag}: tightness: min beta vs computed lower bound",
                    float(r.beta.min()),
                    lower,
                    ">=",
                    extra={"lower / upper": lower / upper},
                )
            )
            ratios.append(float(r.beta.min()) / upper)
        series.append({"label": f"{'pre' if nf else 'post'}-LN", "x": scales, "y": ratios})
    last = [s["y"][-1] for s in series]
    gaps = [{**s, "y": [1.0 - r for r in s["y"]]} for s in series]  # distance from the bound
    return Outcome(
        rows=rows,
        parameters={"config": "D=8, L=2, H=2, eps=1e-2, no positions", "scales": scales},
        notes=[
            "every parameter scaled by s (uniform init on [-s, s]): LN inputs shrink as s -> 0;"
            f" min beta / bound at the smallest scale: {', '.join(f'{v:.6f}' for v in last)}",
            "the tightness rows (>=) have content: beta_lower_bound (from the parameter norms)"
            " certifies how close beta comes to the bound; the '<=' rows are definitional",
            ROUNDING_NOTE,
        ],
        figures=[
            FigureData(
                "lemma_3_2_tightness",
                "Lemma 3.2: min beta approaches (1+eps^-1/2)^K as the parameter scale shrinks",
                "lines",
                {
                    "series": gaps,
                    "xlabel": "scale s",
                    "ylabel": "1 - min beta / bound",
                    "logx": True,
                    "logy": True,
                },
            )
        ],
    )


def lemma_3_2_exponent_l_counterexample() -> Params:
    """Parameters on which the spec's beta (one factor per layer norm, two per layer) exceeds
    the paper's (1 + eps^{-1/2})^L: post-LN, L = 2, eps = 1e-2, all parameters in [-1e-3, 1e-3]
    so every layer-norm input has variance ~1e-7 << eps and z ~ eps^{-1/2} at all four norms."""
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, pos_encoding="none")
    return init_params(cfg, "uniform", 0, 1e-3)


def beta_per_layer(z: np.ndarray, cfg: ModelConfig) -> np.ndarray:
    """The paper's blowup, one factor per *layer*: beta_L = prod_l max over the norms of layer
    l and the positions of (1 + z) (a pre-LN final norm joins the last layer). z: (B, K, S)
    from ``forward(..., diagnostics=True)``. Each factor is <= 1 + eps^{-1/2}, so beta_L <=
    (1 + eps^{-1/2})^L: Lemma 3.2 in the paper's convention."""
    k = cfg.n_norms
    layer_of = np.minimum(np.arange(k) // 2, cfg.n_layers - 1)
    out = np.ones(z.shape[0])
    for layer in range(cfg.n_layers):
        out *= 1.0 + z[:, layer_of == layer, :].max(axis=(1, 2))
    return out


def paper_convention_bound(cfg: ModelConfig) -> float:
    """(1 + eps^{-1/2})^L with the same float64 rounding allowance as :func:`rounded_bounds`."""
    bound = lemma_3_2_per_layer_bound(cfg)
    return math.nextafter(bound * rounding_allowance(5 * cfg.n_layers + 8 + 2), math.inf)


@LEMMA_3_2.check(
    "the two conventions: one factor per layer (exponent L) and per norm (exponent K)",
    policy=Policy.STRICT,
)
def two_conventions(ctx: CheckContext) -> Outcome:
    """Convention note, not a violation. The paper's beta has one factor per layer and the
    bound (1+eps^-1/2)^L; the spec's beta (model-spec) one factor per layer norm, two per
    layer, and the bound (1+eps^-1/2)^K. Each beta is checked against its own bound, on the
    documented example of the mismatch (theorems/counterexamples/lemma_3_2_exponent_L.npz,
    every LN input at variance << eps) and on random models; the spec's beta against the
    paper's (1+eps^-1/2)^L is shown in the notes: it fails there, as the conventions say."""
    path = COUNTEREXAMPLES / f"{EXPONENT_L_STEM}.npz"
    example = Params.load(path) if path.exists() else lemma_3_2_exponent_l_counterexample()
    rng = np.random.default_rng(ctx.seed + 9)
    models = [("mismatch example", example)]
    models += [(s, p) for s, p, _ in random_models(ctx, ctx.size(MODELS_PER_SCHEME))]
    worst = Worst()
    mismatch = []
    for name, p in models:
        cfg = p.config
        x = rng.integers(0, 2, (ctx.size(STRINGS_PER_MODEL), 8))
        r = forward(p, x, diagnostics=True)
        b_layer = float(np.nanmax(beta_per_layer(r.z, cfg)))
        b_norm = float(np.nanmax(r.beta))
        worst.add(f"{name}: paper's beta_L vs (1+eps^-1/2)^L", b_layer, paper_convention_bound(cfg))
        worst.add(f"{name}: spec's beta vs (1+eps^-1/2)^K", b_norm, rounded_bounds(cfg)[1])
        if b_norm > paper_convention_bound(cfg):
            mismatch.append(f"{name}: {b_norm:.6g} > {lemma_3_2_per_layer_bound(cfg):.6g}")
    cfg = example.config
    return Outcome(
        rows=definitional(worst.rows()),
        parameters={"example": cfg.to_dict(), "models_per_scheme": ctx.size(MODELS_PER_SCHEME)},
        notes=[
            "convention note (docs/derivations.md#lemma-32): the reconstructed Lemma 3.2 counts"
            " one layer norm per layer, so its beta_L = prod_l max_n (1 + z) has L factors and"
            " the bound (1+eps^-1/2)^L; model-spec's beta multiplies one factor per norm (two"
            " per layer), so its bound has exponent K = n_norms. Both hold, each in its own"
            " convention.",
            f"the spec's beta exceeds the paper's (1+eps^-1/2)^L on {len(mismatch)} of"
            f" {len(models)} models ("
            + ", ".join(mismatch[:3])
            + ")"
            + f" (the documented example {EXPONENT_L_STEM}.npz: every LN input at variance"
            " << eps, so all K factors are near 1 + eps^-1/2): a mismatch of conventions,"
            " not of the paper's argument",
            ROUNDING_NOTE,
        ],
    )
