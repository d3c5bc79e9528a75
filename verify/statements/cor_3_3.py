"""Cor 3.3 (arXiv 2606.08768, reconstruction): for eps > 0 and n off the readout position,
|T(x) - T(x^n)| <= ||w|| C_infl (1 + eps^{-1/2})^{2K} / N (Lemma 2.9 + Lemma 3.2); the measured
influence falls like 1/N (verify.theory.bounds.cor_3_3_bound, docs/derivations.md#cor-33)."""

from __future__ import annotations

import numpy as np

from verify.checks.random_models import (
    MODELS_PER_SCHEME,
    flips,
    length_sweep_model,
    random_models,
    sweep_lengths,
)
from verify.checks.summaries import Worst, loglog_fit, loglog_slope, slope_row
from verify.model import forward
from verify.registry import (
    CheckContext,
    FigureData,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)
from verify.statements._eps_positive import DERIVATIONS, EPS_POSITIVE
from verify.theory.bounds import c_infl, cor_3_3_bound, lemma_2_9_bound, lemma_3_2_bound
from verify.theory.trivial import output_swing_bound

COR_3_3 = define_statement(
    id="Cor 3.3",
    title="O(1/N) effect of one bit flip (eps > 0)",
    statement=(
        r"For $\epsilon>0$ and $n$ not the readout position: $|T(x)-T(x^{\oplus n})| \le"
        r" \|w\|\,C_{infl}(1+\epsilon^{-1/2})^{2K}/N$ (reconstruction: Lemma 2.9 + Lemma 3.2)."
    ),
    confidence="[note]+[inferred]",
    hypotheses=(EPS_POSITIVE,),
    bound_formula=r"$\|w\|\,C_{\rm infl}\,(1+\epsilon^{-1/2})^{2K}/N$",
    derivation=DERIVATIONS + "#cor-33",
)

# flipped strings per random model, by budget
FLIPS_PER_MODEL = Sizes(quick=8, default=16, full=32)


@COR_3_3.check("random parameters of the four init schemes", policy=Policy.STRICT)
def random_parameters(ctx: CheckContext) -> Outcome:
    """Worst N |T(x) - T(x^n)| (n off the readout) against N times the bound, per scheme."""
    rng = np.random.default_rng(ctx.seed + 6)
    worst = Worst()
    for scheme, p, _ in random_models(ctx, ctx.size(MODELS_PER_SCHEME)):
        n_bits = int(rng.integers(2, 17))
        x, xn, n = flips(rng, n_bits, ctx.size(FLIPS_PER_MODEL), include_last=p.config.eos)
        keep = n != n_bits - 1 if not p.config.eos else np.ones(len(n), bool)
        if not keep.any():
            continue
        dt = float(np.abs(forward(p, x[keep]).T - forward(p, xn[keep]).T).max())
        label = f"{scheme}: N max|T(x)-T(x^n)| vs ||w|| C_infl (1+eps^-1/2)^2K"
        worst.add(label, n_bits * dt, cor_3_3_bound(p), None, n_bits * output_swing_bound(p))
    return Outcome(
        rows=worst.rows(),
        parameters={"models_per_scheme": ctx.size(MODELS_PER_SCHEME)},
    )


@COR_3_3.check("length independence: N max influence stays bounded", policy=Policy.STATISTICAL)
def length_independence(ctx: CheckContext) -> Outcome:
    """N max |T(x) - T(x^n)| for one fixed model at N = 8 ... against the bound (proven rows,
    decisive), and the log-log slope of N max |dT| against 0 with a 95% interval (the
    1/N decay: a statistical row, never decisive; trivially the slope is at most 1, as
    |dT| <= the output swing)."""
    rng = np.random.default_rng(ctx.seed + 7)
    p = length_sweep_model()
    bound = cor_3_3_bound(p)
    c = c_infl(p)
    rows, ns, maxima, vec_maxima, beta_max, worst_29 = [], sweep_lengths(ctx), [], [], 0.0, 0.0
    for n_bits in ns:
        k = 8 if n_bits <= 512 else 1
        x, xn, n = flips(rng, n_bits, k, include_last=False)
        m = mv = 0.0
        for xi, xni in zip(x, xn, strict=True):  # one pair per call (memory at large N)
            r, rn = forward(p, xi, diagnostics=True), forward(p, xni, diagnostics=True)
            m = max(m, abs(float(r.T[0] - rn.T[0])))
            infl = float(np.linalg.norm(r.y_readout[0] - rn.y_readout[0]))
            mv = max(mv, infl)
            b29 = float(lemma_2_9_bound(c, r.beta[0], rn.beta[0], n_bits, False))
            worst_29 = max(worst_29, infl / b29)
            beta_max = max(beta_max, float(r.beta[0]), float(rn.beta[0]))
        maxima.append(m)
        vec_maxima.append(mv)
        swing = n_bits * output_swing_bound(p)  # trivial: N |T(x) - T(x')| <= N 2 sqrt(D)|w g|
        rows.append(
            Row(f"N={n_bits}: N max_sampled |T(x)-T(x^n)|", n_bits * m, bound, trivial=swing)
        )
    slope, slope_se = loglog_fit(ns, maxima)
    slope_vec = loglog_slope(ns, vec_maxima)
    scaled = [n * m for n, m in zip(ns, maxima, strict=True)]
    rows.append(
        slope_row("1/N decay: log-log slope of N max |T(x)-T(x^n)| vs N", ns, scaled, trivial=1.0)
    )
    return Outcome(
        rows=rows,
        parameters={"config": p.config.to_dict(), "N": ns, "strings per N": "8 (1 above 512)"},
        notes=[
            f"log-log slope of max sampled |T(x)-T(x^n)| vs N: {slope:.3f} (standard error"
            f" {slope_se:.3f}, linregress; expected about -1)",
            f"log-log slope of max sampled influence I_n = ||y_r(x) - y_r(x^n)||: {slope_vec:.3f};"
            f" worst I_n / Lemma 2.9 bound (C_infl beta beta' / N) on these pairs: {worst_29:.4g}",
            f"largest beta met: {beta_max:.4g} (Lemma 3.2 bound {lemma_3_2_bound(p.config):.4g})",
        ],
        figures=[
            FigureData(
                "cor_3_3_influence_vs_n",
                f"Cor 3.3: max sampled |T(x) - T(x^n)| vs N (log-log slope {slope:.2f}"
                f" ± {slope_se:.2f} s.e.)",
                "lines",
                {
                    "series": [
                        {"label": "max |T(x) - T(x^n)|", "x": ns, "y": maxima},
                        {"label": "max I_n (readout vector)", "x": ns, "y": vec_maxima},
                        {"label": "bound / N", "x": ns, "y": [bound / n for n in ns]},
                    ],
                    "xlabel": "N",
                    "ylabel": "max sampled influence",
                    "logx": True,
                    "logy": True,
                },
            )
        ],
    )
