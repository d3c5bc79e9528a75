"""The chain to the code, proved symbolically: the coded function of ``verify.theory`` (the
table :data:`verify.proofs.chain.CODE`) evaluated on sympy symbols
(:func:`verify.proofs.symbolic.symbolic`) equals the composition of the derivation's steps for
every value of its domain, not at sampled points. A branch of the code is a case whose domain is
written so that sympy's assumptions decide the code's condition (``t = (1 + u)^K`` with u > 0
for t > 1; ``zeta = 1 - v`` with v > 0 for zeta < 1; ``N = 10^(n_0 + v)`` for log10 N > n_0).
The compositions are the step expressions the obligations prove (:mod:`verify.proofs.corollaries`,
:mod:`verify.proofs.eps_zero`, ...), substituted, never the coded factor functions."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import sympy as sp

from verify.proofs import corollaries as co
from verify.proofs.blowup import COR_3_3, M_BETA
from verify.proofs.coverage_common import DOC9, S6
from verify.proofs.coverage_random import B1, B2, BIASED
from verify.proofs.eps_zero import C_SB, MARKOV
from verify.proofs.hahn_rofin import t_star
from verify.proofs.symbolic import Call, SymCase, code_on_symbols, sub, symbolic_step

__all__: list[str] = []

DOC0 = "docs/derivations_eps_zero.md"
DOC_HR5 = "docs/derivations_hahn_rofin.md#cor-5"
DOC_HR6 = "docs/derivations_hahn_rofin.md#thm-6"


def _pos(*names: str) -> tuple[sp.Symbol, ...]:
    return tuple(sp.Symbol(n, positive=True) for n in names)


def _posint(*names: str) -> tuple[sp.Symbol, ...]:
    return tuple(sp.Symbol(n, positive=True, integer=True) for n in names)


D, L, K, S, N, E = _posint("D", "L", "K", "S", "N", "E")
a, u, v, w, c, b1, b2, xi, sigma, t, delta, p, s, m, lg = _pos(
    "a", "u", "v", "w", "C", "beta", "beta'", "xi", "sigma", "t", "delta", "p", "s", "M", "lg"
)
u0 = sp.Symbol("u", nonnegative=True)
kk = sp.Symbol("k", nonnegative=True, integer=True)
eps = sp.Symbol("epsilon", positive=True)


def _c_sb() -> sp.Expr:
    return sub(C_SB, D=D, a=a)


def _one(dom: dict[str, str], coded, composed) -> Iterator[SymCase]:
    yield dom, coded, composed


# ----------------------------------------------------------------------------- eps = 0 tails
def _z_tail(x: sp.Expr) -> sp.Expr:
    """small_ball.z_tail composed: P[z > x] <= min(1, C_SB x^{-(D-1)})."""
    return sp.Min(1, _c_sb() * x ** (1 - D))


def _union_cases() -> Iterator[SymCase]:
    ob = "lemma_4_2.chain_union"
    # t > 1: t = (1 + u)^K, the threshold of each tau is t^{1/K} - 1 = u (lemma_4_2.union)
    yield (
        {"t": "(1 + u)^K, u > 0"},
        Call(ob, (1 + u) ** K, D, a, K, S),
        lambda: sp.Min(1, K * S * _z_tail(u)),
    )
    # t <= 1: beta >= 1 always, the bound is 1 (axiom.probability_range); the branch is a
    # constant: at t = 1 and t = 2^-K (sympy decides (1 + u)^-1 - 1 <= 0 only at numbers)
    for tt in (sp.S.One, sp.S(2) ** -K):
        yield {"t": str(tt)}, Call(ob, tt, D, a, K, S), lambda: sp.S.One


def _slice_composed(dl: sp.Expr, d: sp.Expr, k: sp.Expr, hw: sp.Expr, s_: sp.Expr) -> sp.Expr:
    """lemma_4_4's slice bound: S V_k (D delta)^{k/2} / sqrt(1 - k/D) / (2w)^k, V_k the unit
    k-ball's volume (axiom.ball_volume), det = 1 - k/D (lemma_4_4.gram_det), at most 1."""
    vk = sp.pi ** (k / 2) / sp.gamma(k / 2 + 1)
    return sp.Min(1, s_ * vk * sp.sqrt(d * dl) ** k / sp.sqrt(1 - k / d) / (2 * hw) ** k)


