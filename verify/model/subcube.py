"""Sub-cube certification (issue 29): one rigorous bound of T over many strings at once.

A sub-cube fixes some bits and leaves the others free. Its bound is model-spec's forward pass
(``verify.model.reference.run_generic``) in :class:`verify.model.affine.AffineContext`: a
free bit k enters as a noise symbol e_k in [-1, 1] (its token row is row0/2 + row1/2 +
e_k (row1 - row0)/2, exactly row 0 or row 1 at e_k = -1, +1), linear maps keep the symbols, and
nonlinear steps linearise with a rigorous remainder, in the rounding model of every
per-string radius (``verify.model.rounding``). The result holds T(x) of every string x of the
sub-cube (every e in {-1, 1}^free lies in the cube the forms are valid on); if that enclosure
lies in the region of one label (``verify.model.labels``), every string of the sub-cube has
that label, proven. (``MidRadContext`` with ``run_generic(free=...)`` gives a plain ball hull
bound too; it is valid but much wider, since a ball loses the cancellations in W (row1 - row0).)

Branching policy (:func:`certify_subcubes`), all deterministic:

1. the whole cube (every bit free): one bound;
2. if it is open, the bits are ranked by the size of their noise symbol's generator in the
   cube's T (the linear part of T's dependence on the bit: the most influential first; ties,
   and NaN as the largest, by bit index);
3. level k + 1 splits every open sub-cube of level k on the next bit of the ranking;
4. stop when nothing is open, when the next level would hold more than ``cap`` sub-cubes
   (default: 2^N / 1024, at least 2, at most 1024: a bound costs about 10^3 strings), or
   when a level settles no string and its open radii shrank by less than ``MIN_SHRINK`` (median
   over the open sub-cubes, against their parents): more levels would not settle anything soon.

What is left open goes to the per-string tiers of ``verify.model.truth_table``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify.model.affine import Affine, AffineContext
from verify.model.labels import LABEL_UNCERTAIN, _labels_from_midrad
from verify.model.params import Params
from verify.model.reference import run_generic

SUBCUBE_CAP = 1024  # sub-cubes at most in one level
# one sub-cube bound costs about as much as 10^3 strings of the exhaustive kernel (measured,
# D = 16, L = 1: 10-25 ms against ~10 us a string), so a level holds at most 2^N / 2^STRINGS_
# PER_BOUND_LOG2 sub-cubes (and at least 2: the two halves of the cube always get a bound)
STRINGS_PER_BOUND_LOG2 = 10
MIN_SHRINK = 0.75  # a level that settles nothing must shrink the open radii below this factor
_BATCH = 16  # sub-cubes per affine pass (memory ~ batch symbols S d_ff floats)


def subcube_T(
    params: Params, bits: np.ndarray, free: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(midpoint, radius, weights) of T over each sub-cube: row b fixes the bits of
    ``bits[b]`` where ``free[b]`` is False; |T(x) - mid_b| <= rad_b for every string x of the
    sub-cube (NaN or infinite radius: no bound, e.g. a variance enclosure reaching 0 at
    eps = 0). weights (B, N): |generator| of each bit's noise symbol in T (the linear part of
    T's dependence on that bit; 0 for fixed bits), used only to rank bits."""
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
        gen = np.zeros((n, t.mid.size)) if t.gen is None else np.abs(t.gen[:n])
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
    """(labels, radii, bit weights) of the sub-cubes ``codes`` over the bits ``order``."""
    mid, rad, weights = subcube_T(params, *_cubes(n, order, codes))
    return _labels_from_midrad(mid, rad, xi), np.where(np.isnan(rad), np.inf, rad), weights


def certify_subcubes(
    params: Params, n: int, margin: float = 0.0, cap: int | None = None
) -> SubcubeResult:
    """Labels settled by sub-cube bounds with the branching policy of the module doc; ``cap``
    (default min(SUBCUBE_CAP, max(2, 2^N / 2^STRINGS_PER_BOUND_LOG2))): sub-cubes per level."""
    if cap is None:
        cap = min(SUBCUBE_CAP, max(2, (1 << n) >> STRINGS_PER_BOUND_LOG2))
    label = np.full(1 << n, LABEL_UNCERTAIN, dtype=np.int8)
    codes = np.zeros(1, dtype=np.int64)
    lab, rad, weights = _bound(params, n, margin, (), codes)
    w = np.nan_to_num(weights[0], nan=np.inf)
    order = tuple(int(i) for i in np.lexsort((np.arange(n), -w)))  # largest weight first
    n_bounds, depth, parent_rad = 1, 0, rad
    settled: list[tuple[int, np.ndarray, np.ndarray]] = []  # (level, codes, labels)
    while True:
        done = lab != LABEL_UNCERTAIN
        if np.any(done):
            settled.append((depth, codes[done], lab[done]))
        open_codes, open_rad = codes[~done], rad[~done]
        if open_codes.size == 0 or depth == n or 2 * open_codes.size > cap:
            break
        if depth and not np.any(done):
            with np.errstate(invalid="ignore"):
                shrink = np.median(open_rad / parent_rad[~done])
            if not shrink < MIN_SHRINK:  # NaN (inf / inf) stops too
                break
        codes = np.concatenate([open_codes, open_codes | (1 << depth)])
        parent_rad = np.concatenate([open_rad, open_rad])
        depth += 1
        lab, rad, _ = _bound(params, n, margin, order[:depth], codes)
        n_bounds += codes.size
    _paint(label, n, order[:depth], settled)
    return SubcubeResult(label, order[:depth], n_bounds, depth)


def _paint(
    label: np.ndarray,
    n: int,
    order: tuple[int, ...],
    settled: list[tuple[int, np.ndarray, np.ndarray]],
) -> None:
    """Write the settled sub-cubes' labels into ``label`` (indexed by string)."""
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
