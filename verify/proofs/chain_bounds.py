"""The chain to the code for the bounds issue 26 named in ``verify.theory`` (the table of coded
functions is :data:`verify.proofs.chain.CODE`): Cor 3.3's exponent 2K, Lemma 3.1's C_Lip
||dtheta||, Lemma 3.2 per layer, Lemma 4.2's Markov factor, Cor 4.3's bounds and threshold N_0,
Cor 4.6's finite-N bound, Thm 4.5's N^e and min(1, a_N), the trivial bounds and the [0, 1] check
of probabilities. Each composition is evaluated from the step expressions the obligations prove
(:mod:`verify.proofs.corollaries`, :data:`verify.proofs.eps_zero.MARKOV`,
:data:`verify.proofs.blowup.COR_3_3`), in interval arithmetic, at >= 100 seeded points."""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp
from flint import arb

from verify.proofs import corollaries as co
from verify.proofs.blowup import COR_3_3, M_BETA
from verify.proofs.chain import (
    CODE,
    N_POINTS,
    Case,
    _cfg_point,
    _points_step,
    ball,
    code,
    configs,
    models,
    n_norms_composed,
)
from verify.proofs.chain_tails import _c_sb, _sequential, _series_composed, _tail_points, _union
from verify.proofs.compose import c_infl_composed, ev, iv, sqrt_iv
from verify.proofs.core import Verdict
from verify.proofs.eps_zero import MARKOV
from verify.proofs.interval import Iv
from verify.proofs.methods import custom_step

__all__: list[str] = []

N = N_POINTS
DOC0 = "docs/derivations_eps_zero.md"
_LN10 = arb(10).log()


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _log10(x: float) -> Iv:
    return ball(arb(x).log() / _LN10)


# ----------------------------------------------------------------------------- eps > 0
_X = sp.Symbol("X", positive=True)


def _cor_3_3_exponent(k: int) -> int:
    """The exponent of (1 + eps^{-1/2}) in cor_3_3.compose's bound with m = that^K."""
    return sp.Poly(COR_3_3.subs(M_BETA, _X**k), _X).degree()


def _exponent_cases() -> Iterator[Case]:
    for nm in configs():
        k = n_norms_composed(nm.config)
        yield (
            _cfg_point(nm),
            (lambda c=nm.config: code("cor_3_3.chain_exponent")(c)),
            (lambda k=k: iv(_cor_3_3_exponent(k))),
        )


def _lemma_3_1_cases() -> Iterator[Case]:
    r = _rng(31)
    for _ in range(N):
        c, dth = (float(v) for v in 10 ** r.uniform(-3, 9, 2))
        yield (
            {"C_Lip": c, "dtheta": dth},
            (lambda c=c, dth=dth: code("lemma_3_1.chain_bound")(c, dth)),
            (lambda c=c, dth=dth: iv(c) * iv(dth)),  # lemma_3_1.group_combine's right side
        )


def _per_layer_cases() -> Iterator[Case]:
    for nm in configs():
        cfg = nm.config

        def comp(cfg: Any = cfg) -> Iv:
            zmax = iv(cfg.ln_eps).rpow(arb(-0.5), positive=False)  # lemma_3_2.z_max
            return (iv(1) + zmax).ipow(cfg.n_layers)  # per_layer_factor, L times

        yield _cfg_point(nm), (lambda c=cfg: code("lemma_3_2.chain_per_layer_bound")(c)), comp


def _c_infl_cases() -> Iterator[Case]:
    for nm in configs():
        yield (
            _cfg_point(nm),
            (lambda nm=nm: code("lemma_2_9.chain_c_infl_value")(nm)),
            (lambda nm=nm: max_iv(*c_infl_composed(nm))),
        )


def max_iv(a: Iv, bt: Iv) -> Iv:
    """C_infl = max(a_L, bt_L): the bound at the flipped position and S times the bound
    elsewhere (lemma_2_9.constant_off_readout, constant_at_readout)."""
    return a.max(bt)