def _sequential_cases() -> Iterator[SymCase]:
    """Q(K, (D - 1)(log t - K u0)), u0 = log(1 + (S C)^{1/(D-1)}) (lemma_4_2.sequential_shift,
    lemma_4_2.gamma_tail), with C the coded small_ball_constant on symbols (equal to C_SB:
    small_ball.chain_constant); log t > K u0 is t = e^{K u0 + v/(D-1)}, v > 0, else the bound
    is 1."""
    ob = "lemma_4_2.chain_sequential"
    d = E + 1
    u0_ = sp.log(1 + (S * code_on_symbols("small_ball.chain_constant")(d, a)) ** (1 / sp.S(E)))
    yield (
        {"t": "exp(K u0 + v/(D-1)), v > 0", "D": "1 + E"},
        Call(ob, sp.exp(K * u0_ + v / E), d, a, K, S),
        lambda: sp.uppergamma(K, E * (sp.log(sp.exp(K * u0_ + v / E)) - K * u0_)) / sp.gamma(K),
    )
    yield (
        {"t": "exp(K u0 - u), u >= 0", "D": "1 + E"},
        Call(ob, sp.exp(K * u0_ - u0), d, a, K, S),
        lambda: sp.S.One,
    )


_DOM_DA = "D >= 1, a > 0"
_TABLE = [
    ("small_ball.chain_constant", "Small-ball bound",
     "P[var(d) <= delta] <= C_SB delta^{(D-1)/2}", DOC0 + "#1-small-ball-bound-sb",
     lambda: _one({"D": "D", "a": "a"},
                  Call("small_ball.chain_constant", D, a), _c_sb),
     "integer D >= 1 and a > 0", ("small_ball.compose",)),
    ("small_ball.chain_z_tail", "Small-ball bound",
     "At eps = 0: P[z > s] <= C_SB s^{-(D-1)}", DOC0 + "#1-small-ball-bound-sb",
     lambda: _one({"s": "s"}, Call("small_ball.chain_z_tail", s, D, a),
                  lambda: _z_tail(s)),
     "s > 0, integer D >= 1, a > 0", ("small_ball.z_tail",)),
    ("small_ball.chain_variance_bound", "Small-ball bound",
     "P[var(d) <= delta] <= C_SB delta^{(D-1)/2}", DOC0 + "#1-small-ball-bound-sb",
     lambda: _one({"delta": "delta"},
                  Call("small_ball.chain_variance_bound", delta, D, a),
                  lambda: sp.Min(1, _c_sb() * delta ** ((D - 1) / sp.S(2)))),
     "delta > 0, integer D >= 1, a > 0", ("small_ball.compose", "axiom.probability_range")),
    ("lemma_4_2.chain_union", "Lemma 4.2", "Blowup tail, union bound", DOC0 + "#2-lemma-42",
     _union_cases, "t > 1 (and the constant branch at t = 1, 2^-K), integer D, K, S >= 1, a > 0",
     ("lemma_4_2.union", "small_ball.chain_z_tail")),
    ("lemma_4_2.chain_sequential", "Lemma 4.2", "Blowup tail, sequential conditioning",
     DOC0 + "#2-lemma-42", _sequential_cases,
     "t > 0 (both sides of log t = K u0), integer D >= 2, K, S >= 1, a > 0",
     ("lemma_4_2.sequential_shift", "lemma_4_2.sequential_exp", "lemma_4_2.sequential_power",
      "lemma_4_2.gamma_tail", "small_ball.chain_constant")),
    ("lemma_4_4.chain_slice", "Lemma 4.4", "Certified slices: explicit slice bound",
     DOC0 + "#4-lemma-44",
     lambda: _one({"k": "k", "D": "D"},
                  Call("lemma_4_4.chain_slice", delta, D, kk + 1, w, S),
                  lambda: _slice_composed(delta, D, kk + 1, w, S)),
     "delta, w > 0, integer D, k, S >= 1", ("lemma_4_4.gram_det", "lemma_4_4.slice_quadratic")),
    ("lemma_4_2.chain_markov_factor", "Lemma 4.2", "Neighbourhood", DOC0 + "#2-lemma-42",
     lambda: _one({"N": "N", "k": "k"},
                  Call("lemma_4_2.chain_markov_factor", N, kk),
                  lambda: sub(MARKOV, N=N, k=kk)),
     "integer N >= 1, integer k >= 0", ("lemma_4_2.neighbourhood",)),
    ("thm_4_5.chain_exponent", "Thm 4.5", "Where it has content",
     DOC0 + "#5-thm-45-and-borel-cantelli",
     lambda: _one({"D": "D", "L": "L"},
                  Call("thm_4_5.chain_exponent", D, L),
                  lambda: (D - 1) / (2 * L) - 5),
     "integer D, L >= 1", ()),
    ("thm_4_5.chain_exponent_exact", "Thm 4.5", "Where it has content (exact, for the searches)",
     DOC0 + "#5-thm-45-and-borel-cantelli",
     lambda: _one({"D": "D", "L": "L"},
                  Call("thm_4_5.chain_exponent_exact", D, L),
                  lambda: (D - 1) / (2 * L) - 5),
     "integer D, L >= 1", ()),
    ("thm_4_5.chain_theorem_bound", "Thm 4.5", "Where it has content",
     DOC0 + "#5-thm-45-and-borel-cantelli",
     lambda: _one({"D": "D", "L": "L", "N": "N"},
                  Call("thm_4_5.chain_theorem_bound", D, L, N),
                  lambda: N ** ((D - 1) / (2 * L) - 5)),
     "integer D, L, N >= 1", ("thm_4_5.chain_exponent",)),
]  # fmt: skip


