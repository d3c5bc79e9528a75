"""Hahn & Rofin's Cor 5 (the averaging step with omega_f) and Thm 6 (the chi^2 step) as
obligations (docs/derivations_hahn_rofin.md)."""

from __future__ import annotations

import itertools

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.exp_substitution import exp_step
from verify.proofs.methods import Use, custom_step, sympy_identity, z3_step

__all__ = ["t_star"]

DOC5 = "docs/derivations_hahn_rofin.md#cor-5"
DOC6 = "docs/derivations_hahn_rofin.md#thm-6"
C5, T6 = "H&R Cor 5", "H&R Thm 6"

T, T2, xi = sp.symbols("T T' xi", real=True)
z3_step(
    "hr_cor_5.margin",
    C5,
    "Derivation, 2: margin",
    DOC5,
    [xi > 0, T >= xi, T2 <= -xi],
    sp.Ge(sp.Abs(T - T2), 2 * xi),
    sp.Ge(sp.Abs(T - T2), 3 * xi),
)
b1, b2 = sp.symbols("beta beta'", real=True)
z3_step(
    "hr_cor_5.am_gm",
    C5,
    "Derivation, 5: beta beta' <= (beta^2 + beta'^2)/2",
    DOC5,
    [],
    sp.Le(b1 * b2, (b1**2 + b2**2) / 2),
    sp.Le(b1 * b2, (b1**2 + b2**2) / 4),
)

NB = 3  # the exhaustive check runs over every f on {0,1}^3 and both readout positions


def _edge_sums(f: tuple[int, ...], readout: int, drop_readout_term: bool = False):
    """(sum over sensitive ordered edges of beta(x^n)^2 w_n, the same with beta(x)^2,
    sum_x beta(x)^2 omega_f(x)) with symbolic beta_x; readout r in 1..N+1 (N+1: eos)."""
    # each sum is sum_x c_x beta_x^2: collect the rational c_x, then build the sympy sum once
    # (the same canonical Add as adding the terms one by one, without re-flattening each time)
    beta = sp.symbols(f"b0:{2**NB}", positive=True)
    flip, here, om = ([sp.Integer(0)] * 2**NB for _ in range(3))
    for x in range(2**NB):
        sens = [n for n in range(1, NB + 1) if f[x] != f[x ^ (1 << (n - 1))]]
        for n in sens:
            wn = sp.Rational(1, NB) + (1 if n == readout else 0)
            flip[x ^ (1 << (n - 1))] += wn
            here[x] += wn
        om[x] += sp.Rational(len(sens), NB) + (0 if drop_readout_term else int(readout in sens))
    return tuple(
        sp.Add(*(c * b**2 for c, b in zip(cs, beta, strict=True))) for cs in (flip, here, om)
    )


def _edges() -> Verdict:
    for f in itertools.product((0, 1), repeat=2**NB):
        for r in (NB, NB + 1):
            a, b, c = _edge_sums(f, r)
            if sp.expand(a - b) != 0 or sp.expand(b - c) != 0:
                return Verdict("failed", f"f = {f}, r = {r}")
    return Verdict("proved", f"exhaustive: all {2**2**NB} f on N = {NB} bits, r = N, N + 1")


def _edges_twin() -> Verdict:
    for f in itertools.product((0, 1), repeat=2**NB):
        _, b, c = _edge_sums(f, NB, drop_readout_term=True)
        if sp.expand(b - c) != 0:
            return Verdict(
                "refuted",
                "the omega_f without [r in S_f(x)] differs",
                {"f": "".join(map(str, f)), "r": str(NB)},
            )
    return Verdict("not refuted")


custom_step(
    "hr_cor_5.edge_symmetry",
    C5,
    "Derivation, 5: the involution (x, n) -> (x^n, n) and omega_f",
    DOC5,
    "sympy",
    "sum_{E_f} beta(x^n)^2 w_n = sum_{E_f} beta(x)^2 w_n = sum_x beta(x)^2 omega_f(x),"
    " w_n = 1/N + delta_{r,n}, omega_f = |S_f(x)|/N + [r in S_f(x)] (symbolic beta; every f on"
    " N = 3 bits only: the code's omega_f runs at every N, the general case is the involution's"
    " reindexing of the finite sum, not checked beyond N = 3)",
    "omega_f without the readout term [r in S_f(x)]",
    _edges,
    _edges_twin,
)
ns, nn, ind, cr = sp.symbols("s N i c_r", real=True)
z3_step(
    "hr_cor_5.omega_le_cr",
    C5,
    "Derivation, 5: omega_f <= c_r",
    DOC5,
    [nn >= 1, ns >= 0, ns <= nn, ind >= 0, ind <= cr - 1, cr >= 1],
    sp.Le(ns / nn + ind, cr),
    sp.Le(ns / nn + ind, cr / 2),
)
A, M, Lsum, wn, C, B = sp.symbols("as_N M L w C B", real=True)
z3_step(
    "hr_cor_5.average",
    C5,
    "Derivation, 6: together",
    DOC5,
    [
        M > 0,
        xi > 0,
        A >= 0,
        wn >= 0,
        C >= 0,
        B >= 0,
        2 * xi * A * M <= Lsum,
        Lsum <= wn * C * M * B,
    ],
    sp.Le(2 * xi * A, wn * C * B),
    sp.Le(2 * xi * A, wn * C * B / 2),
    facts=(
        "hr_cor_5.margin",
        "hr_cor_5.am_gm",
        "hr_cor_5.edge_symmetry",
        "axiom.cauchy_schwarz",
        "lemma_2_9.constant_off_readout",
        "lemma_2_9.constant_at_readout",
    ),
    note="M = 2^N, L the sum over sensitive edges, B = E_x[beta^2 omega_f]",
)

