"""The chain to the code for H&R's log10 forms, requirement and thresholds (the table of coded
functions is :data:`verify.proofs.chain.CODE`): Cor 5's bound and c_r form in log10, the blowup
Cor 5 requires, Thm 6's cap (1 + (t + eps)^{-1/2})^K and its two thresholds (the chi^2 quantile
t with F(t D / sigma^2) = q, and the t with K S F = p). A threshold is checked by feeding the
coded t to the proved probability (:func:`verify.proofs.chain_tails._chi2`, the chi^2 cdf in arb):
it must give back q (p) within the tolerance."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from flint import arb

from verify.proofs.chain import N_POINTS, Case, _points_step, code
from verify.proofs.chain_tails import _chi2
from verify.proofs.compose import iv
from verify.proofs.interval import Iv

__all__: list[str] = []

N = N_POINTS
DOC5 = "docs/derivations_hahn_rofin.md#cor-5"
DOC6 = "docs/derivations_hahn_rofin.md#thm-6"
_LN10 = arb(10).log()


def _log10(x: Iv) -> Iv:
    return Iv((x.lo.log() / _LN10).lower(), (x.hi.log() / _LN10).upper())


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _quantile_points(seed: int) -> Iterator[tuple[int, float, float]]:
    r = _rng(seed)
    for _ in range(N):
        yield int(r.integers(2, 33)), float(10 ** r.uniform(-2, 0)), float(10 ** r.uniform(-6, 0))


def _variance_threshold_cases() -> Iterator[Case]:
    for d, sigma, q in _quantile_points(64):
        q = min(q, 0.999)

        def comp(d: int = d, sigma: float = sigma, q: float = q) -> Iv:
            return _chi2(d, sigma, code("hr_thm_6.chain_variance_threshold")(d, sigma, q))

        yield {"D": d, "sigma": sigma, "q": q}, (lambda q=q: q), comp


def _cap_threshold_cases() -> Iterator[Case]:
    r = _rng(65)
    for d, sigma, p in _quantile_points(66):
        k, s = int(r.integers(1, 7)), int(r.integers(1, 65))

        def comp(d: int = d, k: int = k, s: int = s, sigma: float = sigma, p: float = p) -> Iv:
            t = code("hr_thm_6.chain_cap_threshold")(d, k, s, sigma, p)
            return iv(k) * iv(s) * _chi2(d, sigma, t)  # hr_thm_6.union's K S F

        yield {"D": d, "K": k, "S": s, "sigma": sigma, "p": p}, (lambda p=p: p), comp


_TABLE = [
    ("hr_thm_6.chain_variance_threshold", "H&R Thm 6",
     "Derivation: a union bound over K norms and S positions", DOC6,
     _variance_threshold_cases, ("hr_thm_6.chain_variance",)),
    ("hr_thm_6.chain_cap_threshold", "H&R Thm 6",
     "Derivation: a union bound over K norms and S positions", DOC6,
     _cap_threshold_cases, ("hr_thm_6.union", "hr_thm_6.chain_cap_probability")),
]  # fmt: skip
for _id, _st, _step, _doc, _cases, _facts in _TABLE:
    _points_step(_id, _st, _step, _doc, _cases, facts=_facts)
