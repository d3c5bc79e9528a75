"""Sec 5 MAJORITY as obligations (docs/derivations_eps_zero.md section 9): the central binomial
bound behind K_0(MAJORITY) >= 2^N (1 - sqrt(8/(3N))), the exact-integer test the code runs, and
the two axioms (central binomial, Chen-Stein) the coverage steps cite."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy as sp

from verify.proofs.axiom_schemas import schema
from verify.proofs.axioms import violation
from verify.proofs.core import axiom
from verify.proofs.coverage_common import DOC9, S5
from verify.proofs.methods import Use, sympy_identity, z3_step

__all__ = ["MAJORITY_LOWER"]


# ----------------------------------------------------------------------------- axioms
def _central_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """C(2h, h) and 4^h, both divided by 4^h (exact integers to a float ratio; h up to 3000),
    and pi."""
    h = np.unique(np.concatenate([[1, 2, 3], np.round(10 ** rng.uniform(0, 3.5, n))])).astype(int)
    h = rng.choice(h, n)
    ratio = np.array([float(Fraction(math.comb(2 * k, k), 4**k)) for k in map(int, h)])
    return {"c": ratio, "f": np.ones(n), "h": h.astype(float), "pi": np.full(n, np.pi)}


def _central_binomial(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _central_scalars(rng, n)
    return violation(s["c"] * np.sqrt(s["pi"] * s["h"]), s["f"])


_c, _f, _h, _pi = sp.symbols("c f h pi", real=True)


axiom(
    "axiom.central_binomial",
    "Central binomial coefficient",
    "C(2h, h) <= 4^h / sqrt(pi h) for every integer h >= 1.",
    "Wallis' product; e.g. Graham, Knuth & Patashnik, Concrete Mathematics, Ex 9.60",
    _central_binomial,
    schema=schema(
        {"c": "C(2h, h)", "f": "4^h", "h": "an integer >= 1", "pi": "the constant pi"},
        [_h >= 1, _f > 0, _pi > 0],
        _c**2 * _pi * _h <= _f**2,
        _central_scalars,
    ),
)


def _chen_stein_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Indicators I_i = [the bits of S_i all equal c_i] of 10 fair bits, B_i = the indicators
    sharing a bit (so b_3 = 0); exact P[W = 0] by enumerating the 2^10 outcomes."""
    bits = ((np.arange(1024)[:, None] >> np.arange(10)) & 1).astype(bool)  # (1024, 10)
    out = {k: np.empty(n) for k in ("p0", "lambda", "b1", "b2")}
    for t in range(n):
        m = int(rng.integers(1, 9))
        sets = [rng.choice(10, int(rng.integers(1, 5)), replace=False) for _ in range(m)]
        vals = [rng.integers(0, 2, len(s)).astype(bool) for s in sets]
        ind = np.stack([(bits[:, s] == v).all(1) for s, v in zip(sets, vals, strict=True)], 1)
        p = ind.mean(0)
        lam = p.sum()
        dep = np.array([[bool(set(a) & set(b)) for b in sets] for a in sets])
        b1 = (np.outer(p, p) * dep).sum()
        both = (ind[:, :, None] & ind[:, None, :]).mean(0)
        b2 = (both * dep).sum() - np.trace(both)
        out["p0"][t], out["lambda"][t], out["b1"][t], out["b2"][t] = (
            (~ind.any(1)).mean(),
            lam,
            b1,
            b2,
        )
    return out


