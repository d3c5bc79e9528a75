"""Sub-cube certification (issue 29): one rigorous bound of T over many strings at once.

A sub-cube fixes some bits and leaves the others free. Its bound is model-spec's forward pass
(``verify.model.generic.reference.run_generic``) in
:class:`verify.model.subcube.affine.AffineContext`: a free bit k enters as a noise symbol e_k (its
token row is row0/2 + row1/2 + e_k (row1 - row0)/2, exactly row 0 or row 1 at e_k = -1, +1), linear
maps keep the symbols, and nonlinear steps linearise with a rigorous remainder, in the rounding
model of every per-string radius (``verify.model.arithmetic.rounding``). The strings are the
vertices e in {-1, 1}^free, and the forms need to hold only there: e_k^2 = 1 makes the bit diagonal
of a product a constant, and a step is linearised separately at e_k = +-1 of its dominant bit
(``verify.model.subcube.affine_split``), so one free bit costs no linearisation remainder at all.
Chord (min-range) relaxations replace midpoint Taylor remainders where narrower; attention is (sum_j
e^s_j v_j) / sum_j e^s_j with the denominator's range from the scores and the output met with the
values' hull; the readout after the last norm is one scalar product z (c . gain w). If the enclosure
of T lies in the region of one label (``verify.model.spec.label_rule``), every string of the
sub-cube has that label, proven. (``MidRadContext`` with ``run_generic(free=...)`` gives a plain
ball hull bound too; valid but much wider, since a ball loses the cancellations in W (row1 - row0).)

Branching policy (:func:`certify_subcubes`), all deterministic:

1. the whole cube (every bit free): one bound;
2. if it is open, the bits are ranked by the size of their noise symbol's generator in the
   cube's T (the linear part of T's dependence on the bit: the most influential first; ties by
   bit index);
3. level k + 1 splits every open sub-cube of level k on the next bit of the ranking;
4. before its bound, each new sub-cube is probed at the two strings where the cube's linear
   part of T is largest and smallest (each free bit k at the sign of its generator, then the
   opposite), with per-string balls. If they prove two different labels, no bound can settle
   the sub-cube: its bound is skipped and it stays open, to be split at the next level. The
   probes only decide which bounds are computed, never a label;
5. stop when nothing is open; when every open sub-cube of the level has a bound and none is
   finite (sharp attention at a uniform init: where that settles at all, it is 10 or more
   levels down, past the budget; measured at N = 20); or when the next level would take the
   bounds computed past the ``budget`` (default :func:`default_budget`: a quarter of the
   exhaustive table's cost, counted in bounds; skipped bounds are not counted) or one level
   past ``cap`` sub-cubes (default: the budget). So a function no bound settles costs at most
   1.25 times its exhaustive table, plus the probes (two per-string balls per sub-cube).

What is left open goes to the per-string tiers of ``verify.model.certified.truth_table``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify.model.arithmetic.contexts import MidRadContext
from verify.model.generic.reference import run_generic
from verify.model.spec.label_rule import LABEL_UNCERTAIN, _labels_from_midrad
from verify.model.spec.params import Params
from verify.model.subcube.affine import Affine, AffineContext

# log2 of the strings of the exhaustive kernel one sub-cube bound costs as much as (measured,
# D = 16, N = 20, 2 cores): L = 1, ~1 ms a bound in batches of 16 against 0.15 us a string
# (2^12.7); L = 2, 50-120 ms against 2.5 us (2^14.3-2^15.5), rounded up to 16 since no bound of
# the benchmark settled a string there (the lower layers' own-bit and pairwise score terms
# leave the enclosure open): the budget there stays near the cube and its halves
STRINGS_PER_BOUND_LOG2 = 13
STRINGS_PER_BOUND_LOG2_DEEP = 16  # L >= 2
_BATCH = 16  # sub-cubes per affine pass (memory ~ batch symbols S d_ff floats)


def default_budget(params: Params, n: int) -> int:
    """Bounds one certification may compute: a quarter of the cost of the exhaustive table of
    2^N strings, in bounds (``STRINGS_PER_BOUND_LOG2``), and at least 3 (the cube and its
    halves). N = 20: 32 (L = 1: levels 0-4, 31 bounds), 4 (L >= 2: the cube and its halves)."""
    return max(3, _quarter_table_in_bounds(params, n))


def _quarter_table_in_bounds(params: Params, n: int) -> int:
    """A quarter of the exhaustive table's cost, counted in bounds (rounded down)."""
    one = params.config.n_layers == 1
    return (1 << n) >> ((STRINGS_PER_BOUND_LOG2 if one else STRINGS_PER_BOUND_LOG2_DEEP) + 2)


