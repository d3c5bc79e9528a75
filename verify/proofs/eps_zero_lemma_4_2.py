"""Lemma 4.2's union and sequential bounds as obligations (docs/derivations_eps_zero.md
section 2)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.exp_substitution import exp_at_least_one, exp_step, substitute_exp
from verify.proofs.finite_products import product_bound
from verify.proofs.methods import Use, _fmt_point, custom_step, holds_at, z3_step
from verify.proofs.z3_encoding import _z3_prove

__all__ = ["MARKOV"]

DOC2 = "docs/derivations_eps_zero.md#2-lemma-42"
L42 = "Lemma 4.2"

# ---- section 2: Lemma 4.2
u = sp.symbols("u", real=True)
product_bound(
    "lemma_4_2.union_threshold",
    L42,
    "Blowup tail, union bound",
    DOC2,
    u,
    (u >= 1,),
    note="u = t^{1/K}: every tau_k <= u forces beta <= t; so beta > t forces some"
    " z_kn > t^{1/K} - 1",
)
P, Kk, Ss, pz, C, T, sig, pv = sp.symbols("P K S p_z C T Sigma p_var", real=True)
z3_step(
    "lemma_4_2.union",
    L42,
    "Blowup tail, union bound",
    DOC2,
    [
        Kk >= 1,
        Ss >= 1,
        C >= 0,
        T >= 0,
        pz >= 0,
        pz <= pv,
        pv <= C * T,
        sig <= Kk * Ss * pz,
        P <= sig,
    ],
    sp.Le(P, Kk * Ss * C * T),
    sp.Le(P, Kk * Ss * C * T / 2),
    facts=("lemma_4_2.union_threshold", "small_ball.z_tail", "small_ball.compose"),
    uses=(
        Use("axiom.probability_range", {"pa": pz, "pb": pv}, pz <= pv),
        Use("axiom.union_bound", {"pu": P, "s": sig}, P <= sig),
    ),
    note="T = (t^{1/K} - 1)^{-(D-1)}: K S events z_kn > s = t^{1/K} - 1, each of probability"
    " p_z <= p_var = P[var <= s^{-2}] (the event inside it: small_ball.z_tail) <= C_SB"
    " s^{-(D-1)} = C T (small_ball.compose at delta = s^{-2}); Sigma = the sum of their"
    " probabilities",
)
c, w = sp.symbols("c w", real=True)
z3_step(
    "lemma_4_2.sequential_shift",
    L42,
    "Blowup tail, sequential conditioning",
    DOC2,
    [c > 0, w >= 1 + c],
    sp.Le(c / (w - 1), (1 + c) / w),
    sp.Le(c / (w - 1), (1 + c) / (2 * w)),
    note="c = (S C_SB)^{1/(D-1)} > 0, w = e^u, e^{u0} = 1 + c: c/(e^u - 1) <= e^{u0 - u} for"
    " u >= u0, so S C_SB (e^u - 1)^{-(D-1)} <= e^{(D-1) u0} e^{-(D-1) u} (raise to the power"
    " D - 1)",
)
v, ev, mm = sp.symbols("v W m", real=True)
SEQ_BASE = c / ((1 + c) * sp.exp(v) - 1)  # u = u0 + v, e^{u0} = 1 + c
exp_step(
    "lemma_4_2.sequential_exp",
    L42,
    "Blowup tail, sequential conditioning",
    DOC2,
    [c > 0, v >= 0],
    sp.Le(SEQ_BASE, sp.exp(-v)),
    sp.Le(SEQ_BASE, sp.exp(-v) / 2),
    {ev: (v, 1)},
    facts=("lemma_4_2.sequential_shift",),
    note="u = u0 + v, e^{u0} = 1 + c: the exp form of lemma_4_2.sequential_shift for every"
    " c > 0, v >= 0 (raised to the power D - 1 by lemma_4_2.sequential_power)",
)


def _sequential_power() -> Verdict:
    """b^m <= e^{-m v} for every m > 0 (m = D - 1), c > 0, v >= 0, b = SEQ_BASE: 0 < b (z3
    after W = e^v, W >= 1 as in :mod:`verify.proofs.exp_substitution`), b <= e^{-v}
    (lemma_4_2.sequential_exp), and x -> x^m increasing on x > 0 (d/dx x^m = m x^{m-1} > 0 for
    x, m > 0, sympy; the mean value theorem)."""
    x, m = sp.symbols("x m", positive=True)
    if sp.diff(x**m, x).is_positive is not True:
        return Verdict("failed", "sympy does not find d/dx x^m > 0 for x, m > 0")
    pos = exp_at_least_one([v >= 0], v) or _z3_prove(
        [c > 0, ev >= 1], sp.Gt(substitute_exp(SEQ_BASE, ev, v, sp.Integer(1)), 0)
    )
    if pos.status != "proved":
        return Verdict(pos.status, f"0 < b: {pos.detail}", pos.point)
    return Verdict(
        "proved",
        "z3: b > 0 after W = e^v >= 1; sympy: d/dx x^m = m x^(m-1) > 0 for x, m > 0, so"
        " b <= e^{-v} (lemma_4_2.sequential_exp) gives b^m <= e^{-m v} for every m > 0",
    )


def _sequential_power_twin() -> Verdict:
    pt = {c: 1, v: 0, mm: 1}
    if holds_at(sp.Le(SEQ_BASE**mm, sp.exp(-mm * v) / 2), pt) is False:
        return Verdict("refuted", "b^m > e^{-m v}/2 in interval arithmetic", _fmt_point(pt))
    return Verdict("not refuted", "the twin held at c = 1, v = 0, m = 1")


custom_step(
    "lemma_4_2.sequential_power",
    L42,
    "Blowup tail, sequential conditioning",
    DOC2,
    "sympy",
    "(c/((1 + c) e^v - 1))^m <= e^{-m v} for every m > 0 (m = D - 1, every D >= 2), c > 0,"
    " v >= 0: S C_SB (e^u - 1)^{-(D-1)} <= e^{(D-1) u0} e^{-(D-1) u} for u >= u0",
    "(c/((1 + c) e^v - 1))^m <= e^{-m v}/2",
    _sequential_power,
    _sequential_power_twin,
    facts=("lemma_4_2.sequential_exp", "axiom.mean_value"),
)
y = sp.symbols("y", positive=True)


def _gamma_tail() -> Verdict:
    """Every K >= 1 by induction on K: Q(1, y) = e^{-y}; with g = Q(K+1, y) - Q(K, y) -
    e^{-y} y^K / K! (symbolic K), dg/dy = 0 and g -> 0 as y -> inf, so g = 0 (mean value
    theorem); the partial sums grow by the same term. K = 1..4 written out as a check."""
    kk = sp.Symbol("K", positive=True, integer=True)
    q = sp.uppergamma(kk, y) / sp.gamma(kk)
    step = sp.exp(-y) * y**kk / sp.factorial(kk)
    g = q.subs(kk, kk + 1) - q - step
    if sp.simplify(sp.uppergamma(1, y) - sp.exp(-y)) != 0:
        return Verdict("failed", "base case K = 1")
    if sp.simplify(sp.diff(g, y)) != 0:
        return Verdict("failed", "d/dy of the induction step is not 0")
    for term in (q.subs(kk, kk + 1), q, step):
        if sp.limit(term, y, sp.oo) != 0:
            return Verdict("failed", f"{term} does not vanish as y -> inf")
    for k in range(1, 5):
        lhs = sp.uppergamma(k, y) / sp.gamma(k)
        rhs = sp.exp(-y) * sum(y**j / sp.factorial(j) for j in range(k))
        if sp.simplify(sp.expand_func(lhs) - rhs) != 0:
            return Verdict("failed", f"K = {k}")
    return Verdict(
        "proved",
        "sympy: Q(1, y) = e^{-y}; for symbolic K, Q(K+1, y) - Q(K, y) - e^{-y} y^K/K! has"
        " derivative 0 and limit 0 at inf (so it is 0): every K by induction (K = 1..4 checked)",
    )


def _gamma_tail_twin() -> Verdict:
    lhs = sp.expand_func(sp.uppergamma(3, y) / sp.gamma(3))
    twin = sp.exp(-y) * (1 + y)
    val = (lhs - twin).subs(y, 1)
    if sp.N(val, 30) != 0:
        return Verdict("refuted", f"K = 3, y = 1: difference {sp.N(val, 6)}", {"K": "3", "y": "1"})
    return Verdict("not refuted")


custom_step(
    "lemma_4_2.gamma_tail",
    L42,
    "Blowup tail, sequential conditioning",
    DOC2,
    "sympy",
    "Q(K, y) = e^{-y} sum_{j<K} y^j / j! for every K >= 1 (induction on K: the step's difference"
    " has y-derivative 0 and vanishes at infinity): the Gamma(K, D-1) tail",
    "the last term of the sum dropped",
    _gamma_tail,
    _gamma_tail_twin,
    facts=("axiom.stochastic_dominance", "axiom.mean_value"),
)
pb, pm, E, N, kq = sp.symbols("p_b p_m E N k", real=True)
pp = sp.symbols("p", real=True)
MARKOV = 1 + N / (N - kq + 1)  # the neighbourhood bound is p times this factor
z3_step(
    "lemma_4_2.neighbourhood",
    L42,
    "Neighbourhood",
    DOC2,
    [
        N >= 1,
        kq >= 0,
        kq <= N,
        pp >= 0,
        pb <= pp,
        E >= 0,
        E <= N * pp,
        pm >= 0,
        pm * (N - kq + 1) <= E,
        P <= pb + pm,
    ],
    sp.Le(P, pp * MARKOV),
    sp.Le(P, pp * MARKOV / 2),
    uses=(
        Use("axiom.union_bound", {"pu": P, "s": pb + pm}, P <= pb + pm),
        Use("axiom.markov", {"pr": pm, "ex": E, "a": N - kq + 1}, pm * (N - kq + 1) <= E),
    ),
    note="P[beta(x) > t] <= p; Markov on the number of neighbours with beta > t (E its"
    " expectation, at most N p)",
)