# ----------------------------------------------------------------------------- eps = 0
def _variance_cases() -> Iterator[Case]:
    r = _rng(52)
    for _ in range(N):
        d, a, delta = (
            int(r.integers(2, 41)),
            float(10 ** r.uniform(-1.3, 0.7)),
            float(10 ** r.uniform(-8, 1)),
        )

        def comp(d: int = d, a: float = a, delta: float = delta) -> Iv:
            return (_c_sb(d, a) * iv(delta).rpow(arb(d - 1) / 2, positive=True)).min(iv(1))

        yield (
            {"delta": delta, "D": d, "a": a},
            (lambda p=(delta, d, a): code("small_ball.chain_variance_bound")(*p)),
            comp,
        )


def _tail_cases() -> Iterator[Case]:
    for t, d, a, k, s in _tail_points(53):
        yield (
            {"t": t, "D": d, "a": a, "K": k, "S": s},
            (lambda p=(t, d, a, k, s): code("lemma_4_2.chain_tail")(*p)),
            (lambda p=(t, d, a, k, s): _union(*p).min(_sequential(*p))),
        )


def _markov_cases() -> Iterator[Case]:
    r = _rng(42)
    for _ in range(N):
        n = int(10 ** r.uniform(0, 4))
        k = int(r.integers(0, n + 1))
        yield (
            {"N": n, "k": k},
            (lambda n=n, k=k: code("lemma_4_2.chain_markov_factor")(n, k)),
            (lambda n=n, k=k: ev(MARKOV, N=iv(n), k=iv(k))),
        )


def _zeta_points(seed: int) -> Iterator[tuple[Any, ...]]:
    r = _rng(seed)
    for _ in range(N):
        yield (
            int(10 ** r.uniform(0, 6)),
            float(r.uniform(0.01, 0.99)),
            *(float(v) for v in 10 ** r.uniform(-2, 3, 2)),
        )


def _good_event_cases() -> Iterator[Case]:
    for n, zeta, _, _ in _zeta_points(43):
        yield (
            {"N": n, "zeta": zeta},
            (lambda n=n, z=zeta: code("cor_4_3.chain_good_event")(n, z)),
            (lambda n=n, z=zeta: ev(co.GOOD_EVENT, N=iv(n), zeta=iv(z))),
        )


def _flip_cases() -> Iterator[Case]:
    r = _rng(44)
    for _ in range(N):
        w, c, b1, b2 = (float(v) for v in 10 ** r.uniform([-1, 0, 0, 0], [1, 8, 4, 4]))
        n = int(r.integers(1, 5000))
        env = {"w": iv(w), "C": iv(c), "beta": iv(b1), "beta'": iv(b2), "N": iv(n)}
        yield (
            {"w": w, "C": c, "beta": b1, "beta'": b2, "N": n},
            (lambda a=(w, c, b1, b2, n): float(code("cor_4_3.chain_flip_bound")(*a))),
            (lambda env=env: ev(co.FLIP, **env)),
        )


def _cor_4_3_cases() -> Iterator[Case]:
    for n, zeta, w, c in _zeta_points(45):
        env = {"w": iv(w), "C": iv(c), "N": iv(n), "zeta": iv(zeta)}
        yield (
            {"w": w, "C": c, "N": n, "zeta": zeta},
            (lambda a=(w, c, n, zeta): code("cor_4_3.chain_bound")(*a)),
            (lambda env=env: ev(co.COR_4_3, **env)),
        )


def _threshold_cases() -> Iterator[Case]:
    r = _rng(46)
    for _ in range(N):
        lg, xi, zeta = (
            float(r.uniform(-3, 40)),
            float(10 ** r.uniform(-3, 0)),
            r.uniform(0.01, 0.99),
        )
        zeta = float(zeta)

        def comp(lg: float = lg, xi: float = xi, zeta: float = zeta) -> Iv:
            big_a = iv(lg) + -_log10(2 * xi)  # log10(||w|| C_infl / (2 xi))
            return ev(co.THRESHOLD, A=big_a, zeta=iv(zeta))

        yield (
            {"log10_w_c_infl": lg, "xi": xi, "zeta": zeta},
            (lambda a=(lg, xi, zeta): code("cor_4_3.chain_threshold")(*a)),
            comp,
        )


