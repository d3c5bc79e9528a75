"""Sampled sensitivity profile for N beyond exhaustive reach (N up to thousands).

Draw strings x_1..x_M uniformly (numpy.random.default_rng(seed)), evaluate f at each x and its
N neighbours, and count c_k = #{j : s(x_j) = k}. Then c_k ~ Binomial(M, K_k / 2^N), and the
Clopper-Pearson interval [B^-1(a/2; c, M-c+1), B^-1(1-a/2; c+1, M-c)] (B the beta quantile)
covers K_k / 2^N with probability >= 1 - a for each k separately (pointwise, not simultaneous).
The mean sensitivity gets a Hoeffding interval: s in [0, N], so the mean is within
N sqrt(log(2/a) / (2M)) of as(f) with probability >= 1 - a.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from verify.boolean.function import BooleanFunction
from verify.errors import ValidationError
from verify.validation import check_int, check_real

MAX_SAMPLED_N = 1 << 16


def _check_confidence(confidence: float) -> float:
    c = check_real("confidence", confidence)
    if not 0.0 < c < 1.0:
        raise ValidationError("confidence", "a real number in (0, 1)", c)
    return c


def clopper_pearson(hits: int, trials: int, confidence: float = 0.99) -> tuple[float, float]:
    """Exact two-sided (Clopper-Pearson) binomial interval for a proportion (hits of trials):
    ``scipy.stats.binomtest(hits, trials).proportion_ci(confidence, method="exact")``."""
    trials = check_int("trials", trials, minimum=1)
    hits = check_int("hits", hits, minimum=0, maximum=trials)
    confidence = _check_confidence(confidence)
    from scipy.stats import binomtest  # lazy: scipy.stats costs ~1 s to import

    ci = binomtest(hits, trials).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class SampledProfile:
    """Estimated profile: ``counts[k]`` of ``samples`` strings had s(x) = k."""

    n: int
    samples: int
    counts: np.ndarray  # int64 (N+1,)
    confidence: float
    seed: int

    @property
    def fraction(self) -> np.ndarray:
        """Point estimates of K_k / 2^N."""
        return self.counts / self.samples

    def ci(self, level: int) -> tuple[float, float]:
        """Clopper-Pearson interval of K_level / 2^N (pointwise)."""
        return clopper_pearson(int(self.counts[level]), self.samples, self.confidence)

    @property
    def ci_low(self) -> np.ndarray:
        return np.array([self.ci(k)[0] for k in range(self.n + 1)])

    @property
    def ci_high(self) -> np.ndarray:
        return np.array([self.ci(k)[1] for k in range(self.n + 1)])

    def _repr_markdown_(self) -> str:
        """Notebook display: sampled counts, fractions and the average sensitivity's CI."""
        from verify.boolean.function import profile_markdown

        lo, hi = self.average_sensitivity_ci
        title = (
            f"sampled profile, N = {self.n}, {self.samples} strings (seed {self.seed});"
            f" average sensitivity {self.average_sensitivity:.4g}"
            f" ({self.confidence:.0%} CI [{lo:.4g}, {hi:.4g}])"
        )
        return profile_markdown(title, self.counts, self.samples)

    def __str__(self) -> str:
        """Terminal display: the sampled counts, fractions with their pointwise CIs, and the
        average sensitivity's CI."""
        from verify.boolean.display import text_table

        lo, hi = self.average_sensitivity_ci
        title = (
            f"sampled profile, N = {self.n}, {self.samples} strings (seed {self.seed});"
            f" average sensitivity {self.average_sensitivity:.4g}"
            f" ({self.confidence:.0%} CI [{lo:.4g}, {hi:.4g}])"
        )
        low, high = self.ci_low, self.ci_high
        rows = [
            (k, int(c), float(c / self.samples), float(low[k]), float(high[k]))
            for k, c in enumerate(self.counts)
        ]
        ci = f"{self.confidence:.0%} CI"
        return (
            title + "\n" + text_table(("k", "count", "fraction", f"{ci} low", f"{ci} high"), rows)
        )

    @property
    def average_sensitivity(self) -> float:
        """Sample mean of s(x), an unbiased estimate of as(f)."""
        return float(np.dot(np.arange(self.n + 1), self.counts) / self.samples)

    @property
    def average_sensitivity_ci(self) -> tuple[float, float]:
        """Hoeffding interval of as(f) at the same confidence (clipped to [0, N] for display)."""
        half = self.n * math.sqrt(math.log(2 / (1 - self.confidence)) / (2 * self.samples))
        mean = self.average_sensitivity
        return max(0.0, mean - half), min(float(self.n), mean + half)


def _evaluate(f: BooleanFunction | Callable, bits: np.ndarray) -> np.ndarray:
    out = np.asarray(f(bits))
    if out.shape != (bits.shape[0],):
        raise ValidationError(
            "f", f"{bits.shape[0]} outputs for {bits.shape[0]} strings", out.shape
        )
    if out.dtype != np.bool_ and (out.dtype.kind not in "biuf" or not np.isin(out, (0, 1)).all()):
        raise ValidationError("f", "outputs in {0, 1}", "other values")
    return out.astype(np.uint8)


def estimate_profile(
    f: BooleanFunction | Callable[[np.ndarray], np.ndarray],
    n: int | None = None,
    *,
    samples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.99,
    max_batch_bytes: int = 1 << 24,
) -> SampledProfile:
    """Estimate K_k / 2^N for k = 0..N from ``samples`` uniform strings (seeded).

    ``f`` is a BooleanFunction or a callable mapping a (B, n) uint8 bit array to B outputs in
    {0, 1}; ``n`` is required for a callable. Each batch evaluates f on B strings and their
    N neighbours, i.e. B (N+1) rows of N bytes, kept under ``max_batch_bytes``.
    """
    if isinstance(f, BooleanFunction):
        if n is not None and n != f.n:
            raise ValidationError("n", f"N = {f.n} of the given function (or None)", n)
        n = f.n
    elif not callable(f):
        raise ValidationError("f", "a BooleanFunction or a callable on (B, n) bit arrays", type(f))
    if n is None:
        raise ValidationError("n", "the input length N when f is a callable", None)
    n = check_int("n", n, minimum=1, maximum=MAX_SAMPLED_N)
    samples = check_int("samples", samples, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    confidence = _check_confidence(confidence)
    rng = np.random.default_rng(seed)
    batch = max(
        1, min(samples, check_int("max_batch_bytes", max_batch_bytes, minimum=1) // ((n + 1) * n))
    )
    counts = np.zeros(n + 1, dtype=np.int64)
    flips = np.eye(n, dtype=np.uint8)
    done = 0
    while done < samples:
        b = min(batch, samples - done)
        x = rng.integers(0, 2, size=(b, n), dtype=np.uint8)
        neighbours = (x[:, None, :] ^ flips[None, :, :]).reshape(b * n, n)
        fx = _evaluate(f, x)
        fn = _evaluate(f, neighbours).reshape(b, n)
        s = np.count_nonzero(fn != fx[:, None], axis=1)
        counts += np.bincount(s, minlength=n + 1).astype(np.int64)
        done += b
    return SampledProfile(n, samples, counts, confidence, seed)