def _chen_stein(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _chen_stein_scalars(rng, n)
    lam = s["lambda"]
    return violation(np.abs(s["p0"] - np.exp(-lam)), (s["b1"] + s["b2"]) * (1 - np.exp(-lam)) / lam)


_p0, _lam, _b1, _b2 = sp.symbols("p0 lambda b1 b2", real=True)


axiom(
    "axiom.chen_stein",
    "Chen-Stein Poisson approximation",
    "For W = sum_i I_i of indicators with p_i = E I_i, lambda = sum p_i > 0 and dependency"
    " sets B_i (i in B_i; I_i independent of {I_j : j not in B_i}, so b_3 = 0):"
    " |P[W = 0] - e^{-lambda}| <= (b_1 + b_2)(1 - e^{-lambda})/lambda, b_1 = sum_i sum_{j in"
    " B_i} p_i p_j, b_2 = sum_i sum_{j in B_i, j != i} E[I_i I_j].",
    "Arratia, Goldstein & Gordon, Ann. Probab. 17 (1989) 9-25, Thm 1",
    _chen_stein,
    schema=schema(
        {"p0": "P[W = 0]", "lambda": "sum_i p_i > 0", "b1": "b_1", "b2": "b_2 (b_3 = 0)"},
        [_lam > 0, _b1 >= 0, _b2 >= 0],
        sp.Abs(_p0 - sp.exp(-_lam)) * _lam <= (_b1 + _b2) * (1 - sp.exp(-_lam)),
        _chen_stein_scalars,
    ),
)


# ----------------------------------------------------------------------------- Sec 5 MAJORITY
hh = sp.symbols("h", positive=True, integer=True)
G = sp.gamma  # C(2h - 1, h - 1), C(2h, h), C(2h, h + 1) in Gamma functions
sympy_identity(
    "sec_5_majority.pascal",
    S5,
    "Lower bound: the tie count",
    DOC9,
    2 * G(2 * hh) / (G(hh) * G(hh + 1)),
    G(2 * hh + 1) / G(hh + 1) ** 2,
    G(2 * hh + 1) / G(hh + 1) ** 2 / 2,
)
sympy_identity(
    "sec_5_majority.ratio",
    S5,
    "Lower bound: the tie count",
    DOC9,
    (G(2 * hh + 1) / (G(hh + 2) * G(hh))) / (G(2 * hh + 1) / G(hh + 1) ** 2),
    hh / (hh + 1),
    1 / (hh + 1),
)
nq, P, Bc, Cc, F, pi_, h2, K0, m_, g_ = sp.symbols("N P B C F pi h K_0 m g", real=True)


def _central() -> Use:
    """C^2 pi h <= F^2: the central binomial bound at C = C(2h, h), F = 4^h."""
    return Use(
        "axiom.central_binomial", {"c": Cc, "h": h2, "f": F, "pi": pi_}, Cc**2 * pi_ * h2 <= F**2
    )


z3_step(
    "sec_5_majority.tie_count_odd",
    S5,
    "Lower bound: the tie count",
    DOC9,
    [
        nq >= 1,
        P > 0,
        pi_ >= 3,
        sp.Eq(2 * h2, nq + 1),
        sp.Eq(F, 2 * P),
        Cc >= 0,
        Cc**2 * pi_ * h2 <= F**2,
        sp.Eq(Bc, Cc),
    ],
    sp.Le(Bc**2 * pi_ * nq, 8 * P**2),
    sp.Le(Bc**2 * pi_ * nq, 4 * P**2),
    facts=("sec_5_majority.pascal",),
    uses=(_central(),),
    note="odd N: B = 2 C(N, (N-1)/2) = C(2h, h) with h = (N + 1)/2 (pascal), 4^h = 2 * 2^N,"
    " C(2h, h)^2 pi h <= 16^h (central binomial)",
)
z3_step(
    "sec_5_majority.tie_count_even",
    S5,
    "Lower bound: the tie count",
    DOC9,
    [
        nq >= 2,
        P > 0,
        pi_ >= 3,
        sp.Eq(2 * h2, nq),
        sp.Eq(F, P),
        Cc >= 0,
        Cc**2 * pi_ * h2 <= F**2,
        Bc >= 0,
        Bc <= 2 * Cc,
    ],
    sp.Le(Bc**2 * pi_ * nq, 8 * P**2),
    sp.Le(Bc**2 * pi_ * nq, 4 * P**2),
    facts=("sec_5_majority.ratio",),
    uses=(_central(),),
    note="even N: B = C(N, N/2) + C(N, N/2 +- 1) <= 2 C(2h, h) with h = N/2 (ratio), 4^h = 2^N",
)
MAJORITY_LOWER = P * (1 - sp.sqrt(8 / (3 * nq)))
z3_step(
    "sec_5_majority.lower_bound",
    S5,
    "Lower bound",
    DOC9,
    [nq >= 1, P > 0, pi_ >= 3, Bc >= 0, sp.Eq(K0, P - Bc), Bc**2 * pi_ * nq <= 8 * P**2],
    sp.Ge(K0, MAJORITY_LOWER),
    sp.Ge(K0, P * (1 - sp.sqrt(8 / (4 * nq)))),
    facts=(
        "sec_5_majority.tie_count_odd",
        "sec_5_majority.tie_count_even",
        "sec_5_majority.tie_strings",
        "sec_5_majority.weight_classes",
    ),
    note="K_0 = 2^N - B (the strings off the tie counts are zero-sensitive), pi >= 3",
)
z3_step(
    "sec_5_majority.exact_test",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    [
        nq >= 1,
        P > 0,
        pi_ >= 3,
        Bc >= 0,
        sp.Eq(K0, P - Bc),
        Bc**2 * pi_ * nq <= 8 * P**2,
        m_ >= 0,
        K0 >= MAJORITY_LOWER,
        sp.Eq(g_, P - m_),
        g_ > 0,
        3 * nq * g_**2 > 8 * P**2,
    ],
    sp.Gt(K0, m_),
    sp.Gt(K0, 2 * m_),
    uses=(
        Use(
            "sec_5_majority.lower_bound",
            {"N": nq, "P": P, "pi": pi_, "B": Bc, "K_0": K0},
            K0 >= MAJORITY_LOWER,
        ),
    ),
    note="m = N^c, P = 2^N: gap = 2^N - N^c > 0 and 3 N gap^2 > 8 4^N mean 2^N (1 -"
    " sqrt(8/(3N))) > N^c (majority_lower_bound_exceeds)",
)
