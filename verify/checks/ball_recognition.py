"""The measure of the recognising set around a construction: draws theta ~ Unif(theta* +
[-rho, rho]^M) and, per draw and N, a certified verdict "recognises f_N with margin xi" (Conj 5.5
and the in-action checks of Cor 5.1-5.4).

Verdicts come from the rigorous float64 pass (``certified_float64(engine="numpy")``, midpoint and
radius of T, readout row only): a string is passed when its whole interval is on the target side
of the margin, failed when its whole interval is not, open otherwise. A draw recognises f_N when
every tested string passes, does not when one fails, and is undecided otherwise.

Which strings are tested (:func:`test_strings`):

- ``"exhaustive"``: all 2^N strings: the verdict is exact.
- ``"counts"``: one string per number of ones, 1^c 0^(N-c), c = 0..N. Exact for a model without
  positional encodings whose output depends only on the multiset of tokens (every model of the
  spec with ``pos_encoding="none"``: attention is permutation-equivariant and the readout sits at
  eos), for a symmetric target (MAJORITY, PARITY).
- ``"sampled"``: one string per count with random positions, plus ``extra`` random strings: a
  failure is proven, a pass only means "not refuted", so the fraction is an *upper* bound on the
  recognising fraction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from verify.boolean import all_bit_strings
from verify.boolean.sampling import clopper_pearson
from verify.model import Params
from verify.model.certified.truth_table import certified_float64

__all__ = ["BallCounts", "ball_counts", "count_strings", "test_strings", "verdict"]

CHUNK = 256  # strings per certified pass


def count_strings(n_bits: int) -> np.ndarray:
    """(N + 1, N): row c is 1^c 0^(N-c)."""
    c = np.arange(n_bits + 1)
    return (np.arange(n_bits)[None, :] < c[:, None]).astype(np.uint8)


def test_strings(
    n_bits: int, mode: str, rng: np.random.Generator, extra: int = 0
) -> tuple[np.ndarray, bool]:
    """(strings, exact): the strings a verdict tests at N in ``mode`` (module doc) and whether
    passing them all proves recognition."""
    if mode == "exhaustive":
        return all_bit_strings(n_bits), True
    if mode == "counts":
        return count_strings(n_bits), True
    if mode != "sampled":
        raise ValueError(f"mode must be exhaustive, counts or sampled, got {mode!r}")
    rows = count_strings(n_bits)
    rows = np.array([rng.permutation(r) for r in rows], dtype=np.uint8)
    more = rng.integers(0, 2, (extra, n_bits), dtype=np.uint8)
    return np.concatenate([rows, more]), False


def verdict(params: Params, bits: np.ndarray, labels: np.ndarray, margin: float) -> bool | None:
    """True if every string is certified on its label's side of the margin (T >= xi for 1,
    T <= -xi for 0), False if one is certified not to be, None otherwise."""
    open_ = False
    for i in range(0, len(bits), CHUNK):
        mid, rad = certified_float64(params, bits[i : i + CHUNK], engine="numpy")
        lab = labels[i : i + CHUNK].astype(bool)
        with np.errstate(invalid="ignore"):
            lo, hi = mid - rad, mid + rad
            passed = np.where(lab, lo >= margin, hi <= -margin)
            failed = np.where(lab, hi < margin, lo > -margin)
        if np.any(failed & np.isfinite(mid)):
            return False
        open_ |= not bool(np.all(passed))
    return None if open_ else True


@dataclass
class BallCounts:
    """Per (setting, rho, N): draws recognising (True), refuted (False), undecided (None); and
    per draw whether it recognised at every N tested so far (the intersection over N)."""

    draws: int
    hits: dict[tuple[str, float, int], int] = field(default_factory=dict)
    undecided: dict[tuple[str, float, int], int] = field(default_factory=dict)
    every_n: dict[tuple[str, float, int], int] = field(default_factory=dict)
    exact: dict[tuple[str, float, int], bool] = field(default_factory=dict)

    def fraction(self, key: tuple[str, float, int], confidence: float) -> tuple[float, tuple]:
        h = self.hits[key]
        return h / self.draws, clopper_pearson(h, self.draws, confidence)


def ball_counts(
    settings: Sequence[tuple[str, Params, str]],
    target: Callable[[np.ndarray], np.ndarray],
    ns: Sequence[int],
    rhos: Sequence[float],
    draws: int,
    margin: float,
    seed: int,
    extra: int = 64,
    exhaustive_max: int = 10,
) -> BallCounts:
    """For each setting (name, theta*, mode) and radius rho, ``draws`` theta ~ Unif(theta* +
    [-rho, rho]^M) (the same draws at every N, seeded by ``seed``), each judged at every N in
    ``ns`` (``target(bits)`` gives the labels; mode "sampled" switches to "exhaustive" for
    N <= exhaustive_max)."""
    out = BallCounts(draws)
    for si, (name, star, mode) in enumerate(settings):
        theta = star.flatten()
        for ri, rho in enumerate(rhos):
            rng = np.random.default_rng([seed, si, ri])
            thetas = theta + rng.uniform(-rho, rho, (draws, theta.size))
            alive = np.ones(draws, dtype=bool)  # recognised at every N so far
            for n in ns:
                m = "exhaustive" if mode == "sampled" and n <= exhaustive_max else mode
                bits, exact = test_strings(n, m, np.random.default_rng([seed, si, ri, n]), extra)
                labels = target(bits)
                res = [
                    verdict(Params.unflatten(star.config, th), bits, labels, margin)
                    for th in thetas
                ]
                ok = np.array([r is True for r in res])
                alive &= ok
                key = (name, rho, n)
                out.hits[key] = int(ok.sum())
                out.undecided[key] = sum(r is None for r in res)
                out.every_n[key] = int(alive.sum())
                out.exact[key] = exact
    return out
