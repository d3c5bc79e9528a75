"""Diagnosis of the tail rows that differed between two machines of the same kind (Lemma 4.2's
deep tail, Thm 4.5's blowup tail; quick budget, seed 0).

1. The samples in each fitted tail are trustworthy: Thm 4.5's betas against the mpmath
   reference (beta = prod_k max_n (1 + var^-1/2)), Lemma 4.2's deep-tail z against an mpmath
   recomputation (the centred input recovered from mpmath variances, the redrawn bias block
   added exactly): the largest relative error and how many exceed 1e-12.
2. The fit's grid ends: exp(log s) against s at s_lo, s_hi (in ulps), the count above the
   top threshold before (exp(linspace(log ...)) ends) and after (exact ends), and the margin of
   the interior thresholds. Run it with NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4" to see
   numpy's non-AVX-512 exp/log round the ends the other way.

    PYTHONPATH=. python benchmarks/tail_fit_thresholds.py
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from verify.checks.blowup_tails import sample_beta
from verify.checks.ln_coefficients import sample_conditional_z
from verify.checks.tail_fits import fit_tail_exponent
from verify.model import ModelConfig, init_params
from verify.model.generic.reference import reference_forward
from verify.theory.small_ball import bias_block

BITS = np.array([[1, 0, 1]], dtype=np.uint8)


def ends(label: str, z: np.ndarray, tail_fraction: float) -> None:
    """The grid ends of fit_tail_exponent, old (rounded) and new (exact)."""
    zs, n = np.sort(z), z.size
    k = max(int(round(tail_fraction * n)), 12)
    s_lo, s_hi = zs[n - k - 1], zs[n - 11]
    old = np.exp(np.linspace(math.log(s_lo), math.log(s_hi), 12))
    fit = fit_tail_exponent(z, tail_fraction=tail_fraction, seed=0, n_boot=20)
    ulp = [round((o - s) / np.spacing(s)) for o, s in ((old[0], s_lo), (old[-1], s_hi))]
    print(
        f"  {label}: exp(log s) - s at (s_lo, s_hi) = {ulp} ulp; above top: old"
        f" {np.count_nonzero(z > old[-1])}, new {np.count_nonzero(z > fit.s_grid[-1])};"
        f" at or below s_lo: old {np.count_nonzero(z <= old[0])}, new"
        f" {np.count_nonzero(z <= fit.s_grid[0])}; interior margin {fit.margin:.2g}"
    )


def thm_4_5() -> None:
    print("Thm 4.5 blowup tail (N = 3, 400 theta per (D, L)):")
    grid = [(3, 1), (5, 1), (8, 1), (3, 2), (5, 2), (8, 2)]
    for j, (d, layers) in enumerate(grid):
        cfg = ModelConfig(d_model=d, n_layers=layers, n_heads=1, ln_eps=0.0)
        betas = sample_beta(cfg, BITS, 400, box=1.0, seed=j)
        top = np.argsort(np.where(np.isfinite(betas), betas, -np.inf))[-21:]
        errs = []
        for i in top:
            ref = reference_forward(init_params(cfg, "uniform", j * 400 + i, 1.0), BITS, 50)
            exact = mpmath.fprod(
                max(1 + 1 / mpmath.sqrt(v) for v in ref.var[0, kk]) for kk in range(cfg.n_norms)
            )
            errs.append(float(abs(betas[i] - exact) / exact))
        print(
            f"  D={d}, L={layers}: top {top.size} betas vs mpmath: max rel err"
            f" {max(errs):.2g}, {sum(e > 1e-12 for e in errs)} above 1e-12"
        )
        ends(f"D={d}, L={layers}", betas[np.isfinite(betas)], 0.05)


def lemma_4_2_deep(n_theta: int = 30, n_bias: int = 3000) -> None:
    print(f"Lemma 4.2 deep tail (D = 4, L = 2, {n_theta} theta x {n_bias} bias draws):")
    cfg = ModelConfig(d_model=4, n_layers=2, n_heads=1, ln_eps=0.0)
    d, seed = cfg.d_model, 0
    z = sample_conditional_z(cfg, BITS, n_theta, n_bias, box=1.0, seed=seed)
    rng = np.random.default_rng(seed)  # the sampler's stream, replayed for the exact values
    errs = [[] for _ in range(cfg.n_norms)]
    cut = [np.sort(z[:, :, k].ravel())[-int(2e-3 * z[:, :, k].size) - 2] for k in range(4)]
    with mpmath.workdps(50):
        for i in range(n_theta):
            params = init_params(cfg, "uniform", seed * n_theta + i, scale=1.0)
            for k in range(cfg.n_norms):
                name, _ = bias_block(params, k)
                draws = rng.uniform(-1.0, 1.0, (n_bias, d))  # the redrawn bias blocks b'
                hot = np.flatnonzero(z[i, :, k] >= cut[k])
                if hot.size == 0:
                    continue
                v0 = reference_forward(params, BITS, 50).var[0, k, -1]
                u = []
                for c in range(d):
                    b = params[name].copy()
                    b[c] += 1.0
                    vi = reference_forward(params.with_arrays({name: b}), BITS, 50).var[0, k, -1]
                    u.append(d * (vi - v0 - mpmath.mpf(d - 1) / d**2) / 2)
                for r in hot:
                    b_old = [mpmath.mpf(x) for x in params[name]]
                    w = [u[c] + mpmath.mpf(draws[r, c]) - b_old[c] for c in range(d)]
                    m = mpmath.fsum(w) / d
                    exact = 1 / mpmath.sqrt(mpmath.fsum((x - m) ** 2 for x in w) / d)
                    errs[k].append(float(abs(z[i, r, k] - exact) / exact))
    for k in range(cfg.n_norms):
        e = np.array(errs[k])
        print(
            f"  norm {k}: top {e.size} z vs mpmath: max rel err {e.max():.2g},"
            f" {np.count_nonzero(e > 1e-12)} above 1e-12"
        )
        ends(f"norm {k}", z[:, :, k].ravel(), 2e-3)


if __name__ == "__main__":
    thm_4_5()
    lemma_4_2_deep()