def _cor_4_6_cases() -> Iterator[Case]:
    r = _rng(47)
    for _ in range(N):
        n, thr = int(10 ** r.uniform(0, 8)), float(r.uniform(0, 8))
        bad = float(10 ** r.uniform(-12, 0.5))

        def comp(n: int = n, thr: float = thr, bad: float = bad) -> Iv:
            ln = _log10(n)  # cor_4_3.threshold: past N_0 the bound is cor_4_6.bound's
            if ln.lo > arb(thr):
                return ev(co.COR_4_6, a_N=iv(bad))
            if ln.hi <= arb(thr):
                return iv(1)  # below N_0: a probability (axiom.probability_range)
            raise ArithmeticError("log10 N straddles the threshold")

        yield (
            {"N": n, "log10_threshold": thr, "bad_event_bound": bad},
            (lambda a=(n, thr, bad): code("cor_4_6.chain_bound")(*a)),
            comp,
        )


def _theorem_bound_cases() -> Iterator[Case]:
    r = _rng(48)
    for _ in range(N):
        d, ll, n = int(r.integers(2, 65)), int(r.integers(1, 5)), int(r.integers(1, 1000))
        e = Fraction(d - 1, 2 * ll) - 5  # as thm_4_5.chain_exponent composes it
        ea = arb(e.numerator) / e.denominator
        yield (
            {"D": d, "L": ll, "N": n},
            (lambda a=(d, ll, n): code("thm_4_5.chain_theorem_bound")(*a)),
            (lambda n=n, ea=ea, pos=e >= 0: iv(n).rpow(ea, positive=pos)),
        )


_SERIES: dict[tuple[int, int, float], sp.Expr] = {}


def _a_n(d: int, ll: int, box: float) -> sp.Expr:
    """a_N of section 5 at the paper's exponent and zeta = (D - 2)/(D - 1), composed."""
    if (d, ll, box) not in _SERIES:
        e, zeta = sp.Rational(d - 1, 2 * ll) - 5, sp.Rational(d - 2, d - 1)
        term, n = _series_composed(d, ll, e, zeta, box)
        _SERIES[d, ll, box] = term.subs(n, sp.Symbol("N", positive=True))
    return _SERIES[d, ll, box]


def _bad_event_cases() -> Iterator[Case]:
    r = _rng(49)
    grid = [(16, 1), (24, 1), (32, 1), (32, 2), (40, 2)]
    for _ in range(N):
        d, ll = grid[int(r.integers(len(grid)))]
        box, n = float(r.choice([0.5, 1.0, 2.0])), int(10 ** r.uniform(3, 40))
        yield (
            {"D": d, "L": ll, "N": n, "box": box},
            (lambda a=(d, ll, n, box): code("thm_4_5.chain_bad_event_bound")(*a)),
            (lambda a=(d, ll, box), n=n: ev(_a_n(*a), N=iv(n)).min(iv(1))),
        )