def subcube_pays(params: Params, n: int) -> bool:
    """Whether the sub-cube pass is worth trying before the exhaustive table (the sweep's
    default): one layer, and a quarter of the table's cost buys at least one bound (N >= 15;
    below, the table is cheaper than the cube's own bound). Not for L >= 2: there no bound of
    the benchmark settled a string at N = 20 (16 models), so the pass would only cost."""
    return params.config.n_layers == 1 and _quarter_table_in_bounds(params, n) >= 1


def subcube_T(
    params: Params, bits: np.ndarray, free: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(midpoint, radius, generators) of T over each sub-cube: row b fixes the bits of
    ``bits[b]`` where ``free[b]`` is False; |T(x) - mid_b| <= rad_b for every string x of the
    sub-cube (NaN or infinite radius: no bound, e.g. a variance enclosure reaching 0 at
    eps = 0). generators (B, N): each bit's noise-symbol generator in T (the linear part of
    T's dependence on that bit, signed; 0 for fixed bits), used only to rank bits and to aim
    the probes of :func:`certify_subcubes`."""
    n = bits.shape[1]
    mids, rads, weights = [], [], []
    for start in range(0, bits.shape[0], _BATCH):
        stop = start + _BATCH
        res = run_generic(
            AffineContext(), params, bits[start:stop], readout_only=True, free=free[start:stop]
        )
        t = Affine.of(res.T)
        mids.append(t.mid)
        rads.append(t.spread)
        gen = np.zeros((n, t.mid.size)) if t.gen is None else t.gen[:n]
        weights.append(gen.T)
    return np.concatenate(mids), np.concatenate(rads), np.concatenate(weights)


@dataclass(frozen=True)
class SubcubeResult:
    """Labels of all 2^N strings settled by sub-cube bounds (-2: open), the bit ranking, the
    bounds computed and the deepest level reached."""

    label: np.ndarray  # (2^N,) int8
    order: tuple[int, ...]
    n_bounds: int
    depth: int

    @property
    def n_settled(self) -> int:
        return int(np.count_nonzero(self.label != LABEL_UNCERTAIN))


def _cubes(n: int, order: tuple[int, ...], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bits, free) of the sub-cubes fixing bit order[j] to bit j of each code."""
    bits = np.zeros((codes.size, n), dtype=np.uint8)
    free = np.ones((codes.size, n), dtype=bool)
    for j, bit in enumerate(order):
        bits[:, bit] = (codes >> j) & 1
        free[:, bit] = False
    return bits, free


def _bound(
    params: Params, n: int, xi: float, order: tuple[int, ...], codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, radii, bit generators) of the sub-cubes ``codes`` over the bits ``order``."""
    mid, rad, gens = subcube_T(params, *_cubes(n, order, codes))
    thr = params.config.threshold
    return _labels_from_midrad(mid, rad, xi, thr), np.where(np.isnan(rad), np.inf, rad), gens


def _probe_strings(
    n: int, order: tuple[int, ...], codes: np.ndarray, direction: np.ndarray
) -> np.ndarray:
    """(2 B, N) bits: for each sub-cube the two strings at the ends of T's linear part
    (free bit k at 1 where ``direction[k]`` > 0, else 0; then the complement), fixed bits as
    coded. Rows 2 b and 2 b + 1 belong to sub-cube b."""
    bits, free = _cubes(n, order, codes)
    hi = (direction > 0).astype(np.uint8)
    probes = np.repeat(bits, 2, axis=0)
    free2 = np.repeat(free, 2, axis=0)
    ends = np.tile(np.stack([hi, 1 - hi]), (codes.size, 1))
    probes[free2] = ends[free2]
    return probes


def _hopeless(
    params: Params,
    n: int,
    xi: float,
    order: tuple[int, ...],
    codes: np.ndarray,
    direction: np.ndarray,
) -> np.ndarray:
    """(B,) bool: sub-cubes no bound can settle, proven on two of their strings: the probes'
    per-string balls (``MidRadContext``, the rounding model of every radius) give them two
    different certified labels. A probe that is not certified decides nothing."""
    t = run_generic(
        MidRadContext(), params, _probe_strings(n, order, codes, direction), readout_only=True
    ).T
    lab = _labels_from_midrad(t.mid, t.rad, xi, params.config.threshold).reshape(-1, 2)
    return (
        (lab[:, 0] != LABEL_UNCERTAIN) & (lab[:, 1] != LABEL_UNCERTAIN) & (lab[:, 0] != lab[:, 1])
    )


def certify_subcubes(
    params: Params,
    n: int,
    margin: float = 0.0,
    cap: int | None = None,
    budget: int | None = None,
) -> SubcubeResult:
    """Labels settled by sub-cube bounds with the branching policy of the module doc:
    ``budget`` bounds in all (default :func:`default_budget`; unlimited when only ``cap`` is
    given), ``cap`` sub-cubes per level at most (default: the budget)."""
    if budget is None:
        budget = default_budget(params, n) if cap is None else 1 << n + 1
    cap = budget if cap is None else cap
    label = np.full(1 << n, LABEL_UNCERTAIN, dtype=np.int8)
    codes = np.zeros(1, dtype=np.int64)
    lab, rad, gens = _bound(params, n, margin, (), codes)
    w = np.abs(gens[0])  # finite where the cube's enclosure is; largest first, ties by index
    order = tuple(int(i) for i in np.lexsort((np.arange(n), -np.nan_to_num(w, nan=np.inf))))
    direction = np.nan_to_num(gens[0], nan=0.0)
    n_bounds, depth = 1, 0
    settled: list[tuple[int, np.ndarray, np.ndarray]] = []  # (level, codes, labels)
    while True:
        done = lab != LABEL_UNCERTAIN
        if np.any(done):
            settled.append((depth, codes[done], lab[done]))
        open_codes = codes[~done]
        if open_codes.size == 0 or depth == n or 2 * open_codes.size > cap:
            break
        if np.all(rad[~done] == np.inf):
            break  # every open sub-cube has a bound (NaN: skipped) and none is finite
        children = np.concatenate([open_codes, open_codes | (1 << depth)])
        skip = _hopeless(params, n, margin, order[: depth + 1], children, direction)
        need = int(np.count_nonzero(~skip))
        if n_bounds + need > budget:
            break
        depth += 1
        codes = children
        lab = np.full(children.size, LABEL_UNCERTAIN, dtype=np.int8)
        rad = np.full(children.size, np.nan)  # NaN: no bound computed (probes: hopeless)
        if need:
            lab[~skip], rad[~skip], _ = _bound(params, n, margin, order[:depth], children[~skip])
        n_bounds += need
    _paint(label, n, order[:depth], settled)
    return SubcubeResult(label, order[:depth], n_bounds, depth)


def _paint(
    label: np.ndarray,
    n: int,
    order: tuple[int, ...],
    settled: list[tuple[int, np.ndarray, np.ndarray]],
) -> None:
    """Write the settled sub-cubes' labels into ``label`` (indexed by string)."""
    if not settled:
        return
    if len(settled) == 1 and settled[0][0] == 0:  # the whole cube: one label for every string
        label[:] = settled[0][2][0]
        return
    idx = np.arange(label.size, dtype=np.int64)
    code = np.zeros(label.size, dtype=np.int64)  # each string's code over the ranked bits
    for j, bit in enumerate(order):
        code |= ((idx >> bit) & 1) << j
    for level, codes, labs in settled:
        table = np.full(1 << level, LABEL_UNCERTAIN, dtype=np.int8)
        table[codes] = labs
        sub = table[code & ((1 << level) - 1)]
        hit = sub != LABEL_UNCERTAIN
        label[hit] = sub[hit]