# ----------------------------------------------------------------------------- Cor 4.3, 4.6
def _threshold_cases() -> Iterator[SymCase]:
    lg_ = sp.Symbol("lg", real=True)
    yield (
        {"zeta": "1 - v, v > 0"},
        Call("cor_4_3.chain_threshold", lg_, xi, 1 - v),
        lambda: sub(co.THRESHOLD, A=lg_ - sp.log(2 * xi) / sp.log(10), zeta=1 - v),
    )


def _cor_4_6_cases() -> Iterator[SymCase]:
    ob = "cor_4_6.chain_bound"
    n0 = sp.Symbol("n_0", real=True)
    a_n = sp.Symbol("a_N", positive=True)
    yield (  # past N_0: cor_4_6.bound
        {"N": "10^(n_0 + v), v > 0"},
        Call(ob, 10 ** (n0 + v), n0, a_n),
        lambda: sub(co.COR_4_6, a_N=a_n),
    )
    yield (  # up to N_0: a probability (axiom.probability_range)
        {"N": "10^(n_0 - u), u >= 0"},
        Call(ob, 10 ** (n0 - u0), n0, a_n),
        lambda: sp.S.One,
    )


def _flip() -> sp.Expr:
    return sub(co.FLIP, w=w, C=c, beta=b1, **{"beta'": b2}, N=N)


_TABLE += [
    ("lemma_2_9.chain_bound", "Lemma 2.9", "Step 6: the constant", "docs/derivations.md#lemma-29",
     lambda: (({"at_readout": str(r)},
               Call("lemma_2_9.chain_bound", c, b1, b2, N, r),
               lambda r=r: c * b1 * b2 * (sp.S.One / N + r)) for r in (0, 1)),
     "C, beta, beta' > 0, integer N >= 1, the flipped bit at the readout or not",
     ("lemma_2_9.constant_off_readout", "lemma_2_9.constant_at_readout")),
    ("lemma_3_1.chain_bound", "Lemma 3.1", "Step 5: the constant", "docs/derivations.md#lemma-31",
     lambda: _one({"C_Lip": "C", "dtheta": "delta"},
                  Call("lemma_3_1.chain_bound", c, delta),
                  lambda: c * delta),
     "C_Lip, ||dtheta|| > 0", ("lemma_3_1.group_combine", "lemma_3_1.chain_c_lip")),
    ("cor_4_3.chain_good_event", "Cor 4.3", "On the good event", co.DOC3,
     lambda: _one({"N": "N", "zeta": "s"},
                  Call("cor_4_3.chain_good_event", N, s),
                  lambda: sub(co.GOOD_EVENT, N=N, zeta=s)),
     "integer N >= 1, zeta > 0", ("cor_4_3.good_event",)),
    ("cor_4_3.chain_flip_bound", "Cor 4.3", "Per flip", co.DOC3,
     lambda: _one({"N": "N"},
                  Call("cor_4_3.chain_flip_bound", w, c, b1, b2, N),
                  _flip),
     "||w||, C, beta, beta' > 0, integer N >= 1", ("cor_4_3.per_flip", "lemma_2_9.chain_bound")),
    ("cor_4_3.chain_bound", "Cor 4.3", "On the good event", co.DOC3,
     lambda: _one({"N": "N", "zeta": "s"},
                  Call("cor_4_3.chain_bound", w, c, N, s),
                  lambda: sub(co.COR_4_3, w=w, C=c, N=N, zeta=s)),
     "||w||, C, zeta > 0, integer N >= 1", ("cor_4_3.good_event", "cor_4_3.power")),
    ("cor_4_3.chain_threshold", "Cor 4.3", "Threshold: N_0", co.DOC3, _threshold_cases,
     "real log10(||w|| C_infl), xi > 0, zeta < 1", ("cor_4_3.threshold", "cor_4_3.log_form")),
    ("cor_4_6.chain_bound", "Cor 4.6", "Finite-N bound", co.DOC6, _cor_4_6_cases,
     "N > 0 on both sides of N_0, real log10 N_0, a_N > 0",
     ("cor_4_6.bound", "cor_4_3.threshold")),
]  # fmt: skip


