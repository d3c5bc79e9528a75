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
from typing import Any

import numpy as np
import sympy as sp
from flint import arb

from verify.proofs import corollaries as co
from verify.proofs.chain import (
    CODE,
    N_POINTS,
    Case,
    _cfg_point,
    _points_step,
    ball,
    code,
    models,
)
from verify.proofs.compose import ev, iv, sqrt_iv
from verify.proofs.core import Verdict
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


def max_iv(a: Iv, bt: Iv) -> Iv:
    """C_infl = max(a_L, bt_L): the bound at the flipped position and S times the bound
    elsewhere (lemma_2_9.constant_off_readout, constant_at_readout)."""
    return a.max(bt)


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
