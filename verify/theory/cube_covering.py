"""Cube covering of parameter slices (Lemma 4.4): certified bounds on the measure of the bad set
{theta : some layer-norm input variance <= delta} by branch and bound with arb enclosures over
parameter cubes, and the Monte Carlo per-cube estimate aggregated by volume.

A slice fixes every coordinate of theta but ``k`` (1 to 3) free ones, which range over a box.
A cube of the slice is *certified good* when the arb enclosure of every watched variance (all
positions of the watched norms, for every string) has lower end > delta, *certified bad* when one
of them has upper end <= delta, and is split into 2^k children otherwise. After each level, the
bad measure lies in [vol(certified bad), vol(certified bad) + vol(open cubes)].

The default slice runs through a *degenerate point*: the watched norm's bias block is shifted so
that its input at the readout position has variance 0 there (``degenerate_params``), and the free
coordinates are that bias block's first k entries. The watched input is then affine in the free
coordinates, d = c + A u, and (docs/derivations_eps_zero.md section 4)

    vol{u in box : var(d_n) <= delta} <= V_k (D delta)^{k/2} / sqrt(det(A^T P A)),
    A^T P A = I_k - 11^T / D,  det = 1 - k/D,

per position n; the union over the S positions gives :func:`slice_small_ball_bound`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from verify.boolean.sampling import clopper_pearson
from verify.model import Params, forward
from verify.model.generic.enclosure import enclose
from verify.theory.probability import checked_probability
from verify.theory.small_ball import bias_block, recover_centred_input, unit_ball_volume
from verify.validation import check_int, check_real

__all__ = [
    "CoverResult",
    "MonteCarloCover",
    "bias_block",
    "certify_bad_measure",
    "degenerate_params",
    "monte_carlo_cover",
    "recover_centred_input",
    "slice_small_ball_bound",
    "theta_slice",
]


def degenerate_params(params: Params, bits: np.ndarray, norm_index: int = 0) -> Params:
    """params with norm ``norm_index``'s bias shifted by -P d, so that its input at the readout
    position is (up to rounding) constant: variance 0, z infinite at eps = 0."""
    name, _ = bias_block(params, norm_index)
    u = recover_centred_input(params, bits, norm_index)
    return params.with_arrays({name: params[name] - u})


def theta_slice(params: Params, norm_index: int, k: int) -> np.ndarray:
    """Indices in theta of the first k entries of norm ``norm_index``'s bias block."""
    _, sl = bias_block(params, norm_index)
    k = check_int("k", k, minimum=1, maximum=min(3, sl.stop - sl.start))
    return np.arange(sl.start, sl.start + k)


def slice_small_ball_bound(
    delta: float, d_model: int, k: int, half_width: float, seq_len: int
) -> float:
    """Fraction of the slice box [-w, w]^k where some position's input variance of the watched
    norm is <= delta: <= min(1, S V_k (D delta)^{k/2} / sqrt(1 - k/D) / (2w)^k)."""
    delta = check_real("delta", delta, minimum=0.0)
    k = check_int("k", k, minimum=1, maximum=d_model - 1)
    w = check_real("half_width", half_width, strictly_positive=True)
    per = unit_ball_volume(k) * (d_model * delta) ** (k / 2) / math.sqrt(1 - k / d_model)
    return checked_probability("slice small-ball bound", min(1.0, seq_len * per / (2 * w) ** k))


@dataclass
class CoverResult:
    """Certified bounds on the bad fraction of the slice box after each branch-and-bound level."""

    side: list[float] = field(default_factory=list)  # cube side at the level
    lower: list[float] = field(default_factory=list)  # certified-bad fraction
    upper: list[float] = field(default_factory=list)  # certified-bad + open fraction
    cubes: list[int] = field(default_factory=list)  # cubes enclosed at the level
    enclosures: int = 0


def _cube_verdict(
    params: Params,
    theta: np.ndarray,
    free: np.ndarray,
    centre: np.ndarray,
    half: float,
    bits: np.ndarray,
    delta: float,
    norms: tuple[int, ...],
    prec: int,
) -> int:
    """+1 certified good, -1 certified bad, 0 open."""
    th = theta.copy()
    th[free] = centre
    radius = np.zeros_like(theta)
    radius[free] = half
    enc = enclose(Params.unflatten(params.config, th), bits, prec=prec, radius=radius)
    lo = enc.var_lower[:, list(norms), :]
    hi = enc.var_upper[:, list(norms), :]
    if np.all(lo > delta):
        return 1
    if np.any(hi <= delta):
        return -1
    return 0