# ----------------------------------------------------------------------------- eps > 0 exponents
def _config(n_layers: sp.Expr, final_norm: bool, ln_eps: sp.Expr) -> SimpleNamespace:
    """A configuration with symbolic L and eps: the code reads its K through ModelConfig's own
    ``n_norms`` (the property's code, run on these attributes)."""
    from verify.model import ModelConfig

    cfg = SimpleNamespace(n_layers=n_layers, final_norm=final_norm, ln_eps=ln_eps)
    cfg.n_norms = ModelConfig.n_norms.fget(cfg)
    return cfg


def _k_composed(final_norm: bool) -> sp.Expr:
    """K of the derivation: two norms per layer, plus the final norm (pre-LN)."""
    return 2 * L + int(final_norm)


def _config_cases(ob_id: str, composed) -> Iterator[SymCase]:
    for final in (False, True):
        yield (
            {"L": "L", "final_norm": str(final), "eps": "epsilon"},
            lambda final=final: code_on_symbols(ob_id)(_config(L, final, eps)),
            lambda final=final: composed(final),
        )


def _tau() -> sp.Expr:
    return 1 + eps ** sp.Rational(-1, 2)  # lemma_3_2.z_max: z <= eps^{-1/2}


_TABLE += [
    ("lemma_3_2.chain_bound", "Lemma 3.2", "Derivation: K factors tau^k <= 1 + eps^{-1/2}",
     "docs/derivations.md#lemma-32",
     lambda: _config_cases("lemma_3_2.chain_bound", lambda f: _tau() ** _k_composed(f)),
     "integer L >= 1, eps > 0, with or without the final norm",
     ("lemma_3_2.z_max", "lemma_3_2.product", "lemma_3_2.product_induction")),
    ("lemma_3_2.chain_per_layer_bound", "Lemma 3.2", "Convention note: one factor per layer",
     "docs/derivations.md#lemma-32",
     lambda: _config_cases("lemma_3_2.chain_per_layer_bound", lambda f: _tau() ** L),
     "integer L >= 1, eps > 0",
     ("lemma_3_2.per_layer_factor", "lemma_3_2.z_max", "lemma_3_2.product_induction")),
    ("cor_3_3.chain_exponent", "Cor 3.3", "Derivation", "docs/derivations.md#cor-33",
     lambda: _config_cases(
         "cor_3_3.chain_exponent",
         lambda f: sp.Poly(COR_3_3, M_BETA).degree() * _k_composed(f)),
     "integer L >= 1, with or without the final norm",
     ("cor_3_3.compose", "lemma_3_2.product_induction")),
]  # fmt: skip


# ----------------------------------------------------------------------------- H&R
def _chi2_cdf(x: sp.Expr, dof: sp.Expr) -> sp.Expr:
    """F_{chi^2_k}(x) = P(k/2, x/2), the regularised lower gamma (axiom.anderson's form)."""
    return sp.lowergamma(dof / 2, x / 2) / sp.gamma(dof / 2)


def _noise_variance() -> sp.Expr:
    return _chi2_cdf(t * D / sigma**2, D - 1)


