"""The chain to the code for the eps = 0 tail bounds and Hahn & Rofin's bounds (the table of
coded functions is :data:`verify.proofs.chain.CODE`): Thm 4.5's series term, symbolically, and
the chi^2 cdf in arb that H&R's chains use (Lemma 4.2's tail and neighbourhood bound and Thm
4.5's min(1, a_N): :mod:`verify.proofs.chain_callees`)."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from flint import arb

from verify.proofs.chain import CODE, code
from verify.proofs.compose import iv
from verify.proofs.core import Verdict
from verify.proofs.interval import Iv
from verify.proofs.methods import custom_step

__all__: list[str] = []

N = 100
DOC0 = "docs/derivations_eps_zero.md"


def _chi2(d: int, sigma: float, t: float) -> Iv:
    u = iv(t) * iv(d) * iv(sigma).ipow(-2) * iv(Fraction(1, 2))  # F_{chi^2_k}(x) = P(k/2, x/2)
    s = arb(d - 1) / 2
    return Iv(
        u.lo.gamma_lower(s, regularized=1).lower(), u.hi.gamma_lower(s, regularized=1).upper()
    )


# ---- Thm 4.5's series term, symbolically
# every (D, L) the toolkit evaluates a_N at (Thm 4.5's series grids, all tiers; Cor 4.6's
# (16, 1)) and two more: the term is symbolic in N, the sum over j < 2L needs L as a number
_SERIES_GRID = (
    (16, 1), (32, 2), (32, 3), (64, 1), (64, 2), (64, 3), (128, 1), (8, 1), (24, 3),
)  # fmt: skip


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
    from verify.theory.zero_sensitivity import rational_constant

    for d, ll in _SERIES_GRID:
        c = code("small_ball.chain_constant")(d, 2.0)  # both sides read C_SB as this rational:
        if not abs(float(rational_constant(c)) - c) <= 1e-12 * abs(c):  # it must be C_SB
            return False, {"D": d, "L": ll, "C_SB": c}
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
    f"{CODE['thm_4_5.chain_series']} equals the composed a_N symbolically in N, at (D, L) in"
    f" {_SERIES_GRID} (an instance in D, L: every (D, L) the toolkit evaluates it at), box 1",
    f"{CODE['thm_4_5.chain_series']} times 1/2",
    _series_prove,
    _series_twin,
    facts=(
        "thm_4_5.power_mean",
        "lemma_4_2.gamma_tail",
        "lemma_4_2.neighbourhood",
        "small_ball.chain_constant",
    ),
    evidence="sizes",
)