def certify_bad_measure(
    params: Params,
    bits: np.ndarray,
    free: np.ndarray,
    half_width: float,
    delta: float,
    *,
    norms: tuple[int, ...] = (0,),
    max_depth: int = 8,
    max_cubes: int = 4000,
    prec: int = 64,
) -> CoverResult:
    """Branch and bound over the slice box theta[free] +- half_width (see module doc)."""
    bits = np.atleast_2d(np.asarray(bits, dtype=np.uint8))
    delta = check_real("delta", delta, strictly_positive=True)
    w = check_real("half_width", half_width, strictly_positive=True)
    max_depth = check_int("max_depth", max_depth, minimum=0)
    theta = params.flatten()
    free = np.asarray(free, dtype=np.int64)
    k = free.size
    out = CoverResult()
    open_cubes = [theta[free].copy()]
    half = w
    bad_fraction = 0.0
    offsets = np.array(list(itertools.product((-0.5, 0.5), repeat=k)))
    for depth in range(max_depth + 1):
        cube_fraction = 0.5 ** (k * depth)
        still_open = []
        for c in open_cubes:
            v = _cube_verdict(params, theta, free, c, half, bits, delta, norms, prec)
            out.enclosures += 1
            if v < 0:
                bad_fraction += cube_fraction
            elif v == 0:
                still_open.append(c)
        out.side.append(2 * half)
        out.lower.append(checked_probability("certified bad fraction", bad_fraction))
        upper = bad_fraction + cube_fraction * len(still_open)
        out.upper.append(checked_probability("certified bad + open fraction", upper))
        out.cubes.append(len(open_cubes))
        if not still_open or depth == max_depth:
            break
        children = [c + half * off for c in still_open for off in offsets]
        if len(children) > max_cubes:
            break
        open_cubes = children
        half /= 2
    return out


@dataclass(frozen=True)
class MonteCarloCover:
    """Per-cube Monte Carlo estimates of the bad fraction, aggregated by volume."""

    side: float
    per_cube: np.ndarray  # (n_cubes,) bad fraction per cube
    per_cube_ci: np.ndarray  # (n_cubes, 2) Clopper-Pearson per cube
    estimate: float  # volume-weighted (equal volumes) mean
    ci: tuple[float, float]  # Clopper-Pearson on the pooled counts
    draws: int


def monte_carlo_cover(
    params: Params,
    bits: np.ndarray,
    free: np.ndarray,
    half_width: float,
    delta: float,
    *,
    cubes_per_axis: int,
    draws_per_cube: int,
    seed: int,
    norms: tuple[int, ...] = (0,),
    confidence: float = 0.95,
) -> MonteCarloCover:
    """Cover the slice box by cubes_per_axis^k cubes of side 2w / cubes_per_axis; in each draw
    theta[free] uniformly, count float64 variances <= delta (bad), CI per cube and pooled."""
    bits = np.atleast_2d(np.asarray(bits, dtype=np.uint8))
    m = check_int("cubes_per_axis", cubes_per_axis, minimum=1)
    draws = check_int("draws_per_cube", draws_per_cube, minimum=1)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    theta = params.flatten()
    free = np.asarray(free, dtype=np.int64)
    side = 2 * half_width / m
    lows = theta[free] - half_width
    fracs, cis, total = [], [], 0
    for cell in itertools.product(range(m), repeat=free.size):
        corner = lows + side * np.asarray(cell)
        hits = 0
        for _ in range(draws):
            th = theta.copy()
            th[free] = corner + side * rng.random(free.size)
            var = forward(Params.unflatten(params.config, th), bits, True).var[:, list(norms), :]
            hits += bool(np.any(~(var > delta)))  # NaN (constant input) counts as bad
        fracs.append(hits / draws)
        cis.append(clopper_pearson(hits, draws, confidence))
        total += hits
    n_total = draws * len(fracs)
    return MonteCarloCover(
        side,
        np.asarray(fracs),
        np.asarray(cis),
        checked_probability("Monte Carlo bad fraction", float(np.mean(fracs))),
        clopper_pearson(total, n_total, confidence),
        n_total,
    )
