"""Lemma 2.9 (arXiv 2606.08768, reconstruction): the influence of one bit on the readout vector
is at most C_infl beta(x) beta(x^n) (1/N + delta_{r,n}), with C_infl explicit from the parameter
norms (verify.theory.bounds.c_infl; docs/derivations.md#lemma-29)."""

from __future__ import annotations

import numpy as np

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
from verify.registry import CheckContext, Hypothesis, Outcome, Policy, Sizes, define_statement
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
    bound_formula=r"C_infl(theta) beta(x) beta(x^n) (1/N + delta_{r,n}), C_infl from the norms",
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
