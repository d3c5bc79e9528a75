"""Thm 4.5's exponent and Borel-Cantelli series as obligations (docs/derivations_eps_zero.md
section 5)."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.links import off_event_domain, per_flip_link
from verify.proofs.methods import Use, custom_step, sympy_identity, z3_step

DOC5 = "docs/derivations_eps_zero.md#5-thm-45-and-borel-cantelli"
T45 = "Thm 4.5"

# ---- section 5: Thm 4.5
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


def series_grid() -> list[tuple[int, int]]:
    """Every (D, L) the toolkit runs the bad-event series at: Thm 4.5's ``SERIES_GRID`` (every
    level: quick, default, full) and Cor 4.6's (D, L)."""
    from verify.statements.cor_4_6 import D_MODEL, N_LAYERS
    from verify.statements.thm_4_5 import SERIES_GRID

    return sorted({(a[0], a[1]) for level in SERIES_GRID for a in level} | {(D_MODEL, N_LAYERS)})


@lru_cache(maxsize=64)
def _limit_at_infinity(expr: sp.Expr, n: sp.Symbol) -> sp.Expr:
    """sympy's lim_{n -> oo} expr, memoised on the expression: series_order and both sides of
    series_convergence ask the same limits (a pure function of the expression)."""
    return sp.limit(expr, n, sp.oo)


def _order(shift: sp.Expr = sp.S.Zero) -> list[tuple]:
    from verify.theory.zero_sensitivity import bad_event_series_term

    out = []
    for dd, ll in series_grid():
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
    "a_N ~ N^p (log N)^{K-1}, p = e + 1 + K - zeta(D-1)/2, at every (D, L) the toolkit runs the"
    " series at (Thm 4.5's SERIES_GRID, every level, and Cor 4.6's: D in {16, 32, 64, 128},"
    " L <= 3)",
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
    "sum_N N^p (log N)^{K-1} < inf at the p of every (D, L) the toolkit runs the series at"
    " (so sum P[E_N] < inf: Borel-Cantelli)",
    "the series with p + 1 converges",
    _series_conv,
    _series_conv_twin,
    facts=("thm_4_5.series_order", "thm_4_5.summable_iff", "axiom.borel_cantelli"),
)

# ---- the reading used (the margin explicit): Cor 4.3's threshold, its flip bound on the good
# event and Cor 4.6's label step, chained by uses= (each fact's conclusion at its instance)
_A, _n, _z, _xi = sp.symbols("A n zeta xi", real=True)  # log10(||w|| C_infl/(2 xi)), log10 N
_N, _w, _C, _t, _b1, _b2 = sp.symbols("N w C t beta beta'", real=True)
_T1, _T2, _fb, _la, _lb, _q = sp.symbols("T1 T2 fb lf l2xi q", real=True)
_s, _K0, _mN = sp.symbols("s K_0 m_N", real=True)
_FLIP_ON_GOOD = _w * _C * _t**2 / _N
_FLIP_HYPS, _FLIP_USES, _PER_FLIP_AT = per_flip_link(_N, _w, _C, _b1, _b2, _T1 - _T2)
z3_step(
    "thm_4_5.margin_reading",
    T45,
    "Reading used (the margin explicit)",
    DOC5,
    [
        # N > N_0 (cor_4_3.threshold's domain, in log10)
        _z > 0,
        _z < 1,
        _n >= 0,
        _n > sp.Max(0, _A / (1 - _z)),
        _xi > 0,
        # off E_N: the string x and its neighbour x^n have blowups beta, beta' <= t = N^{zeta/2},
        # and the flip moves T by at most the per-flip bound (cor_4_3.per_flip, from Lemma
        # 2.9's |dT| <= ||w|| I, I <= bt_L beta beta'/S)
        *off_event_domain(_N, _w, _C, _t, _b1, _b2),
        *_FLIP_HYPS,
        # fb = ||w|| C_infl N^{zeta-1} = ||w|| C_infl t^2/N (cor_4_3.power), its log10 and that
        # of 2 xi differ by A + (zeta - 1) log10 N (cor_4_3.log_form)
        _fb > 0,
        sp.Eq(_fb, _FLIP_ON_GOOD),
        sp.Eq(_la - _lb, _A + (_z - 1) * _n),
        # T recognises f with margin xi at x and at x^n
        sp.Abs(_T1) >= _xi,
        sp.Abs(_T2) >= _xi,
        # counting: (T1, T2) is the pair of F_N (a string, a neighbour) with the least
        # T(x) T(x^n); when it keeps its sign, all m_N strings of F_N are zero-sensitive
        sp.Eq(_s, _T1 * _T2),
        sp.Max(-_s, _K0 - _mN) >= 0,
        # the facts, in order
        _A + (_z - 1) * _n < 0,
        sp.Eq(_la - _lb, _q * (_fb - 2 * _xi)),
        _q > 0,
        sp.Abs(_T1 - _T2) <= _FLIP_ON_GOOD,
        _T1 * _T2 > 0,
    ],
    sp.Ge(_K0, _mN),
    sp.Ge(_K0, 2 * _mN),
    facts=("cor_4_3.power", "cor_4_3.log_form"),
    uses=(
        Use("cor_4_3.threshold", {"A": _A, "n": _n, "zeta": _z}, _A + (_z - 1) * _n < 0),
        *(
            Use(
                "axiom.log_monotone",
                {"a": _fb, "b": 2 * _xi, "la": _la, "lb": _lb, "q": _q},
                hyp,
            )
            for hyp in (sp.Eq(_la - _lb, _q * (_fb - 2 * _xi)), _q > 0)
        ),
        *_FLIP_USES,
        Use(
            "cor_4_3.good_event",
            {**_PER_FLIP_AT, "t": _t},
            sp.Abs(_T1 - _T2) <= _FLIP_ON_GOOD,
        ),
        Use("cor_4_6.label_kept", {"T1": _T1, "T2": _T2, "xi": _xi}, _T1 * _T2 > 0),
    ),
    note="off E_N, for N > N_0 and f recognised with margin xi, every string of F_N is"
    " zero-sensitive: K_0(f) >= m_N = ceil(N^e) (then cor_4_6.family_zero_sensitive: >= N^e)",
)
