"""The finite-N quantities behind Thm 4.5's proof (eps = 0), measured: the cumulative blowup's tail
P[beta > t] and its fitted exponent against D - 1 (the toolkit's sequential bound) and (D-1)/K
(the union bound, whose scaling the paper's (D-1)/(2L) follows), and the per-string bad-event
rate P[beta(x) > t_N] at t_N = N^(zeta/2) over N against the explicit bound and its predicted
decay (shared by Thm 4.5 and Lemma 4.2).

The bounds are ``verify.theory.small_ball.blowup_tail_bound`` (min of union and sequential):
P[beta > t] <= Q(K, (D-1)(log t - K u0)) ~ t^-(D-1) (log t)^(K-1), and the union bound
K S C_SB (t^(1/K) - 1)^-(D-1) ~ t^-(D-1)/K. At t_N = N^(zeta/2) with S = N + 1 positions the
sequential bound decays like N^(1 - zeta (D-1)/2) (log N)^(K-1) (:func:`predicted_rate_exponent`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from verify.boolean.sampling import clopper_pearson
from verify.checks.summaries import loglog_slope
from verify.checks.tail_fits import fit_tail_exponent, margin_note
from verify.model import ModelConfig, Params, forward, init_params
from verify.registry import Row
from verify.theory.small_ball import blowup_tail_bound, neighbourhood_blowup_bound

__all__ = [
    "beta_tail_rows",
    "exceedance",
    "predicted_rate_exponent",
    "rate_rows",
    "sample_beta",
]


def sample_beta(
    cfg: ModelConfig, bits: np.ndarray, n_samples: int, *, box: float, seed: int
) -> np.ndarray:
    """beta(theta, x) at one string for n_samples theta ~ Unif[-box, box]^M (init seeds
    seed * n_samples + i); NaN where a layer-norm input is exactly constant."""
    x = np.asarray(bits, dtype=np.uint8).reshape(1, -1)
    return np.array(
        [
            forward(init_params(cfg, "uniform", seed * n_samples + i, box), x, True).beta[0]
            for i in range(n_samples)
        ]
    )


def beta_tail_rows(
    cfg: ModelConfig, betas: np.ndarray, *, seed: int, confidence: float
) -> tuple[list[Row], dict]:
    """Rows for one (D, L): the fitted tail exponent of beta (bootstrap CI over the top 5 %)
    against D - 1 and against (D-1)/K (CI upper end >= each: never decisive, a finite tail is
    fitted low), and the empirical P[beta > t] at the fit's deepest point against the proven
    blowup_tail_bound (side 2: the box [-1, 1]; decisive when its CI lies above)."""
    d, k = cfg.d_model, cfg.n_norms
    b = betas[np.isfinite(betas)]
    fit = fit_tail_exponent(b, tail_fraction=0.05, seed=seed)
    tag = f"D={d}, L={cfg.n_layers} (K={k})"
    extra = {"alpha_hat": fit.alpha, "ci": fit.ci, "hill": fit.hill, "D-1": d - 1}
    rows = [
        Row(f"{tag}: fitted tail exponent of beta (CI upper) vs D-1", fit.ci[1], d - 1, ">=",
            fit.ci, extra, decisive=False),
        Row(f"{tag}: fitted tail exponent of beta (CI upper) vs (D-1)/K", fit.ci[1],
            (d - 1) / k, ">=", fit.ci, extra, decisive=False),
    ]  # fmt: skip
    t_top = float(fit.s_grid[-1])
    hits = int(np.count_nonzero(b > t_top))
    lo, hi = clopper_pearson(hits, b.size, confidence)
    bound = blowup_tail_bound(t_top, d, 2.0, k, cfg.seq_len(3))
    rows.append(
        Row(f"{tag}: P[beta > {t_top:.3g}] vs explicit tail bound", hits / b.size, bound, "<=",
            (lo, hi), decisive=lo > bound, trivial=1.0)
    )  # fmt: skip
    series = {"D": d, "L": cfg.n_layers, "alpha": fit.alpha, "ci": list(fit.ci),
              "notes": margin_note(tag, fit)}  # fmt: skip
    return rows, series


def predicted_rate_exponent(d_model: int, zeta: float) -> float:
    """Exponent p of the sequential bound's decay P[beta(x) > N^(zeta/2)] ~ N^p (log N)^(K-1)
    with S = N + 1 positions: p = 1 - zeta (D - 1)/2."""
    return 1.0 - zeta * (d_model - 1) / 2.0


def exceedance(
    cfg: ModelConfig,
    n_bits: int,
    t: float,
    draws: int,
    rng: np.random.Generator,
    *,
    box: float = 1.0,
    around: Params | None = None,
    rho: float = 0.0,
) -> tuple[int, int]:
    """(hits, undefined): how many of ``draws`` theta give beta(x) > t at a fresh random string
    x of N bits (NaN, an exactly constant LN input, counts as a hit); theta ~ Unif[-box, box]^M,
    or theta ~ around + Unif([-rho, rho]^M)."""
    hits = undefined = 0
    for _ in range(draws):
        if around is None:
            params = init_params(cfg, "uniform", int(rng.integers(2**31)), box)
        else:
            theta = around.flatten()
            params = Params.unflatten(cfg, theta + rng.uniform(-rho, rho, theta.size))
        x = rng.integers(0, 2, (1, n_bits)).astype(np.uint8)
        beta = float(forward(params, x, True).beta[0])
        undefined += not np.isfinite(beta)
        hits += not (beta <= t)
    return hits, undefined


def rate_rows(
    cfg: ModelConfig,
    ns: Sequence[int],
    zeta: float,
    draws: int,
    rng: np.random.Generator,
    *,
    confidence: float,
    side: float,
    k_fraction: float | None = None,
    **where,
) -> tuple[list[Row], dict]:
    """Per N, P[beta(x) > N^(zeta/2)] (Clopper-Pearson) against the explicit bound
    (blowup_tail_bound with S = N + 1; with ``k_fraction``, Lemma 4.2's neighbourhood bound for
    k = k_fraction N, whose bad event contains this one, so the rate is a lower bound on
    P[bad]); decisive when the CI lies above. Plus the fitted log-log slope of the
    rate over N against the predicted exponent 1 - zeta (D-1)/2 (never decisive)."""
    d, k = cfg.d_model, cfg.n_norms
    rows, rates, bounds, cis = [], [], [], []
    for n in ns:
        t = float(n) ** (zeta / 2)
        hits, undefined = exceedance(cfg, n, t, draws, rng, **where)
        lo, hi = clopper_pearson(hits, draws, confidence)
        if k_fraction is None:
            bound = blowup_tail_bound(t, d, side, k, n + 1)
        else:
            bound = neighbourhood_blowup_bound(t, d, side, k, n, max(1, int(k_fraction * n)))
        rates.append(hits / draws)
        bounds.append(bound)
        cis.append((lo, hi))
        rows.append(
            Row(f"D={d}, L={cfg.n_layers}, N={n}: P[beta(x) > N^(zeta/2) = {t:.3g}]",
                hits / draws, bound, "<=", (lo, hi), {"undefined": undefined},
                decisive=lo > bound, trivial=1.0)
        )  # fmt: skip
    p = predicted_rate_exponent(d, zeta)
    # only unsaturated rates carry a slope: 0 (nothing seen) and 1 (t_N still below the typical
    # beta: the regime of the bound has not begun) are left out
    positive = [(n, r) for n, r in zip(ns, rates, strict=True) if 0 < r < 1]
    slope = float("nan")
    if len(positive) >= 2:
        slope = loglog_slope([n for n, _ in positive], [r for _, r in positive])
        rows.append(
            Row(f"D={d}, L={cfg.n_layers}: fitted log-log slope of the rate vs 1 - zeta(D-1)/2",
                slope, p, "<=", extra={"N with 0 < rate < 1": [n for n, _ in positive]},
                decisive=False)
        )  # fmt: skip
    return rows, {"ns": list(ns), "rates": rates, "bounds": bounds, "predicted": p, "slope": slope,
                  "cis": cis, "draws": draws}  # fmt: skip


def rate_series(name: str, info: dict, bound_label: str = "bound") -> list[dict]:
    """Figure series of :func:`rate_rows`' ``info``: the measured rate with its interval and
    sample size, and the explicit bound (dashed), unless that bound is >= 1 at every N (then
    the measured series' label says it is vacuous)."""
    ns = list(info["ns"])
    measured = {"label": f"{name} measured", "x": ns, "y": info["rates"], "n": info["draws"],
                "ylo": [c[0] for c in info["cis"]], "yhi": [c[1] for c in info["cis"]]}  # fmt: skip
    if all(b >= 1 for b in info["bounds"]):  # a probability bound >= 1 says nothing: not drawn
        measured["label"] += f" ({bound_label} >= 1 at every N: vacuous)"
        return [measured]
    return [measured, {"label": f"{name} {bound_label}", "x": ns, "y": info["bounds"],
                       "style": "--"}]  # fmt: skip
