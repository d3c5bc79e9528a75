"""Zero-sensitivity strings of a uniformly random Boolean function.

For f uniform on all 2^(2^N) functions, a string x has s(x) = 0 iff f is constant on x and its N
neighbours, with probability 2 / 2^(N+1); hence E[K_0] = 1 for every N, and the number of
zero-sensitivity strings is asymptotically Poisson(1), so P[K_0 >= 1] -> 1 - 1/e ~ 0.632.

* :func:`exact_probability_some_zero_sensitive` gives the exact finite-N value as a fraction.
  Method: split the last coordinate, f = (a, b) with a, b colourings of Q_(N-1); with
  D = a xor b, K_0(f) = 0 iff Z(a) and Z(b) are inside D (Z = zero set within Q_(N-1)). Sum
  over a (one per orbit of the 2^(N-1) (N-1)! cube symmetries times complementation, weighted
  by orbit size) of the number of supersets D of Z(a) with Z(a xor D) inside D. Reach: N <= 5
  (N = 6 would enumerate the 2^32 colourings of Q_5).
* :func:`brute_force_count_no_zero_sensitive` enumerates all 2^(2^N) functions (N <= 4).
* :func:`monte_carlo_probability_some_zero_sensitive`: seeded estimate with a Clopper-Pearson
  interval, for any N the tables fit (N <= 20).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from verify.boolean.kernels import (
    all_zero_sets,
    canonical_colourings,
    count_no_zero_sensitive_split,
    cube_zero_set,
    packed_rows_have_zero_sensitive,
    rows_have_zero_sensitive,
)
from verify.boolean.sampling import clopper_pearson
from verify.validation import check_int, check_real

MAX_EXACT_N = 5
MAX_BRUTE_FORCE_N = 4
MAX_MONTE_CARLO_N = 20


def cube_symmetries(d: int) -> np.ndarray:
    """All 2^d d! automorphisms of Q_d as rows v -> pi(v) xor t (int64, shape (G, 2^d))."""
    d = check_int("d", d, minimum=0, maximum=6)
    size = 1 << d
    rows = []
    for perm in itertools.permutations(range(d)):
        for t in range(size):
            row = []
            for v in range(size):
                img = 0
                for i, p in enumerate(perm):
                    img |= ((v >> i) & 1) << p
                row.append(img ^ t)
            rows.append(row)
    return np.array(rows, dtype=np.int64)


def count_no_zero_sensitive(N: int, *, use_symmetry: bool = True) -> int:
    """#{f : {0,1}^N -> {0,1} with K_0(f) = 0}, exactly (N <= 5), by the split method."""
    n = check_int("N", N, minimum=1, maximum=MAX_EXACT_N, hint="exact method reaches N <= 5")
    d = n - 1
    z = all_zero_sets(d)
    if use_symmetry:
        canon = canonical_colourings(d, cube_symmetries(d))
        reps, weights = np.unique(canon, return_counts=True)
    else:
        reps, weights = np.arange(z.shape[0], dtype=np.uint64), np.ones(z.shape[0], np.int64)
    return int(
        count_no_zero_sensitive_split(
            z, np.ascontiguousarray(reps, np.uint64), np.ascontiguousarray(weights, np.int64)
        )
    )


def brute_force_count_no_zero_sensitive(N: int) -> int:
    """The same count by enumerating all 2^(2^N) functions (N <= 4)."""
    n = check_int("N", N, minimum=1, maximum=MAX_BRUTE_FORCE_N)
    return sum(1 for a in range(1 << (1 << n)) if cube_zero_set(np.uint64(a), n) == 0)


def exact_probability_some_zero_sensitive(N: int) -> Fraction:
    """P[K_0 >= 1] for a uniformly random f on N bits, as an exact fraction (N <= 5)."""
    n = check_int("N", N, minimum=1, maximum=MAX_EXACT_N, hint="exact method reaches N <= 5")
    total = 1 << (1 << n)
    return 1 - Fraction(count_no_zero_sensitive(n), total)


def random_tables(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """(rows, 2^n) uniform 0/1 uint8 tables: random bytes unpacked to bits (8 per draw)."""
    if n < 3:
        return rng.integers(0, 2, size=(rows, 1 << n), dtype=np.uint8)
    packed = rng.integers(0, 256, size=(rows, 1 << (n - 3)), dtype=np.uint8)
    return np.ascontiguousarray(np.unpackbits(packed, axis=1, bitorder="little"))


@dataclass(frozen=True)
class MonteCarloEstimate:
    """hits of ``samples`` random functions had K_0 >= 1; CI is Clopper-Pearson."""

    n: int
    samples: int
    hits: int
    confidence: float
    seed: int
    ci: tuple[float, float]

    @property
    def estimate(self) -> float:
        return self.hits / self.samples


def monte_carlo_probability_some_zero_sensitive(
    N: int, samples: int, seed: int, confidence: float = 0.999, batch: int = 4096
) -> MonteCarloEstimate:
    """Estimate P[K_0 >= 1] from ``samples`` uniformly random truth tables drawn with
    numpy.random.default_rng(seed), with an exact (Clopper-Pearson) interval."""
    n = check_int("N", N, minimum=1, maximum=MAX_MONTE_CARLO_N)
    samples = check_int("samples", samples, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    confidence = check_real("confidence", confidence, strictly_positive=True)
    batch = check_int("batch", batch, minimum=1)
    rng = np.random.default_rng(seed)
    rows_per_batch = max(1, min(batch, (1 << 26) >> n))
    hits = 0
    done = 0
    while done < samples:
        rows = min(rows_per_batch, samples - done)
        if n >= 6:  # 64 strings per uint64 word, uniform random words
            words = rng.integers(
                0, 2**64 - 1, size=(rows, 1 << (n - 6)), dtype=np.uint64, endpoint=True
            )
            has = packed_rows_have_zero_sensitive(words, n)
        else:
            has = rows_have_zero_sensitive(random_tables(rng, rows, n), n)
        hits += int(np.count_nonzero(has))
        done += rows
    lo, hi = clopper_pearson(hits, samples, confidence)
    return MonteCarloEstimate(n, samples, hits, confidence, seed, (lo, hi))
