"""Gradient-based search for measured/bound of the eps > 0 constants (numpy finite differences).

:func:`fd_ascent` climbs a smooth objective (here log(measured / bound)) over a box of knobs by
normalised central-difference gradient steps with step halving, from seeded random starts. It is
deterministic given its seed. Two uses:

- Lemma 2.9 (:func:`search_concentrated_attention`): the knobs of
  :func:`verify.checks.constructions.concentrated_attention` (W_q = W_k scale, embedding scale,
  the eos key, W_v and W_o scales, eps) at a fixed N, maximising I_n / (C_infl beta beta' / N).
- Lemma 3.1 (:func:`worst_direction_ratio`): for fixed parameters theta and a string x the
  worst perturbation direction is the gradient of T in theta; it is computed by central
  differences (M + M forward passes), and the pair theta, theta + t grad T / ||grad T|| is
  compared with C_Lip of the pair. :func:`search_lipschitz` climbs that ratio over the knobs
  of the transparent model (``lipschitz_constructions.transparent_model``), and
  :func:`random_worst_directions` evaluates it on random initialisations.

The torch extra is not needed (no autograd): every derivative is a finite difference of the
float64 forward pass, so the searches run wherever the package does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from verify.checks import constructions as con
from verify.checks import lipschitz_constructions as lip_con
from verify.model import Params, forward, init_params
from verify.theory import bounds
from verify.theory.norms import max_norms, parameter_norms

__all__ = [
    "AscentResult",
    "fd_ascent",
    "search_concentrated_attention",
    "search_lipschitz",
    "worst_direction_ratio",
]


@dataclass
class AscentResult:
    x: np.ndarray
    value: float
    evaluations: int
    history: list[float] = field(default_factory=list)  # best value after each step


def fd_ascent(
    objective: Callable[[np.ndarray], float],
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    starts: int,
    steps: int,
    seed: int,
    h: float = 1e-3,
    step0: float = 0.25,
) -> AscentResult:
    """Maximise ``objective`` on the box [lower, upper] (non-finite values count as -inf):
    ``starts`` seeded uniform starts, then ``steps`` normalised central-difference gradient
    steps each (length step0 * box width, halved when a step does not improve)."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    width = upper - lower
    rng = np.random.default_rng(seed)
    evals = 0

    def f(x: np.ndarray) -> float:
        nonlocal evals
        evals += 1
        v = objective(np.clip(x, lower, upper))
        return v if math.isfinite(v) else -math.inf

    best = AscentResult(lower.copy(), -math.inf, 0)
    for _ in range(starts):
        x = lower + width * rng.random(lower.size)
        fx = f(x)
        length = step0
        for _ in range(steps):
            g = np.empty_like(x)
            for i in range(x.size):
                e = np.zeros_like(x)
                e[i] = h * width[i]
                g[i] = (f(x + e) - f(x - e)) / (2 * h)
            norm = float(np.linalg.norm(g))
            if not math.isfinite(norm) or norm == 0:
                break
            while length > 1e-4:
                cand = np.clip(x + length * width * g / norm, lower, upper)
                fc = f(cand)
                if fc > fx:
                    x, fx = cand, fc
                    break
                length /= 2
            if fx > best.value:
                best.x, best.value = x.copy(), fx
            best.history.append(best.value)
        if fx > best.value:
            best.x, best.value = x.copy(), fx
    best.evaluations = evals
    return best


def _log_ratio(measured: float, bound: float) -> float:
    """log(measured / bound), -inf where it is undefined (0 or an infinite bound)."""
    with np.errstate(all="ignore"):
        r = measured / bound if bound > 0 else math.nan
    return math.log(r) if r > 0 and math.isfinite(r) else -math.inf


# ----------------------------------------------------------------------------- Lemma 2.9
# knobs: log10 W_q = W_k scale, log10 embedding scale, eos key, log10 W_v, log10 W_o, log10 eps
ATTENTION_LOWER = np.array([-1.0, -1.0, 0.0, -1.0, -1.0, -5.0])
ATTENTION_UPPER = np.array([1.0, 1.0, 1.5, 1.0, 1.0, 0.0])


def concentrated_model(knobs: np.ndarray, n_bits: int, norm_first: bool = False) -> Params:
    ls, le, ek, lv, lo, leps = (float(k) for k in knobs)
    return con.concentrated_attention(
        n_bits,
        scale=10.0**ls,
        emb=10.0**le,
        eos_key=ek,
        value=10.0**lv,
        out=10.0**lo,
        eps=10.0**leps,
        norm_first=norm_first,
    )


