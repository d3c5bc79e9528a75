"""The eps = 0 suite's derivation steps as obligations (docs/derivations_eps_zero.md): the
small-ball constant (section 1), Lemma 4.2's union and sequential bounds (section 2), Lemma
4.4's cube covering (section 4) and Thm 4.5's exponent and Borel-Cantelli series (section 5)."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.methods import arb_step, custom_step, sympy_identity, z3_step

__all__ = ["C_SB", "MARKOV"]

DOC1 = "docs/derivations_eps_zero.md#1-small-ball-bound-sb"
DOC2 = "docs/derivations_eps_zero.md#2-lemma-42"
DOC4 = "docs/derivations_eps_zero.md#4-lemma-44"
DOC5 = "docs/derivations_eps_zero.md#5-thm-45-and-borel-cantelli"
SB, L42, L44, T45 = "Small-ball bound", "Lemma 4.2", "Lemma 4.4", "Thm 4.5"

# ---- section 1: the small-ball constant
d1, d2, d3 = sp.symbols("d1 d2 d3", real=True)
_mean = (d1 + d2 + d3) / 3
sympy_identity(
    "small_ball.variance_projection",
    SB,
    "var(d) = |Pd|^2/D",
    DOC1,
    (d1**2 + d2**2 + d3**2) / 3 - _mean**2,
    ((d1 - _mean) ** 2 + (d2 - _mean) ** 2 + (d3 - _mean) ** 2) / 3,
    ((d1 - _mean) ** 2 + (d2 - _mean) ** 2 + (d3 - _mean) ** 2) / 6,
    positive=False,
)
x, t1, t2, a, D = sp.symbols("x t1 t2 a D", real=True)
z3_step(
    "small_ball.line_segment",
    SB,
    "a line parallel to 1 meets the cube in a segment of length <= a sqrt(D)",
    DOC1,
    [
        a > 0,
        D >= 1,
        x + t1 / sp.sqrt(D) >= 0,
        x + t1 / sp.sqrt(D) <= a,
        x + t2 / sp.sqrt(D) >= 0,
        x + t2 / sp.sqrt(D) <= a,
    ],
    sp.Le(sp.Abs(t1 - t2), a * sp.sqrt(D)),
    sp.Le(sp.Abs(t1 - t2), a * sp.sqrt(D) / 2),
    note="one coordinate b_i = u_i + t/sqrt(D) of the cube confines t",
)
dens, ad, ln = sp.symbols("density a_D len", real=True)
z3_step(
    "small_ball.density",
    SB,
    "Pb has a density on the (D-1)-dim hyperplane bounded by a^-D a sqrt(D)",
    DOC1,
    [a > 0, D >= 1, ad > 0, ln >= 0, ln <= a * sp.sqrt(D), dens <= ad * ln],
    sp.Le(dens, sp.sqrt(D) * ad * a),
    sp.Le(dens, sp.sqrt(D) * ad * a / 2),
    facts=("small_ball.line_segment", "axiom.fubini_density"),
    note="a_D = a^{-D}, the uniform density on the cube",
)
Dp, ap, dl = sp.symbols("D a delta", positive=True)
k = Dp - 1
Vk = sp.pi ** (k / 2) / sp.gamma(k / 2 + 1)
C_SB = sp.sqrt(Dp) * Vk * Dp ** (k / 2) * ap ** (-k)
sympy_identity(
    "small_ball.compose",
    SB,
    "P[var(d) <= delta] <= C_SB delta^{(D-1)/2}",
    DOC1,
    sp.sqrt(Dp) * ap ** (-Dp) * ap * Vk * sp.sqrt(Dp * dl) ** k,
    C_SB * dl ** (k / 2),
    C_SB * dl ** (k / 2) / sp.sqrt(Dp),
    facts=("small_ball.density", "small_ball.variance_projection", "axiom.ball_volume"),
)
var, s = sp.symbols("var s", real=True)
z3_step(
    "small_ball.z_tail",
    SB,
    "At eps = 0: P[z > s] <= C_SB s^{-(D-1)}",
    DOC1,
    [var > 0, s > 0, var ** sp.Rational(-1, 2) > s],
    sp.Lt(var, s**-2),
    sp.Lt(var, s**-2 / 2),
    facts=("small_ball.compose",),
    note="z = var^{-1/2} > s iff var < s^{-2}; then (SB) at delta = s^{-2}",
)

# ---- section 2: Lemma 4.2
tau = sp.symbols("tau1:5", real=True)
u = sp.symbols("u", real=True)
z3_step(
    "lemma_4_2.union_threshold",
    L42,
    "Blowup tail, union bound",
    DOC2,
    [u >= 1, *(sp.And(tk >= 1, tk <= u) for tk in tau)],
    sp.Le(tau[0] * tau[1] * tau[2] * tau[3], u**4),
    sp.Le(tau[0] * tau[1] * tau[2] * tau[3], u**3),
    note="K = 4: every tau_k <= t^{1/K} = u forces beta <= t; so beta > t forces some"
    " z_kn > t^{1/K} - 1",
)
P, Kk, Ss, pz, C, T = sp.symbols("P K S p_z C T", real=True)
z3_step(
    "lemma_4_2.union",
    L42,
    "Blowup tail, union bound",
    DOC2,
    [Kk >= 1, Ss >= 1, C >= 0, T >= 0, pz >= 0, pz <= C * T, P <= Kk * Ss * pz],
    sp.Le(P, Kk * Ss * C * T),
    sp.Le(P, Kk * Ss * C * T / 2),
    facts=("lemma_4_2.union_threshold", "small_ball.z_tail", "axiom.union_bound"),
    note="T = (t^{1/K} - 1)^{-(D-1)}: K S events z_kn > t^{1/K} - 1",
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
v = sp.symbols("v", real=True)
arb_step(
    "lemma_4_2.sequential_exp",
    L42,
    "Blowup tail, sequential conditioning",
    DOC2,
    {c: (sp.Rational(1, 4), 4), v: (0, 8)},
    sp.Le(c**2 / ((1 + c) * sp.exp(v) - 1) ** 2, sp.exp(-2 * v)),
    sp.Le(c**2 / ((1 + c) * sp.exp(v) - 1) ** 2, sp.exp(-2 * v) / 2),
    facts=("lemma_4_2.sequential_shift", "axiom.mean_value"),
    substitution="D = 3 (exponent 2), u = u0 + v, e^{u0} = 1 + c: the exp form of"
    " lemma_4_2.sequential_shift on c in [1/4, 4], v in [0, 8] (all c >= 0: the z3 step)",
    coq="forall v, 0 <= v <= 8 -> 1 <= exp v",
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
    facts=("axiom.union_bound", "axiom.markov"),
    note="P[beta(x) > t] <= p; Markov on the number of neighbours with beta > t",
)

# ---- section 4: Lemma 4.4's cube covering


def _gram_det() -> Verdict:
    dd = sp.symbols("D", positive=True)
    for kk in range(1, 4):
        g = sp.eye(kk) - sp.ones(kk, kk) / dd
        if sp.simplify(g.det() - (1 - sp.Rational(kk) / dd)) != 0:
            return Verdict("failed", f"k = {kk}")
    return Verdict("proved", "sympy: det(I_k - 11^T/D) = 1 - k/D for k = 1, 2, 3")


def _gram_twin() -> Verdict:
    g = sp.eye(2) - sp.ones(2, 2) / 4
    if g.det() != 1 - sp.Rational(2, 4 * 2):
        return Verdict("refuted", f"k = 2, D = 4: det = {g.det()} != 3/4", {"k": "2", "D": "4"})
    return Verdict("not refuted")


custom_step(
    "lemma_4_4.gram_det",
    L44,
    "Certified slices: explicit slice bound",
    DOC4,
    "sympy",
    "A^T P A = I_k - 11^T/D has det 1 - k/D (k = 1, 2, 3)",
    "det = 1 - k/(2D)",
    _gram_det,
    _gram_twin,
)
u1, u2, c1, c2, c3, c4 = sp.symbols("u1 u2 c1 c2 c3 c4", real=True)
_d = sp.Matrix([c1 + u1, c2 + u2, c3, c4])
_pd = _d - sp.ones(4, 1) * sum(_d) / 4
_q = (_pd.T * _pd)[0]
sympy_identity(
    "lemma_4_4.slice_quadratic",
    L44,
    "Certified slices: explicit slice bound",
    DOC4,
    sp.hessian(_q, (u1, u2))[0, 0] / 2 + 10 * sp.hessian(_q, (u1, u2))[0, 1] / 2,
    (1 - sp.Rational(1, 4)) + 10 * (-sp.Rational(1, 4)),
    (1 - sp.Rational(1, 4)),
    facts=("lemma_4_4.gram_det", "axiom.ball_volume", "axiom.union_bound"),
    positive=False,
)
ws, pss, Bb = sp.symbols("w1:4"), sp.symbols("q1:4"), sp.symbols("B", real=True)
z3_step(
    "lemma_4_4.volume_average",
    L44,
    "P_Theta[bad] is the volume average of the per-cube probabilities",
    DOC4,
    [*(wi >= 0 for wi in ws), sp.Eq(sum(ws), 1), *(qi <= Bb for qi in pss)],
    sp.Le(sum(wi * qi for wi, qi in zip(ws, pss, strict=True)), Bb),
    sp.Le(sum(wi * qi for wi, qi in zip(ws, pss, strict=True)), Bb / 2),
    facts=("axiom.total_probability", "lemma_4_2.neighbourhood"),
    note="three cubes; each per-cube probability is at most the Lemma 4.2 bound",
)
Bc, rc, nc, xc = sp.symbols("B rho n x", real=True)
z3_step(
    "lemma_4_4.cube_count",
    L44,
    "covering Theta with cubes of side 2 rho",
    DOC4,
    [Bc > 0, rc > 0, nc >= Bc / rc, nc < Bc / rc + 1, xc >= -Bc, xc <= Bc],
    sp.Le(xc, -Bc + 2 * rc * nc),
    sp.Le(xc, -Bc + rc * nc),
    note="n = ceil(B/rho) cubes [-B + 2 rho j, -B + 2 rho (j + 1)], j < n, per axis reach past"
    " every x in [-B, B], so ceil(B/rho)^M cubes of side 2 rho cover Theta = [-B, B]^M"
    " ((B/rho)^M is no count when B/rho is not an integer)",
)
TT, T2, X = sp.symbols("T T' X", real=True)
z3_step(
    "lemma_4_4.sign_kept",
    L44,
    "The sensitivity event, directly",
    DOC4,
    [X >= 0, TT * T2 <= 0, sp.Abs(TT - T2) <= X],
    sp.Le(sp.Abs(TT), X),
    sp.Le(sp.Abs(TT), X / 2),
    facts=("cor_4_3.good_event",),
    note="a neighbour with the other sign forces |T(x)| <= ||w|| C_infl t^2/N (Cor 4.3's flip"
    " bound on the good event, from Lemma 2.9)",
)
om_c, aa = sp.symbols("c a", real=True)
z3_step(
    "lemma_4_4.bias_uniform",
    L44,
    "The sensitivity event, directly",
    DOC4,
    [aa >= 0],
    sp.Le(sp.Max(sp.Min(-om_c + aa, 1) - sp.Max(-om_c - aa, -1), 0) / 2, aa),
    sp.Le(sp.Max(sp.Min(-om_c + aa, 1) - sp.Max(-om_c - aa, -1), 0) / 2, aa / 2),
    note="omega ~ Unif[-1, 1]: P[|c + omega| < a] is the length of an interval over 2",
)

# ---- section 5: Thm 4.5
ys = sp.symbols("y", real=True)
z3_step(
    "thm_4_5.power_mean_instance",
    T45,
    "Series",
    DOC5,
    [ys >= 0],
    sp.Le((1 + ys) ** 7, 2**7 * (1 + ys**7)),
    sp.Le((1 + ys) ** 7, 2**5 * (1 + ys**7)),
    note="(1 + x^{1/a})^a <= 2^a (1 + x) at a = D - 1 = 7, y = x^{1/a} (a check of"
    " thm_4_5.power_mean, which holds for every a >= 1)",
)
_a = sp.Symbol("a", positive=True)
_y = sp.Symbol("y", nonnegative=True)
_PHI = 2 ** (_a - 1) * (1 + _y**_a) - (1 + _y) ** _a


def _power_mean() -> Verdict:
    """Every a >= 1, y >= 0: phi(y) = 2^{a-1}(1 + y^a) - (1 + y)^a has phi(1) = 0 and
    phi'(y) = a (2^{a-1} y^{a-1} - (1 + y)^{a-1}) = a ((2y)^{a-1} - (1 + y)^{a-1}),
    whose sign is that of 2y - (1 + y) = y - 1 (t -> t^{a-1} is nondecreasing for a >= 1), so
    phi decreases to phi(1) = 0 and increases after it: phi >= 0, and 2^{a-1} <= 2^a."""
    if sp.simplify(_PHI.subs(_y, 1)) != 0:
        return Verdict("failed", "phi(1) != 0")
    deriv = _a * (2 ** (_a - 1) * _y ** (_a - 1) - (1 + _y) ** (_a - 1))
    if sp.simplify(sp.diff(_PHI, _y) - deriv) != 0:
        return Verdict("failed", "phi' is not a (2^{a-1} y^{a-1} - (1 + y)^{a-1})")
    if sp.simplify(2 ** (_a - 1) * _y ** (_a - 1) - (2 * _y) ** (_a - 1)) != 0:
        return Verdict("failed", "2^{a-1} y^{a-1} != (2y)^{a-1}")
    for aa in (1, 2, 7, 15, 31, sp.Rational(5, 2)):  # the sizes the series uses, and others
        for yy in (0, sp.Rational(1, 3), 1, 3):
            if (_PHI.subs({_a: aa, _y: yy})).evalf(30) < 0:
                return Verdict("failed", f"phi < 0 at a = {aa}, y = {yy}", {"a": str(aa)})
    return Verdict(
        "proved",
        "sympy, symbolic a: phi(1) = 0, phi' = a ((2y)^{a-1} - (1 + y)^{a-1}) has the sign of"
        " y - 1 (power monotone), so phi >= 0 for every a >= 1 (mean value theorem)",
    )


def _power_mean_twin() -> Verdict:
    twin = 2 ** (_a - 2) * (1 + _y**_a) - (1 + _y) ** _a
    val = twin.subs({_a: 2, _y: 1})
    if val < 0:
        return Verdict("refuted", f"a = 2, y = 1: 2^(a-2)(1 + y^a) - (1 + y)^a = {val}", {"a": "2"})
    return Verdict("not refuted")


custom_step(
    "thm_4_5.power_mean",
    T45,
    "Series",
    DOC5,
    "sympy",
    "(1 + y)^a <= 2^{a-1} (1 + y^a) <= 2^a (1 + y^a) for every a >= 1, y >= 0 (symbolic a:"
    " phi(1) = 0 and phi' has the sign of y - 1); with y = x^{1/a}, a = D - 1:"
    " (1 + x^{1/a})^a <= 2^a (1 + x) at every D the code uses",
    "(1 + y)^a <= 2^{a-2} (1 + y^a)",
    _power_mean,
    _power_mean_twin,
    facts=("axiom.mean_value", "axiom.log_monotone"),
)
e, p, zt, al, Kq = sp.symbols("e p zeta alpha K", real=True)
z3_step(
    "thm_4_5.summable_iff",
    T45,
    "Series",
    DOC5,
    [sp.Eq(p, e + 1 + Kq - zt * al / 2), e < zt * al / 2 - Kq - 2],
    sp.Lt(p, -1),
    sp.Lt(p, -2),
    note="p = e + 1 + K - zeta (D-1)/2 < -1 iff e < e* = zeta (D-1)/2 - K - 2",
)
Dq, Lq = sp.symbols("D L", positive=True)
sympy_identity(
    "thm_4_5.exponent_gain",
    T45,
    "The toolkit's own derived result (a stronger exponent)",
    DOC5,
    ((Dq - 1) / 2 - 2 * Lq - 2) - ((Dq - 1) / (2 * Lq) - 5),
    (Dq - 1) * (Lq - 1) / (2 * Lq) - 2 * Lq + 3,
    (Dq - 1) * (Lq - 1) / (2 * Lq) - 2 * Lq,
)
GRID = ((16, 1), (32, 2))


@lru_cache(maxsize=64)
def _limit_at_infinity(expr: sp.Expr, n: sp.Symbol) -> sp.Expr:
    """sympy's lim_{n -> oo} expr, memoised on the expression: series_order and both sides of
    series_convergence ask the same limits (a pure function of the expression)."""
    return sp.limit(expr, n, sp.oo)


def _order(shift: sp.Expr = sp.S.Zero) -> list[tuple]:
    from verify.theory.zero_sensitivity import bad_event_series_term

    out = []
    for dd, ll in GRID:
        ee = sp.Rational(dd - 1, 2 * ll) - 5
        zz = sp.Rational(dd - 2, dd - 1)
        term, n = bad_event_series_term(dd, ll, ee, zz, box=1.0)
        pq = ee + 1 + 2 * ll - zz * (dd - 1) / 2 + shift
        ratio = _limit_at_infinity(term / (n**pq * sp.log(n) ** (2 * ll - 1)), n)
        out.append(((dd, ll), pq, ratio))
    return out


def _series_order() -> Verdict:
    rows = _order()
    ok = all(r.is_finite and r.is_positive for _, _, r in rows)
    text = "; ".join(
        f"(D, L) = {g}: p = {pq}, lim a_N/(N^p log^(K-1) N) finite > 0" for g, pq, _ in rows
    )
    return Verdict("proved" if ok else "failed", f"sympy: {text}")


def _series_order_twin() -> Verdict:
    rows = _order(sp.Rational(-1, 2))
    bad = [(g, r) for g, _, r in rows if not (r.is_finite and r.is_positive)]
    if bad:
        g, r = bad[0]
        return Verdict(
            "refuted", f"with p - 1/2 the limit is {r}", {"D": str(g[0]), "L": str(g[1])}
        )
    return Verdict("not refuted")


custom_step(
    "thm_4_5.series_order",
    T45,
    "Series",
    DOC5,
    "sympy",
    "a_N ~ N^p (log N)^{K-1}, p = e + 1 + K - zeta(D-1)/2, at (D, L) = (16, 1), (32, 2)",
    "a_N ~ N^{p - 1/2} (log N)^{K-1}",
    _series_order,
    _series_order_twin,
    facts=(
        "lemma_4_2.gamma_tail",
        "thm_4_5.power_mean",
        "lemma_4_2.sequential_shift",
        "cor_4_3.good_event",
    ),
)


def _convergent(shift: int) -> list[tuple]:
    m = sp.Symbol("m", positive=True, integer=True)
    out = []
    for g, pq, _ in _order():
        q = 2 * g[1] - 1
        conv = sp.Sum(m ** (pq + shift) * sp.log(m) ** q, (m, 2, sp.oo)).is_convergent()
        out.append((g, pq + shift, bool(conv)))
    return out


def _series_conv() -> Verdict:
    rows = _convergent(0)
    ok = all(cv for *_, cv in rows)
    return Verdict(
        "proved" if ok else "failed",
        "sympy: sum N^p log^(K-1) N converges at " + ", ".join(f"p = {p}" for _, p, _ in rows),
    )


def _series_conv_twin() -> Verdict:
    for g, pq, cv in _convergent(1):
        if not cv:
            return Verdict("refuted", f"p + 1 = {pq}: divergent", {"D": str(g[0]), "L": str(g[1])})
    return Verdict("not refuted")


custom_step(
    "thm_4_5.series_convergence",
    T45,
    "Series",
    DOC5,
    "sympy",
    "sum_N N^p (log N)^{K-1} < inf at the grid's p (so sum P[E_N] < inf: Borel-Cantelli)",
    "the series with p + 1 converges",
    _series_conv,
    _series_conv_twin,
    facts=("thm_4_5.series_order", "thm_4_5.summable_iff", "axiom.borel_cantelli"),
)