# ----------------------------------------------------------------------------- trivial bounds
def _readout(params: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(g, b, w, omega): the last norm's gain and bias (the parameter lookup is shared with
    the code: it is the model's layout, not a bound) and the readout."""
    from verify.theory.trivial import last_norm_affine

    g, b = last_norm_affine(params)
    return g, b, np.asarray(params["readout.weight"], float), float(params["readout.bias"])


def _wg_norm(g: np.ndarray, w: np.ndarray) -> Iv:
    total = iv(0)
    for wi, gi in zip(w.ravel(), g.ravel(), strict=True):
        total = total + (iv(float(wi)) * iv(float(gi))).ipow(2)
    return sqrt_iv(total)


def _swing(params: Any) -> Iv:
    g, _, w, _ = _readout(params)
    return ev(co.SWING, D=iv(params.config.d_model), a=_wg_norm(g, w))


def _trivial_cases(ob_id: str, comp) -> Iterator[Case]:
    for params in models():
        yield (
            _cfg_point(params),
            (lambda p=params: code(ob_id)(p)),
            (lambda p=params: comp(p)),
        )


def _abs_bound(params: Any) -> Iv:
    g, b, w, omega = _readout(params)
    c = iv(omega)
    for wi, bi in zip(w.ravel(), b.ravel(), strict=True):
        c = c + iv(float(wi)) * iv(float(bi))
    return ev(co.ABS_BOUND, D=iv(params.config.d_model), a=_wg_norm(g, w), c=c)


def _readout_swing(params: Any) -> Iv:
    g = _readout(params)[0]
    return ev(co.READOUT_SWING, D=iv(params.config.d_model), G=iv(float(np.max(np.abs(g)))))


def _sensitivity_cases() -> Iterator[Case]:
    r = _rng(50)
    for params in models():
        n_bits = int(r.integers(1, 12))
        a_s, n_e = float(r.uniform(0, n_bits)), float(2**n_bits if r.integers(2) else 1)

        def comp(p: Any = params, a_s: float = a_s, n_e: float = n_e) -> Iv:
            return ev(co.SENSITIVITY, S=_swing(p), a_s=iv(a_s), n_e=iv(n_e))

        yield (
            {**_cfg_point(params), "as_N": a_s, "n_edges": n_e},
            (
                lambda p=params, a=a_s, e=n_e: code("trivial_bounds.chain_sensitivity_swing")(
                    p, a, e
                )
            ),
            comp,
        )


def _all_functions_cases() -> Iterator[Case]:
    for n in range(N):
        yield (
            {"N": n},
            (lambda n=n: code("trivial_bounds.chain_all_functions")(n)),
            (lambda n=n: ev(co.COUNT_LOG10, N=iv(n))),
        )


# ----------------------------------------------------------------------------- registration
_TABLE = [
    ("cor_3_3.chain_exponent", "Cor 3.3", "Derivation", "docs/derivations.md#cor-33",
     _exponent_cases, ("cor_3_3.compose", "lemma_3_2.product_induction")),
    ("lemma_3_1.chain_bound", "Lemma 3.1", "Step 5: the constant", "docs/derivations.md#lemma-31",
     _lemma_3_1_cases, ("lemma_3_1.group_combine", "lemma_3_1.chain_c_lip")),
    ("lemma_3_2.chain_per_layer_bound", "Lemma 3.2", "Convention note: one factor per layer",
     "docs/derivations.md#lemma-32", _per_layer_cases,
     ("lemma_3_2.per_layer_factor", "lemma_3_2.z_max", "lemma_3_2.product_induction")),
    ("lemma_2_9.chain_c_infl_value", "Lemma 2.9", "Step 6: the constant",
     "docs/derivations.md#lemma-29", _c_infl_cases,
     ("lemma_2_9.chain_c_infl", "lemma_2_9.constant_off_readout", "lemma_2_9.constant_at_readout")),
    ("small_ball.chain_variance_bound", "Small-ball bound",
     "P[var(d) <= delta] <= C_SB delta^{(D-1)/2}", DOC0 + "#1-small-ball-bound-sb",
     _variance_cases, ("small_ball.compose", "axiom.probability_range")),
    ("lemma_4_2.chain_tail", "Lemma 4.2", "Blowup tail, sequential conditioning",
     DOC0 + "#2-lemma-42", _tail_cases, ("lemma_4_2.chain_union", "lemma_4_2.chain_sequential")),
    ("lemma_4_2.chain_markov_factor", "Lemma 4.2", "Neighbourhood", DOC0 + "#2-lemma-42",
     _markov_cases, ("lemma_4_2.neighbourhood",)),
    ("cor_4_3.chain_good_event", "Cor 4.3", "On the good event",
     co.DOC3, _good_event_cases, ("cor_4_3.good_event",)),
    ("cor_4_3.chain_flip_bound", "Cor 4.3", "Per flip", co.DOC3, _flip_cases,
     ("cor_4_3.per_flip", "lemma_2_9.chain_bound")),
    ("cor_4_3.chain_bound", "Cor 4.3", "On the good event", co.DOC3,
     _cor_4_3_cases, ("cor_4_3.good_event", "cor_4_3.power")),
    ("cor_4_3.chain_threshold", "Cor 4.3", "Threshold: N_0", co.DOC3, _threshold_cases,
     ("cor_4_3.threshold", "cor_4_3.log_form")),
    ("cor_4_6.chain_bound", "Cor 4.6", "Finite-N bound", co.DOC6,
     _cor_4_6_cases, ("cor_4_6.bound", "cor_4_3.threshold")),
    ("thm_4_5.chain_theorem_bound", "Thm 4.5", "Where it has content",
     DOC0 + "#5-thm-45-and-borel-cantelli", _theorem_bound_cases, ("thm_4_5.chain_exponent",)),
    ("thm_4_5.chain_bad_event_bound", "Thm 4.5", "Series", DOC0 + "#5-thm-45-and-borel-cantelli",
     _bad_event_cases, ("thm_4_5.chain_series", "axiom.probability_range")),
    ("trivial_bounds.chain_output_swing", "Trivial bounds", "Output swing", co.DOC0,
     lambda: _trivial_cases("trivial_bounds.chain_output_swing", _swing),
     ("trivial_bounds.output_swing",)),
    ("trivial_bounds.chain_output_abs", "Trivial bounds", "Output swing", co.DOC0,
     lambda: _trivial_cases("trivial_bounds.chain_output_abs", _abs_bound),
     ("trivial_bounds.output_abs",)),
    ("trivial_bounds.chain_readout_swing", "Trivial bounds", "Output swing", co.DOC0,
     lambda: _trivial_cases("trivial_bounds.chain_readout_swing", _readout_swing),
     ("trivial_bounds.readout_swing",)),
    ("trivial_bounds.chain_sensitivity_swing", "Trivial bounds", "H&R Cor 5's left side",
     co.DOC0, _sensitivity_cases, ("trivial_bounds.sensitivity_swing",)),
    ("trivial_bounds.chain_all_functions", "Trivial bounds", "Counting", co.DOC0,
     _all_functions_cases, ("trivial_bounds.count_log10",)),
]  # fmt: skip
for _id, _st, _step, _doc, _cases, _facts in _TABLE:
    _points_step(_id, _st, _step, _doc, _cases, facts=_facts)


# ---- probabilities are checked where computed: the code returns p for p in [0, 1] and raises
# ProbabilityError for every other value (NaN included)
def _probability_points() -> list[float]:
    r = _rng(51)
    # the edges: the floats next to 0 and 1 on both sides, tolerances a check might allow
    edges = [math.nextafter(1.0, 2.0), math.nextafter(1.0, 0.0), 1 + 1e-12, 1 + 1e-9, 1 + 1e-6]
    edges += [math.nextafter(0.0, -1.0), math.nextafter(0.0, 1.0), -1e-12, -1e-9, -1e-6, -0.0]
    edges += [math.inf, -math.inf]
    return [0.0, 1.0, math.nan, *edges, *(float(v) for v in r.uniform(-1, 2, N))]


def _probability_check(weaken: float = 1.0) -> tuple[int, dict | None, str]:
    from verify.theory.probability import ProbabilityError

    fn = code("trivial_bounds.chain_probability")
    for i, v in enumerate(_probability_points()):
        inside = 0 <= v <= 1  # axiom.probability_range (False for NaN)
        try:
            got: float | None = weaken * fn("p", v)
        except ProbabilityError:
            got = None
        if (got is not None) != inside or (inside and got != v):
            return i + 1, {"value": v}, f"returned {got!r} for {v!r}"
    return len(_probability_points()), None, ""


def _probability_prove() -> Verdict:
    n, pt, msg = _probability_check()
    if pt is not None:
        return Verdict("failed", f"{CODE['trivial_bounds.chain_probability']}: {msg}", pt)
    return Verdict("proved", f"returns p on [0, 1], raises off it: {n} seeded values")


def _probability_twin() -> Verdict:
    _, pt, msg = _probability_check(0.5)
    if pt is None:
        return Verdict("not refuted", "the halved code passed every value")
    return Verdict("refuted", f"halved code caught: {msg}", pt)


custom_step(
    "trivial_bounds.chain_probability",
    "Trivial bounds",
    "Probabilities and fractions",
    co.DOC0,
    "chain",
    f"{CODE['trivial_bounds.chain_probability']} returns p for p in [0, 1] and raises otherwise,"
    f" at {N + 3} seeded values (0, 1, NaN included)",
    f"{CODE['trivial_bounds.chain_probability']} times 1/2",
    _probability_prove,
    _probability_twin,
    facts=("axiom.probability_range",),
    evidence="points",
)