# ---- Thm 6
tt = sp.symbols("t", real=True)
exp_step(
    "hr_thm_6.chi2_integrand",
    T6,
    "Growth in S: F_{chi^2_k}(u) <= (u/2)^{k/2} / Gamma(k/2 + 1)",
    DOC6,
    [tt >= 0],
    sp.Le(sp.exp(-tt), 1),
    sp.Le(sp.exp(-tt), sp.Rational(1, 2)),
    {sp.Symbol("E", real=True): (tt, 1)},
    facts=("axiom.integral_monotone",),
    note="the integrand t^{s-1} e^{-t} <= t^{s-1} of gamma(s, x), every t in [0, x], x = u/2",
)
sp_, xp = sp.symbols("s x", positive=True)
sympy_identity(
    "hr_thm_6.chi2_power",
    T6,
    "Growth in S: F_{chi^2_k}(u) <= (u/2)^{k/2} / Gamma(k/2 + 1)",
    DOC6,
    sp.integrate(tt ** (sp_ - 1), (tt, 0, xp), conds="none") / sp.gamma(sp_),
    xp**sp_ / sp.gamma(sp_ + 1),
    xp**sp_ / sp.gamma(sp_),
    facts=("hr_thm_6.chi2_integrand",),
)
P, Kk, S, F = sp.symbols("P K S F", real=True)
U, mev, fmx = sp.symbols("U m F_max", real=True)
z3_step(
    "hr_thm_6.union",
    T6,
    "Derivation: a union bound over K norms and S positions",
    DOC6,
    [Kk >= 1, S >= 1, F >= 0, F <= 1, sp.Eq(mev, Kk * S), P <= U, U <= mev * fmx, fmx <= F],
    sp.Le(P, Kk * S * F),
    sp.Le(P, Kk * S * F / 2),
    facts=("small_ball.variance_projection",),
    uses=(
        Use("axiom.union_bound", {"pu": P, "s": U}, P <= U),
        Use("axiom.anderson", {"pv": fmx, "p0": F}, fmx <= F),
    ),
    note="P <= U = the sum over the m = K S events (union bound); each event's probability is at"
    " most F_max, the largest, and F_max <= F, the central chi^2 CDF (Anderson)",
)
var, eps = sp.symbols("var epsilon", real=True)
z3_step(
    "hr_thm_6.cap_threshold",
    T6,
    "Derivation: beta reaches the cap only if some (k, n) has var <= t",
    DOC6,
    [tt >= 0, eps >= 0, tt + eps > 0, var > tt],
    sp.Lt(1 + (var + eps) ** sp.Rational(-1, 2), 1 + (tt + eps) ** sp.Rational(-1, 2)),
    sp.Lt(1 + (var + eps) ** sp.Rational(-1, 2), (1 + (tt + eps) ** sp.Rational(-1, 2)) / 2),
    facts=("hr_cor_5.required_blowup",),
)
Dp, sg, pr, Kp, Sp = sp.symbols("D sigma p K S", positive=True)
t_star = (2 * sg**2 / Dp) * (pr * sp.gamma((Dp + 1) / 2) / (Kp * Sp)) ** (2 / (Dp - 1))
sympy_identity(
    "hr_thm_6.cap_growth",
    T6,
    "Growth in S",
    DOC6,
    sp.powsimp(sp.powdenest(t_star ** sp.Rational(-1, 2), force=True), force=True),
    sp.sqrt(Dp / (2 * sg**2)) * (Kp * Sp / (pr * sp.gamma((Dp + 1) / 2))) ** (1 / (Dp - 1)),
    sp.sqrt(Dp / (2 * sg**2)) * (Kp * Sp / (pr * sp.gamma((Dp + 1) / 2))) ** (2 / (Dp - 1)),
    facts=("hr_thm_6.chi2_power", "hr_thm_6.union"),
)
