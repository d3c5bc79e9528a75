"""The chain to the code: for each explicit constant, the function coded in ``verify.theory``
equals what its derivation steps compose to.

:data:`CODE` is the one table of obligation -> coded function ("module:function"); every chain
obligation looks its function up there at call time (so a monkeypatched or re-pointed function
is what gets checked). Each comparison runs at >= 100 seeded points (:data:`N_POINTS`): the
composition is evaluated in rigorous interval arithmetic (:mod:`verify.proofs.compose`, arb), the
coded value (float64 or mpmath) must lie in the enclosure widened by the relative tolerance
:data:`REL_TOL` (float64 rounding of the code's own evaluation). A coded factor dropped, halved or
given another exponent moves the value out of it at some point: the obligation fails there and
names the point. Its twin is the coded function times 1/2, which must be caught the same way.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from flint import arb

from verify.proofs.compose import iv, lipschitz_composed, sqrt_iv
from verify.proofs.core import Verdict
from verify.proofs.interval import Iv
from verify.proofs.methods import custom_step

__all__ = ["CODE", "N_POINTS", "REL_TOL", "code"]

N_POINTS = 100
REL_TOL = 1e-9

# obligation id -> the coded function it checks (re-point here when the theory moves)
CODE: dict[str, str] = {
    "lemma_2_9.chain_c_infl": "verify.theory.bounds:c_infl_parts",
    "lemma_2_9.chain_bound": "verify.theory.bounds:lemma_2_9_bound",
    "lemma_3_1.chain_coefficients": "verify.theory.bounds:lipschitz_coefficients",
    "lemma_3_1.chain_c_lip": "verify.theory.bounds:c_lip",
    "lemma_3_2.chain_bound": "verify.theory.bounds:lemma_3_2_bound",
    "cor_3_3.chain_bound": "verify.theory.bounds:cor_3_3_bound",
    "cor_3_4.chain_n_star": "verify.theory.bounds:log10_n_star",
    "prop_3_5.chain_cap": "verify.theory.bounds:log10_prop_3_5",
    "small_ball.chain_constant": "verify.theory.small_ball:small_ball_constant",
    "small_ball.chain_z_tail": "verify.theory.small_ball:z_tail_bound",
    "lemma_4_2.chain_union": "verify.theory.small_ball:blowup_tail_bound_union",
    "lemma_4_2.chain_sequential": "verify.theory.small_ball:blowup_tail_bound_sequential",
    "lemma_4_2.chain_neighbourhood": "verify.theory.small_ball:neighbourhood_blowup_bound",
    "lemma_4_4.chain_slice": "verify.theory.cube_covering:slice_small_ball_bound",
    "thm_4_5.chain_exponent": "verify.theory.zero_sensitivity:theorem_exponent",
    "thm_4_5.chain_series": "verify.theory.zero_sensitivity:bad_event_series_term",
    "hr_cor_5.chain_bound": "verify.theory.hahn_rofin:cor_5_bound",
    "hr_cor_5.chain_omega": "verify.theory.hahn_rofin:cor_5_omega",
    "hr_cor_5.chain_edge_bound": "verify.theory.hahn_rofin:cor_5_edge_bound",
    "hr_cor_5.chain_as_bound": "verify.theory.hahn_rofin:cor_5_as_bound",
    "lemma_3_2.chain_beta_lower": "verify.theory.norms:beta_lower_bound",
    "hr_thm_6.chain_variance": "verify.theory.hahn_rofin:noise_variance_probability",
    "hr_thm_6.chain_cap_probability": "verify.theory.hahn_rofin:noise_beta_cap_probability",
    "hr_thm_6.chain_cap_growth": "verify.theory.hahn_rofin:noise_cap_growth",
    # issue 26's named bounds (verify.proofs.chain_bounds)
    "cor_3_3.chain_exponent": "verify.theory.bounds:cor_3_3_exponent",
    "lemma_3_1.chain_bound": "verify.theory.bounds:lemma_3_1_bound",
    "lemma_3_2.chain_per_layer_bound": "verify.theory.bounds:lemma_3_2_per_layer_bound",
    "lemma_2_9.chain_c_infl_value": "verify.theory.bounds:c_infl",
    "small_ball.chain_variance_bound": "verify.theory.small_ball:variance_small_ball_bound",
    "lemma_4_2.chain_tail": "verify.theory.small_ball:blowup_tail_bound",
    "lemma_4_2.chain_markov_factor": "verify.theory.small_ball:lemma_4_2_markov_factor",
    "cor_4_3.chain_good_event": "verify.theory.eps_zero_bounds:good_event_blowup",
    "cor_4_3.chain_flip_bound": "verify.theory.eps_zero_bounds:cor_4_3_flip_bound",
    "cor_4_3.chain_bound": "verify.theory.eps_zero_bounds:cor_4_3_bound",
    "cor_4_3.chain_threshold": "verify.theory.eps_zero_bounds:log10_cor_4_3_threshold",
    "cor_4_6.chain_bound": "verify.theory.eps_zero_bounds:cor_4_6_recognition_bound",
    "thm_4_5.chain_theorem_bound": "verify.theory.zero_sensitivity:theorem_bound",
    "thm_4_5.chain_bad_event_bound": "verify.theory.zero_sensitivity:bad_event_probability_bound",
    "trivial_bounds.chain_output_swing": "verify.theory.trivial:output_swing_bound",
    "trivial_bounds.chain_output_abs": "verify.theory.trivial:output_abs_bound",
    "trivial_bounds.chain_readout_swing": "verify.theory.trivial:readout_swing_bound",
    "trivial_bounds.chain_sensitivity_swing": "verify.theory.trivial:sensitivity_swing_bound",
    "trivial_bounds.chain_all_functions": "verify.theory.trivial:log10_all_functions",
    "trivial_bounds.chain_probability": "verify.theory.probability:checked_probability",
    # H&R's log10 forms, requirement and thresholds (verify.proofs.chain_hr)
    "hr_cor_5.chain_log10_bound": "verify.theory.hahn_rofin:log10_cor_5_bound",
    "hr_cor_5.chain_log10_as_bound": "verify.theory.hahn_rofin:log10_cor_5_as_bound",
    "hr_cor_5.chain_required_blowup": "verify.theory.hahn_rofin:cor_5_required_blowup",
    "hr_thm_6.chain_blowup_cap": "verify.theory.hahn_rofin:blowup_cap",
    "hr_thm_6.chain_variance_threshold": "verify.theory.hahn_rofin:noise_variance_threshold",
    "hr_thm_6.chain_cap_threshold": "verify.theory.hahn_rofin:noise_cap_threshold",
    # Sec 5 MAJORITY, Sec 6 random functions, Lemma 4.4's certified covering (coverage.py)
    "sec_5_majority.chain_k0": "verify.theory.majority:majority_k0_formula",
    "sec_5_majority.chain_predicate": "verify.theory.majority:majority_lower_bound_exceeds",
    "sec_5_majority.chain_threshold": "verify.theory.majority:majority_polynomial_threshold",
    "sec_6_random_functions.chain_radius": "verify.theory.random_functions:chen_stein_radius",
    "sec_6_random_functions.chain_biased_mean": "verify.theory.random_functions:biased_k0_mean",
    "lemma_4_4.chain_certified_cover": "verify.theory.cube_covering:certify_bad_measure",
    # Cor 5.1-5.4's premise: the families' sensitivity (coverage.py)
    "cor_5_1.chain_premise": "verify.boolean:sensitivity",
    "cor_5_2.chain_premise": "verify.boolean:sensitivity",
    "cor_5_3.chain_premise": "verify.boolean:sensitivity",
    "cor_5_4.chain_premise": "verify.boolean:sensitivity",
    # the norm summaries both sides of the eps > 0 chains read (verify.proofs.chain_norms)
    "lemma_2_9.chain_parameter_norms": "verify.theory.norms:parameter_norms",
    "prop_3_5.chain_box_norms": "verify.theory.norms:box_norms",
    # the searches and estimates (verify.proofs.chain_searches)
    "thm_4_5.chain_smallest_biting_n": "verify.theory.zero_sensitivity:smallest_biting_n",
    "thm_4_5.chain_series_order": "verify.theory.zero_sensitivity:bad_event_series_order",
    "lemma_4_4.chain_monte_carlo_cover": "verify.theory.cube_covering:monte_carlo_cover",
}


def code(ob_id: str) -> Callable[..., Any]:
    """The coded function of a chain obligation, looked up now (module attribute)."""
    mod, name = CODE[ob_id].split(":")
    return getattr(importlib.import_module(mod), name)


def _inside(value: float, enc: Iv, tol: float = REL_TOL) -> bool:
    """``value`` lies in the enclosure widened by tol relative at both ends (inf, nan never)."""
    if not math.isfinite(value):
        return False
    v = arb(value)  # a binary float is exact in arb
    width = (abs(enc.lo) + abs(enc.hi)) * arb(tol)
    return bool(v >= enc.lo - width and v <= enc.hi + width)


Point = dict[str, Any]
Case = tuple[Point, Callable[[], Any], Callable[[], Iv]]


def _check(
    cases: Callable[[], Iterator[Case]], weaken: float = 1.0
) -> tuple[int, Point | None, str]:
    """(points compared, first point where the coded value (times ``weaken``) left the
    composed enclosure, message)."""
    n = 0
    for pt, coded, composed in cases():
        n += 1
        value = coded()
        values = value if isinstance(value, tuple) else (value,)
        encs = composed()
        encs = encs if isinstance(encs, tuple) else (encs,)
        for v, e in zip(values, encs, strict=True):
            if not _inside(float(v) * weaken, e):
                mid = (e.lo + e.hi) / 2
                return n, pt, f"coded {float(v) * weaken:.12g} vs composed {float(mid.mid()):.12g}"
    return n, None, ""


def _points_step(ob_id: str, statement: str, step: str, doc: str, cases, facts=()) -> None:
    """Register a chain obligation comparing code(ob_id) with a composition at points."""

    def prove() -> Verdict:
        n, pt, msg = _check(cases)
        if pt is not None:
            return Verdict("failed", f"{CODE[ob_id]} != composition: {msg}", pt)
        if n < N_POINTS:
            return Verdict("unknown", f"only {n} points")
        return Verdict("proved", f"{CODE[ob_id]} equals the composition at {n} seeded points")

    def twin() -> Verdict:
        _, pt, msg = _check(cases, weaken=0.5)
        if pt is None:
            return Verdict("not refuted", "the halved code passed every point")
        return Verdict("refuted", f"halved code caught: {msg}", pt)

    custom_step(
        ob_id,
        statement,
        step,
        doc,
        "chain",
        f"{CODE[ob_id]} equals the composition of the steps at {N_POINTS} seeded points",
        f"{CODE[ob_id]} times 1/2",
        prove,
        twin,
        facts=tuple(facts),
        evidence="points",
    )


def ball(x: arb) -> Iv:
    """An arb ball as an interval."""
    return Iv(x.lower(), x.upper())


def _log10(x: Iv) -> Iv:
    ln10 = arb(10).log()
    return Iv((x.lo.log() / ln10).lower(), (x.hi.log() / ln10).upper())


def _min1(x: Iv) -> Iv:
    return x.min(iv(1))


# ----------------------------------------------------------------------------- eps > 0
def _params(eos_only: bool = False) -> list[Any]:
    """N_POINTS seeded models over post/pre-LN, L, H, D, eps, affine or not, eos or not, every
    positional encoding and both embeddings."""
    from verify.model import ModelConfig, init_params

    rng = np.random.default_rng(28 + eos_only)
    out = []
    for i in range(N_POINTS):
        d = int(rng.choice([4, 8]))
        cfg = ModelConfig(
            d_model=d,
            n_layers=int(rng.integers(1, 3)),
            n_heads=int(rng.choice([1, 2])),
            d_ff=2 * d,
            ln_eps=float(10 ** rng.uniform(-4, 0)),
            norm_first=bool(rng.integers(2)),
            ln_affine=bool(rng.integers(2)),
            eos=True if eos_only else bool(rng.integers(2)),
            pos_encoding=str(rng.choice(["learned", "sinusoidal", "none"])),
            embedding=str(rng.choice(["add", "concat"])),
            max_len=16,
        )
        scheme = str(rng.choice(["uniform", "gaussian", "xavier_uniform", "xavier_normal"]))
        out.append(init_params(cfg, scheme, seed=i, scale=float(10 ** rng.uniform(-1.5, -0.3))))
    return out


_MEMO: dict[tuple[str, bool], list[Any]] = {}


def models(eos_only: bool = False) -> list[Any]:
    """The seeded models (memoised)."""
    if ("params", eos_only) not in _MEMO:
        _MEMO["params", eos_only] = _params(eos_only)
    return _MEMO["params", eos_only]


def configs(eos_only: bool = False) -> list[Any]:
    """The seeded models' parameter-norm summaries (memoised)."""
    from verify.theory.norms import parameter_norms

    if ("norms", eos_only) not in _MEMO:
        _MEMO["norms", eos_only] = [parameter_norms(p) for p in models(eos_only)]
    return _MEMO["norms", eos_only]