def search_concentrated_attention(
    n_bits: int, *, starts: int, steps: int, seed: int, norm_first: bool = False
) -> tuple[AscentResult, dict]:
    """Maximise I_n / Lemma 2.9 bound over the concentrated-attention family at length N (the
    middle bit of 0...0 flipped, eos readout; post-LN or pre-LN). Returns the ascent and the
    best point's record."""

    def objective(k: np.ndarray) -> float:
        p = concentrated_model(k, n_bits, norm_first)
        m, b, _ = con.influence(p, n_bits, n_bits // 2)
        return _log_ratio(m, b)

    res = fd_ascent(
        objective, ATTENTION_LOWER, ATTENTION_UPPER, starts=starts, steps=steps, seed=seed
    )
    best = concentrated_model(res.x, n_bits, norm_first)
    m, b, off = con.influence(best, n_bits, n_bits // 2)
    names = ("log10 scale", "log10 emb", "eos key", "log10 W_v", "log10 W_o", "log10 eps")
    info = {
        "N": n_bits,
        "norm_first": norm_first,
        "knobs": dict(zip(names, (round(float(v), 4) for v in res.x), strict=True)),
        "measured": m,
        "bound": b,
        "off-position bound bt_L beta beta'/S": off,
        "evaluations": res.evaluations,
    }
    return res, info


# ----------------------------------------------------------------------------- Lemma 3.1
def theta_gradient(p: Params, x: np.ndarray, rel: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of T(theta, x) in theta (all M coordinates)."""
    theta = p.flatten()
    bits = np.asarray(x, dtype=np.uint8)[None]
    grad = np.empty_like(theta)
    cfg = p.config
    for i in range(theta.size):
        h = rel * max(1.0, abs(theta[i]))
        tp, tm = theta.copy(), theta.copy()
        tp[i] += h
        tm[i] -= h
        up = forward(Params.unflatten(cfg, tp), bits).T[0]
        dn = forward(Params.unflatten(cfg, tm), bits).T[0]
        grad[i] = (up - dn) / (2 * h)
    return grad


def worst_direction_ratio(p: Params, x: np.ndarray, step: float = 1e-4) -> tuple[float, float]:
    """(|T(theta + Δ, x) - T(theta, x)|, C_Lip(theta, theta + Δ) ||Δ||) for Δ of length
    ``step`` (relative to max(1, ||theta||)) along the finite-difference gradient of T."""
    g = theta_gradient(p, x)
    norm = float(np.linalg.norm(g))
    if norm == 0 or not math.isfinite(norm):
        return 0.0, 1.0
    delta = step * max(1.0, float(np.linalg.norm(p.flatten()))) * g / norm
    q = Params.unflatten(p.config, p.flatten() + delta)
    bits = np.asarray(x, dtype=np.uint8)[None]
    dt = abs(float(forward(q, bits).T[0] - forward(p, bits).T[0]))
    lip = bounds.c_lip(max_norms(parameter_norms(p), parameter_norms(q)))
    return dt, lip * float(np.linalg.norm(delta))


# knobs of the transparent model: log10 y, log10 W_q = W_k, log10 W_v
LIP_LOWER = np.array([-3.0, -2.0, -1.0])
LIP_UPPER = np.array([0.0, 1.0, 2.0])


def search_lipschitz(
    n_bits: int, *, starts: int, steps: int, seed: int
) -> tuple[AscentResult, dict]:
    """Maximise |ΔT| / (C_Lip ||Δθ||) along the worst direction over the transparent model's
    knobs (alternating string of length N)."""
    x = (np.arange(n_bits) % 2).astype(np.uint8)

    def model(k: np.ndarray) -> Params:
        ly, lqk, lv = (float(v) for v in k)
        return lip_con.transparent_model(1, y=10.0**ly, qk=10.0**lqk, v=10.0**lv)

    def objective(k: np.ndarray) -> float:
        m, b = worst_direction_ratio(model(k), x)
        return _log_ratio(m, b)

    res = fd_ascent(objective, LIP_LOWER, LIP_UPPER, starts=starts, steps=steps, seed=seed)
    m, b = worst_direction_ratio(model(res.x), x)
    names = ("log10 y", "log10 W_q = W_k", "log10 W_v")
    info = {
        "N": n_bits,
        "knobs": dict(zip(names, (round(float(v), 4) for v in res.x), strict=True)),
        "measured": m,
        "bound": b,
        "evaluations": res.evaluations,
    }
    return res, info


def random_worst_directions(configs, n_bits: int, seed: int) -> list[tuple[str, float, float]]:
    """(label, |ΔT|, C_Lip ||Δ||) along the worst (gradient) direction for random models."""
    rng = np.random.default_rng(seed)
    out = []
    for cfg in configs:
        for scheme in ("uniform", "xavier_normal"):
            p = init_params(cfg, scheme, int(rng.integers(2**31)), 1.0)
            x = rng.integers(0, 2, n_bits).astype(np.uint8)
            m, b = worst_direction_ratio(p, x)
            tag = "pre" if cfg.norm_first else "post"
            out.append((f"{scheme}, {tag}-LN, eps={cfg.ln_eps:g}", m, b))
    return out
