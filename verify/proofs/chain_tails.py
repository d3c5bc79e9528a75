"""The chain to the code for the eps = 0 tail bounds and Hahn & Rofin's bounds (the table of
coded functions is :data:`verify.proofs.chain.CODE`): small_ball_constant, z_tail_bound, the
union and sequential blowup tails, Lemma 4.2's neighbourhood bound, the slice bound of Lemma 4.4,
Thm 4.5's exponent and series term, H&R Cor 5's bound and omega_f, H&R Thm 6's probabilities."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import sympy as sp
from flint import arb

from verify.proofs.chain import CODE, Case, _points_step, ball, code
from verify.proofs.compose import ev, iv
from verify.proofs.core import Verdict
from verify.proofs.eps_zero import C_SB
from verify.proofs.interval import Iv
from verify.proofs.methods import custom_step

__all__: list[str] = []

N = 100
DOC0 = "docs/derivations_eps_zero.md"


def _c_sb(d: int, a: float) -> Iv:
    return ev(C_SB, D=iv(d), a=iv(a))


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _union(t: float, d: int, a: float, k: int, s: int) -> Iv:
    root = arb(t) ** (arb(1) / k) - 1
    if not root > 0:
        return iv(1)
    return (iv(k) * iv(s) * _c_sb(d, a) * ball(root).ipow(-(d - 1))).min(iv(1))


def _sequential(t: float, d: int, a: float, k: int, s: int) -> Iv:
    sc = iv(s) * _c_sb(d, a)
    u0 = ball((arb(1) + (sc.hi.log() / (d - 1)).exp()).log()).max(
        ball((arb(1) + (sc.lo.log() / (d - 1)).exp()).log())
    )
    y = iv(d - 1) * (ball(arb(t).log()) + -(iv(k) * u0))
    if not y.lo > 0:
        if y.hi <= 0:
            return iv(1)
        raise ArithmeticError("the threshold y straddles 0")
    q_hi = y.lo.gamma_upper(k, regularized=1)  # Q(K, y) decreases in y
    q_lo = y.hi.gamma_upper(k, regularized=1)
    return Iv(q_lo.lower(), q_hi.upper())


def _tail_points(seed: int) -> Iterator[tuple[float, int, float, int, int]]:
    r = _rng(seed)
    for _ in range(N):
        d, a, k, s = (
            int(r.integers(3, 13)),
            float(10 ** r.uniform(-0.5, 0.5)),
            int(r.integers(1, 7)),
            int(r.integers(1, 65)),
        )
        yield float(10 ** r.uniform(0.5, 25)), d, a, k, s


def _neighbourhood_cases() -> Iterator[Case]:
    r = _rng(5)
    for t, d, a, k, _ in _tail_points(5):
        n = int(r.integers(1, 200))
        kk, eos = int(r.integers(0, n + 1)), bool(r.integers(2))
        s = n + 1 if eos else n

        def comp(
            t: float = t, d: int = d, a: float = a, k: int = k, s: int = s, n: int = n, kk: int = kk
        ) -> Iv:
            p = _union(t, d, a, k, s).min(_sequential(t, d, a, k, s))
            return (p * (iv(1) + iv(n) * iv(n - kk + 1).inv())).min(iv(1))

        pt = {"t": t, "D": d, "a": a, "K": k, "N": n, "k": kk, "eos": eos}
        yield (
            pt,
            (lambda p=(t, d, a, k, n, kk, eos): code("lemma_4_2.chain_neighbourhood")(*p)),
            comp,
        )


def _chi2(d: int, sigma: float, t: float) -> Iv:
    u = iv(t) * iv(d) * iv(sigma).ipow(-2) * iv(Fraction(1, 2))  # F_{chi^2_k}(x) = P(k/2, x/2)
    s = arb(d - 1) / 2
    return Iv(
        u.lo.gamma_lower(s, regularized=1).lower(), u.hi.gamma_lower(s, regularized=1).upper()
    )


def _noise_points(seed: int) -> Iterator[tuple[int, float, float]]:
    r = _rng(seed)
    for _ in range(N):
        d, sigma = int(r.integers(2, 33)), float(10 ** r.uniform(-2, 0))
        yield d, sigma, float(sigma**2 * 10 ** r.uniform(-1.5, 0.5))


_points_step(
    "lemma_4_2.chain_neighbourhood",
    "Lemma 4.2",
    "Neighbourhood",
    DOC0 + "#2-lemma-42",
    _neighbourhood_cases,
    facts=("lemma_4_2.neighbourhood",),
)

# ---- Thm 4.5's series term, symbolically
_SERIES_GRID = ((16, 1), (32, 2), (8, 1), (24, 3))


def _series_composed(
    d: int, ll: int, e: sp.Expr, zeta: sp.Expr, box: float
) -> tuple[sp.Expr, sp.Symbol]:
    """a_N from the derivation (section 5): the family 2 N^e, (N + 1) positions, the
    sequential tail with (1 + x^{1/a})^a <= 2^a (1 + x) and Q(K, y) = e^{-y} sum y^j / j!."""
    from verify.theory.zero_sensitivity import rational_constant

    n = sp.Symbol("N", positive=True)
    alpha, kk = d - 1, 2 * ll
    c = rational_constant(code("small_ball.chain_constant")(d, 2.0 * box))
    y = alpha * zeta * sp.log(n) / 2
    tail = 2 ** (alpha * kk) * (1 + (n + 1) * c) ** kk * n ** (-zeta * alpha / 2)
    return 2 * n**e * (n + 1) * tail * sum(y**j / sp.factorial(j) for j in range(kk)), n


def _series_check(weaken: sp.Expr = sp.S.One) -> tuple[bool, dict]:
    for d, ll in _SERIES_GRID:
        e = sp.Rational(d - 1, 2 * ll) - 5
        zeta = sp.Rational(d - 2, d - 1)
        got, n = code("thm_4_5.chain_series")(d, ll, e, zeta, 1.0)
        want, n2 = _series_composed(d, ll, e, zeta, 1.0)
        if sp.simplify(weaken * got.subs(n, n2) - want) != 0:
            return False, {"D": d, "L": ll}
    return True, {}


def _series_prove() -> Verdict:
    ok, pt = _series_check()
    if ok:
        return Verdict(
            "proved",
            f"sympy: {CODE['thm_4_5.chain_series']} - composition = 0 at (D, L) in {_SERIES_GRID}",
        )
    return Verdict("failed", "the coded term differs from the composition", pt)


def _series_twin() -> Verdict:
    ok, pt = _series_check(sp.Rational(1, 2))
    return Verdict("not refuted") if ok else Verdict("refuted", "the halved term differs", pt)


custom_step(
    "thm_4_5.chain_series",
    "Thm 4.5",
    "Series",
    DOC0 + "#5-thm-45-and-borel-cantelli",
    "chain",
    f"{CODE['thm_4_5.chain_series']} equals the composed a_N (symbolically)",
    f"{CODE['thm_4_5.chain_series']} times 1/2",
    _series_prove,
    _series_twin,
    facts=(
        "thm_4_5.power_mean",
        "lemma_4_2.gamma_tail",
        "lemma_4_2.neighbourhood",
        "small_ball.chain_constant",
    ),
)