def _cfg_point(nm: Any) -> Point:
    c = nm.config
    return {
        "d_model": c.d_model,
        "n_layers": c.n_layers,
        "n_heads": c.n_heads,
        "ln_eps": c.ln_eps,
        "norm_first": c.norm_first,
        "ln_affine": c.ln_affine,
        "eos": c.eos,
        "pos_encoding": c.pos_encoding,
        "embedding": c.embedding,
    }


def n_norms_composed(cfg: Any) -> int:
    """K of the derivation: two norms per layer, plus the final norm pre-LN."""
    return 2 * cfg.n_layers + int(cfg.norm_first)


def _beta_max(nm: Any) -> Iv:
    """Lemma 3.2 composed: (1 + eps^{-1/2})^K, K = 2L (+1 pre-LN: the final norm)."""
    cfg = nm.config
    k = n_norms_composed(cfg)
    zmax = iv(cfg.ln_eps).rpow(arb(-0.5), positive=False)
    return (iv(1) + zmax).ipow(k)


def _prop_3_5_cases() -> Iterator[Case]:
    from verify.model import n_params, param_shapes
    from verify.theory.norms import box_norms

    rng = np.random.default_rng(35)
    for nm in configs():
        cfg = nm.config
        b, xi = float(10 ** rng.uniform(-1, 0.3)), float(10 ** rng.uniform(-3, 0))

        def comp(cfg: Any = cfg, b: float = b, xi: float = xi) -> Iv:
            total = iv(0)
            for v in lipschitz_composed(box_norms(cfg, b)).values():
                total = total + v.ipow(2)
            c_lip = sqrt_iv(total)
            size = sum(int(np.prod(s)) for s in param_shapes(cfg).values())
            diam = iv(2) * sqrt_iv(iv(b).ipow(2) * iv(size))
            return iv(n_params(cfg)) * _log10(iv(1) + c_lip * diam * iv(xi).inv())

        pt = {**_cfg_point(nm), "B": b, "xi": xi}
        yield pt, (lambda cfg=cfg, b=b, xi=xi: code("prop_3_5.chain_cap")(cfg, b, xi)), comp


_points_step(
    "prop_3_5.chain_cap",
    "Prop 3.5",
    "Derivation, 3: at most (1 + diam/r)^M net points",
    "docs/derivations.md#prop-35",
    _prop_3_5_cases,
    facts=(
        "prop_3_5.chain_box_norms",
        "prop_3_5.separation",
        "prop_3_5.volume_ratio",
        "lemma_3_1.chain_c_lip",
    ),
)