_TABLE += [
    ("hr_cor_5.chain_edge_bound", "H&R Cor 5", "Derivation, 3: edge form", DOC_HR5,
     lambda: _one({"N": "N"},
                  Call("hr_cor_5.chain_edge_bound", w, c, s, N),
                  lambda: w * c * s / N),
     "||w||, C, sum of beta products > 0, integer N >= 1",
     ("axiom.cauchy_schwarz", "lemma_2_9.constant_off_readout")),
    ("hr_cor_5.chain_as_bound", "H&R Cor 5", "Derivation, 5: omega_f <= c_r", DOC_HR5,
     lambda: _one({"xi": "xi"},
                  Call("hr_cor_5.chain_as_bound", w, c, m, xi),
                  lambda: w * c * m / (2 * xi)),
     "||w||, C, E[beta^2], xi > 0", ("hr_cor_5.omega_le_cr", "hr_cor_5.average")),
    ("hr_cor_5.chain_log10_as_bound", "H&R Cor 5", "Derivation, 5: omega_f <= c_r", DOC_HR5,
     lambda: _one({"xi": "xi"},
                  Call("hr_cor_5.chain_log10_as_bound", w, lg, m, xi),
                  lambda: sp.log(w * m / (2 * xi)) / sp.log(10) + lg),
     "||w||, log10 C, E[beta^2], xi > 0",
     ("hr_cor_5.omega_le_cr", "hr_cor_5.chain_as_bound", "axiom.log_monotone")),
    ("hr_cor_5.chain_required_blowup", "H&R Cor 5", "Derivation, 6: together", DOC_HR5,
     lambda: _one({"xi": "xi"},
                  Call("hr_cor_5.chain_required_blowup", s, xi, w, c),
                  lambda: sub(co.REQUIRED_BLOWUP, xi=xi, as_N=s, wC=w * c)),
     "as_N, xi, ||w||, C > 0", ("hr_cor_5.required_blowup",)),
    ("hr_thm_6.chain_blowup_cap", "H&R Thm 6",
     "Derivation: beta reaches the cap only if some (k, n) has var <= t", DOC_HR6,
     lambda: (({"eps": e}, Call("hr_thm_6.chain_blowup_cap", t, ev, K),
               lambda ev=ev: (1 + (t + ev) ** sp.Rational(-1, 2)) ** K)
              for e, ev in (("epsilon", eps), ("0", sp.S.Zero))),
     "t > 0, eps > 0 or eps = 0, integer K >= 1", ("hr_thm_6.cap_threshold",)),
    ("hr_thm_6.chain_variance", "H&R Thm 6",
     "Derivation: a union bound over K norms and S positions", DOC_HR6,
     lambda: _one({"t": "t"},
                  Call("hr_thm_6.chain_variance", D, sigma, t),
                  _noise_variance),
     "integer D >= 1, sigma, t > 0", ("axiom.anderson",)),
    ("hr_thm_6.chain_cap_probability", "H&R Thm 6",
     "Derivation: a union bound over K norms and S positions", DOC_HR6,
     lambda: _one({"t": "t"},
                  Call("hr_thm_6.chain_cap_probability", D, K, S, sigma, t),
                  lambda: sp.Min(1, K * S * _noise_variance())),
     "integer D, K, S >= 1, sigma, t > 0",
     ("hr_thm_6.union", "hr_thm_6.cap_threshold", "hr_thm_6.chain_variance")),
    ("hr_thm_6.chain_cap_growth", "H&R Thm 6", "Growth in S", DOC_HR6,
     lambda: _one({"D": "1 + E, E >= 1"},
                  Call("hr_thm_6.chain_cap_growth", E + 1, K, S, sigma, p),
                  lambda: (1 + sub(t_star, D=E + 1, sigma=sigma, p=p, K=K, S=S)
                           ** sp.Rational(-1, 2)) ** K),
     "integer D >= 2, K, S >= 1, sigma, p > 0", ("hr_thm_6.cap_growth",)),
]  # fmt: skip


# ----------------------------------------------------------------------------- Sec 6
_TABLE += [
    ("sec_6_random_functions.chain_radius", S6, "Rate of the limit", DOC9,
     lambda: _one({"N": "N"},
                  Call("sec_6_random_functions.chain_radius", N),
                  lambda: (1 - sp.exp(-1)) * sub(B1 + B2, N=N)),
     "integer N >= 1", ("sec_6_random_functions.b2_term", "axiom.chen_stein")),
    ("sec_6_random_functions.chain_biased_mean", S6, "Biased null", DOC9,
     lambda: _one({"N": "N", "p": "p"},
                  Call("sec_6_random_functions.chain_biased_mean", N, p),
                  lambda: sub(BIASED, N=N, p=p)),
     "integer N >= 1, p > 0", ("sec_6_random_functions.biased_mean",)),
]  # fmt: skip

for _id, _st, _step, _doc, _cases, _dom, _facts in _TABLE:
    symbolic_step(_id, _st, _step, _doc, _cases, _dom, facts=_facts)
