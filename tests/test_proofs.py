"""verify.proofs: the methods can fail, the chain to the code has teeth (weakening a coded
factor of verify.theory makes its chain obligation fail), the prove command's exit codes, the
interval arithmetic's enclosures, the Coq lemmas."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from verify.cli import main
from verify.proofs import load
from verify.proofs.core import OBLIGATIONS
from verify.proofs.interval import Iv, compile_expr, prove_nonnegative
from verify.proofs.methods import _arb_prove, _z3_prove, _z3_refute, holds_at
from verify.theory import (
    bounds,
    cube_covering,
    eps_zero_bounds,
    hahn_rofin,
    packing,
    probability,
    small_ball,
    trivial,
    zero_sensitivity,
)

load()

x, y = sp.symbols("x y", real=True)


def test_z3_method_refutes_a_false_step_with_a_checked_point() -> None:
    v = _z3_prove([x >= 0, y >= 0, x * y <= 1], sp.Le(x + y, 2))
    assert v.status == "failed"
    pt = {sp.Symbol(k, real=True): Fraction(s) for k, s in v.point.items()}
    assert holds_at(sp.Le(x + y, 2), pt) is False
    assert _z3_prove([x >= 0, y >= 0, x * y <= 1], sp.Le(x * y, 1)).status == "proved"


def test_z3_twin_refutation_needs_a_point_that_really_violates() -> None:
    assert _z3_refute([x >= 0], sp.Le(x, x + 1)).status == "not refuted"
    v = _z3_refute([x >= 0, x <= 1], sp.Le(sp.sqrt(x), x))
    assert v.status == "refuted" and 0 < Fraction(v.point["x"]) < 1


def test_arb_branch_and_bound_proves_touching_bounds_and_finds_violations() -> None:
    assert _arb_prove({x: (0, 4)}, sp.Ge(sp.exp(x), 1 + x), 5000).status == "proved"
    bad = _arb_prove({x: (0, 4)}, sp.Ge(sp.exp(x), 1 + 2 * x), 5000)
    assert bad.status == "failed"
    assert sp.exp(Fraction(bad.point["x"])) < 1 + 2 * Fraction(bad.point["x"])
    assert not prove_nonnegative(x - sp.Rational(1, 2), {x: (0, 1)}).proved


@pytest.mark.parametrize(
    "expr",
    [
        sp.exp(x) * y - sp.log(1 + x**2),
        sp.sqrt(x + y) / (1 + y),
        sp.Abs(x - y) ** 3,
        sp.tanh(x) - y**-2,
    ],
)
def test_interval_enclosures_contain_the_values_at_seeded_points(expr) -> None:
    f = compile_expr(expr)
    rng = np.random.default_rng(0)
    for _ in range(40):
        lo = sorted(Fraction(float(v)).limit_denominator(64) for v in rng.uniform(0.1, 3, 2))
        hi = sorted(Fraction(float(v)).limit_denominator(64) for v in rng.uniform(0.1, 3, 2))
        bx, by = (min(lo), max(lo)), (min(hi), max(hi))
        enc = f({x: Iv.of(*bx), y: Iv.of(*by)})
        for _ in range(5):
            px = mpmath.mpf(bx[0].numerator) / bx[0].denominator + rng.uniform() * float(
                bx[1] - bx[0]
            )
            py = mpmath.mpf(by[0].numerator) / by[0].denominator + rng.uniform() * float(
                by[1] - by[0]
            )
            with mpmath.workdps(40):
                val = sp.lambdify((x, y), expr, "mpmath")(px, py)
            assert float(enc.lo.lower()) <= float(val) <= float(enc.hi.upper())


# weakenings of the coded constants, none of them the examples: each must make the
# chain obligation that reaches it fail (at a named point)
def _scaled(fn, factor):
    return lambda *a, **k: factor * fn(*a, **k)


WEAKENINGS = [
    (
        "C_infl: value term V halved",
        bounds,
        "infl_value_term",
        lambda hd: hd.wv / 2,
        "lemma_2_9.chain_c_infl",
    ),
    ("C_infl: g/4 -> g/4.5", bounds, "infl_ln_factor", lambda g: g / 4.5, "lemma_2_9.chain_c_infl"),
    (
        "C_infl: e^{2R} -> e^{1.9R}",
        bounds,
        "infl_softmax_weight",
        lambda q, k, sd: mpmath.exp(mpmath.mpf(1.9) * q * k / sd),
        "lemma_2_9.chain_c_infl",
    ),
    (
        "C_infl: flip reweighting /2",
        bounds,
        "infl_reweighting_at_flip",
        lambda vc, r: vc * r / 4,
        "lemma_2_9.chain_c_infl",
    ),
    ("C_infl: heads by max", bounds, "head_sum", lambda xs: max(xs), "lemma_2_9.chain_c_infl"),
    ("C_infl: MLP F dropped", bounds, "infl_ffn_factor", lambda lay: 0.0, "lemma_2_9.chain_c_infl"),
    (
        "C_Lip: reweighting halved",
        bounds,
        "lip_reweighting",
        _scaled(bounds.lip_reweighting, 0.5),
        "lemma_3_1.chain_coefficients",
    ),
    (
        "C_Lip: sqrt(D-1) -> sqrt(D-2)",
        bounds,
        "lip_ln_gain_coefficient",
        lambda d: math.sqrt(max(d - 2, 0)),
        "lemma_3_1.chain_coefficients",
    ),
    (
        "C_Lip: groups by max",
        bounds,
        "lip_group_combine",
        lambda c: max(c.values()),
        "lemma_3_1.chain_c_lip",
    ),
    (
        "Lemma 3.2: eps^{-1/2} -> eps^{-0.45}",
        bounds,
        "z_max",
        lambda cfg: cfg.ln_eps**-0.45,
        "lemma_3_2.chain_bound",
    ),
    (
        "Lemma 3.2: K -> K - 1",
        bounds,
        "lemma_3_2_exponent",
        lambda cfg: cfg.n_norms - 1,
        "lemma_3_2.chain_bound",
    ),
    (
        "Cor 3.3: through z_max",
        bounds,
        "z_max",
        lambda cfg: cfg.ln_eps**-0.5 / 2,
        "cor_3_3.chain_bound",
    ),
    (
        "Prop 3.5: packing radius doubled",
        packing,
        "packing_radius",
        lambda c, xi: 2 * xi / c,
        "prop_3_5.chain_cap",
    ),
    (
        "small ball: V_k halved",
        small_ball,
        "unit_ball_volume",
        _scaled(small_ball.unit_ball_volume, 0.5),
        "small_ball.chain_constant",
    ),
    (
        "Lemma 4.2: u0 without the 1",
        small_ball,
        "sequential_shift",
        lambda d, a, s: math.log((s * small_ball.small_ball_constant(d, a)) ** (1 / (d - 1))),
        "lemma_4_2.chain_sequential",
    ),
    (
        "Lemma 4.4: slice V_k halved",
        cube_covering,
        "unit_ball_volume",
        _scaled(small_ball.unit_ball_volume, 0.5),
        "lemma_4_4.chain_slice",
    ),
    (
        "Thm 4.5: exponent -5 -> -4.5",
        zero_sensitivity,
        "theorem_exponent",
        lambda d, ll: (d - 1) / (2 * ll) - 4.5,
        "thm_4_5.chain_exponent",
    ),
    (
        "Thm 4.5: C_SB in a_N halved",
        zero_sensitivity,
        "small_ball_constant",
        _scaled(small_ball.small_ball_constant, 0.5),
        "thm_4_5.chain_series",
    ),
    (
        "H&R Cor 5: omega without the readout term",
        hahn_rofin,
        "cor_5_omega",
        lambda ns, rs, n: np.asarray(ns, dtype=float) / n,
        "hr_cor_5.chain_omega",
    ),
    (
        "H&R Thm 6: chi^2 with D - 2 degrees",
        hahn_rofin,
        "noise_variance_probability",
        lambda d, s, t: float(__import__("scipy.stats").stats.chi2.cdf(t * d / s**2, d - 2)),
        "hr_thm_6.chain_variance",
    ),
    # issue 26's named bounds
    (
        "Cor 3.3: exponent 2K -> K",
        bounds,
        "cor_3_3_exponent",
        lambda cfg: bounds.lemma_3_2_exponent(cfg),
        "cor_3_3.chain_exponent",
    ),
    (
        "Lemma 3.1: C_Lip ||dtheta|| -> C_Lip ||dtheta||^0.9",
        bounds,
        "lemma_3_1_bound",
        lambda c, d: c * d**0.9,
        "lemma_3_1.chain_bound",
    ),
    (
        "Lemma 3.2 per layer: L -> L - 1",
        bounds,
        "lemma_3_2_per_layer_bound",
        lambda cfg: (1 + bounds.z_max(cfg)) ** (cfg.n_layers - 1),
        "lemma_3_2.chain_per_layer_bound",
    ),
    (
        "Lemma 3.2 per layer: through z_max, eps^{-1/2} -> eps^{-0.45}",
        bounds,
        "z_max",
        lambda cfg: cfg.ln_eps**-0.45,
        "lemma_3_2.chain_per_layer_bound",
    ),
    (
        "Lemma 4.2: Markov factor without its 1",
        small_ball,
        "lemma_4_2_markov_factor",
        lambda n, k: n / (n - k + 1),
        "lemma_4_2.chain_markov_factor",
    ),
    (
        "Cor 4.3: good event N^(zeta/2) -> N^(zeta/3)",
        eps_zero_bounds,
        "good_event_blowup",
        lambda n, z: float(n ** (z / 3)),
        "cor_4_3.chain_good_event",
    ),
    (
        "Cor 4.3: the same, through cor_4_3_bound",
        eps_zero_bounds,
        "good_event_blowup",
        lambda n, z: float(n ** (z / 3)),
        "cor_4_3.chain_bound",
    ),
    (
        "Cor 4.3: beta(x^n) dropped per flip",
        eps_zero_bounds,
        "cor_4_3_flip_bound",
        lambda w, c, bx, bxn, n: w * bounds.lemma_2_9_bound(c, bx, 1.0, n, False),
        "cor_4_3.chain_flip_bound",
    ),
    (
        "Cor 4.3: Lemma 2.9's 1/N dropped, through cor_4_3_bound",
        bounds,
        "lemma_2_9_bound",
        lambda c, b1, b2, n, at: c * b1 * b2 * (1 + at),
        "cor_4_3.chain_bound",
    ),
    (
        "Cor 4.3: N_0 without the 1/(1 - zeta)",
        eps_zero_bounds,
        "log10_cor_4_3_threshold",
        lambda lg, xi, z: max(0.0, lg - math.log10(2 * xi)),
        "cor_4_3.chain_threshold",
    ),
    (
        "Cor 4.6: N_0 ignored",
        eps_zero_bounds,
        "cor_4_6_recognition_bound",
        lambda n, thr, bad: min(1.0, bad),
        "cor_4_6.chain_bound",
    ),
    (
        "Thm 4.5: N^e -> N^(e/2)",
        zero_sensitivity,
        "theorem_bound",
        lambda d, ll, n: float(n) ** (zero_sensitivity.theorem_exponent(d, ll) / 2),
        "thm_4_5.chain_theorem_bound",
    ),
    (
        "Thm 4.5: N^e, through the exponent -5 -> -5.5",
        zero_sensitivity,
        "theorem_exponent",
        lambda d, ll: (d - 1) / (2 * ll) - 5.5,
        "thm_4_5.chain_theorem_bound",
    ),
    (
        "trivial: output swing without the gain",
        trivial,
        "output_swing_bound",
        lambda p: 2 * math.sqrt(p.config.d_model) * float(np.linalg.norm(p["readout.weight"])),
        "trivial_bounds.chain_output_swing",
    ),
    (
        "trivial: the same, through sensitivity_swing_bound",
        trivial,
        "output_swing_bound",
        lambda p: 2 * math.sqrt(p.config.d_model) * float(np.linalg.norm(p["readout.weight"])),
        "trivial_bounds.chain_sensitivity_swing",
    ),
    (
        "trivial: |T| without |w . b + omega|",
        trivial,
        "output_abs_bound",
        lambda p: trivial.output_swing_bound(p) / 2,
        "trivial_bounds.chain_output_abs",
    ),
    (
        "trivial: readout swing sqrt(D) -> sqrt(D - 1)",
        trivial,
        "readout_swing_bound",
        lambda p: (
            2
            * math.sqrt(p.config.d_model - 1)
            * float(np.max(np.abs(trivial.last_norm_affine(p)[0])))
        ),
        "trivial_bounds.chain_readout_swing",
    ),
    (
        "trivial: sensitivity swing ignores n_edges",
        trivial,
        "sensitivity_swing_bound",
        lambda p, a, e=1.0: trivial.output_swing_bound(p) * a,
        "trivial_bounds.chain_sensitivity_swing",
    ),
    (
        "trivial: 2^(2^N) -> 2^(N^2)",
        trivial,
        "log10_all_functions",
        lambda n: n**2 * math.log10(2.0),
        "trivial_bounds.chain_all_functions",
    ),
    (
        "C_infl: the flipped-position part only (max dropped)",
        bounds,
        "c_infl",
        lambda src: float(bounds._c_infl_parts_mp(bounds.norms_of(src))[0]),
        "lemma_2_9.chain_c_infl_value",
    ),
    (
        "(SB): exponent (D-1)/2 -> (D-1)/3",
        small_ball,
        "variance_small_ball_bound",
        lambda delta, d, a: min(1.0, small_ball.small_ball_constant(d, a) * delta ** ((d - 1) / 3)),
        "small_ball.chain_variance_bound",
    ),
    (
        "P[beta > t]: the union bound only",
        small_ball,
        "blowup_tail_bound",
        lambda t, d, a, k, s: small_ball.blowup_tail_bound_union(t, d, a, k, s),
        "lemma_4_2.chain_tail",
    ),
    (
        "H&R Cor 5 log10: log10 ||w|| dropped",
        hahn_rofin,
        "log10_cor_5_bound",
        lambda w, lg, b, o, weights=None: lg + math.log10(np.mean(np.square(b) * o)),
        "hr_cor_5.chain_log10_bound",
    ),
    (
        "H&R Cor 5 log10 c_r form: 2 xi -> xi",
        hahn_rofin,
        "log10_cor_5_as_bound",
        lambda w, lg, m, xi: math.log10(w) + lg + math.log10(m) - math.log10(xi),
        "hr_cor_5.chain_log10_as_bound",
    ),
    (
        "H&R Cor 5 requirement: 2 xi -> xi",
        hahn_rofin,
        "cor_5_required_blowup",
        lambda a, xi, w, c: xi * a / (w * c),
        "hr_cor_5.chain_required_blowup",
    ),
    (
        "H&R Thm 6 cap: K -> K - 1",
        hahn_rofin,
        "blowup_cap",
        lambda t, eps, k: (1.0 + (t + eps) ** -0.5) ** (k - 1),
        "hr_thm_6.chain_blowup_cap",
    ),
    (
        "H&R Thm 6 quantile: D degrees of freedom for D - 1",
        hahn_rofin,
        "noise_variance_threshold",
        lambda d, s, q: float(__import__("scipy.stats").stats.chi2.ppf(q, d) * s**2 / d),
        "hr_thm_6.chain_variance_threshold",
    ),
    (
        "H&R Thm 6 cap threshold: S dropped from p / (K S)",
        hahn_rofin,
        "noise_cap_threshold",
        lambda d, k, s, sigma, p: hahn_rofin.noise_variance_threshold(d, sigma, p / k),
        "hr_thm_6.chain_cap_threshold",
    ),
    (
        "probabilities clipped to [0, 1] instead of checked",
        probability,
        "checked_probability",
        lambda name, v: min(1.0, max(0.0, float(v))),
        "trivial_bounds.chain_probability",
    ),
]


@pytest.mark.parametrize(
    "label, module, name, weaker, ob_id", WEAKENINGS, ids=[w[0] for w in WEAKENINGS]
)
def test_weakening_a_coded_factor_makes_its_chain_obligation_fail(
    monkeypatch, label, module, name, weaker, ob_id
) -> None:
    ob = OBLIGATIONS[ob_id]
    monkeypatch.setattr(module, name, weaker)
    verdict = ob.prove()
    assert verdict.status == "failed", (label, verdict)
    assert verdict.point  # the point where the coded value left the composition


def test_chain_obligations_hold_on_the_code_as_it_is() -> None:
    for ob_id in ("lemma_2_9.chain_c_infl", "lemma_3_1.chain_c_lip", "lemma_4_4.chain_slice"):
        assert OBLIGATIONS[ob_id].prove().status == "proved"


def test_every_chain_obligation_points_into_the_one_table() -> None:
    from verify.proofs.chain import CODE, code

    chains = {k for k, ob in OBLIGATIONS.items() if ob.method == "chain"}
    assert chains == set(CODE)
    assert all(callable(code(k)) for k in CODE)


def test_prove_exit_codes(monkeypatch, capsys) -> None:
    assert main(["prove", "--only", "lemma_3_2"]) == 0
    assert "lemma_3_2.z_max" in capsys.readouterr().out
    monkeypatch.setattr(bounds, "lemma_3_2_exponent", lambda cfg: cfg.n_norms - 1)
    assert main(["prove", "--only", "lemma_3_2.chain_bound"]) == 1
    assert "NOT OK lemma_3_2.chain_bound" in capsys.readouterr().out
    assert main(["prove", "--only", "no_such_obligation"]) == 2


def test_prove_json_lists_every_selected_obligation() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "verify", "prove", "--only", "lemma_2_9.ln_", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert isinstance(doc, list)
    ids = [o["id"] for o in doc]
    assert ids and all(i.startswith("lemma_2_9.ln_") for i in ids)
    for o in doc:
        assert {"id", "statement", "step", "method", "status"} <= set(o)
        assert o["status"] == "proved" and o["twin"] == "refuted"


def test_branch_and_bound_monotone_faces_are_not_unsound() -> None:
    """Touching zeros are proven through faces; a bound that fails inside is never proven."""
    assert prove_nonnegative(x * (1 - x), {x: (0, 1)}).proved
    assert not prove_nonnegative(x * (1 - x) - sp.Rational(3, 10), {x: (0, 1)}).proved
    # the gradient changes sign inside: no face reduction may skip the dip at x = 1/2
    dip = (x - sp.Rational(1, 2)) ** 2 - sp.Rational(1, 1000)
    res = prove_nonnegative(dip, {x: (0, 1)}, max_boxes=2000)
    assert not res.proved and res.counterexample is not None
    assert holds_at(sp.Ge(dip, 0), res.counterexample) is False


def test_the_composition_uses_the_proved_step_expressions(monkeypatch) -> None:
    """C_infl's chain composes the expressions the step obligations prove: a step expression
    without e^{2R} no longer matches the code (and the step's own z3 obligation would fail)."""
    from verify.proofs import influence

    weaker = influence.ATT_OTHER_A.subs(influence.SYM["E"], 1)
    monkeypatch.setattr(influence, "ATT_OTHER_A", weaker)
    assert OBLIGATIONS["lemma_2_9.chain_c_infl"].prove().status == "failed"
    s = influence.SYM
    hyps = [s["S"] >= 1, s["E"] >= 1, s["a"] >= 0, s["b"] >= 0, s["V"] >= 0, s["Y"] >= 0]
    claim = sp.Le(s["E"] * s["V"] * s["a"], weaker * s["a"])  # the value part alone
    assert _z3_prove(hyps, claim).status == "failed"


def test_the_memoised_compositions_follow_a_re_pointed_step(monkeypatch) -> None:
    """The compositions are memoised on (norm summary, the step expressions they read): C_Lip's
    chain proved once still sees a re-pointed step (value term dropped) and fails."""
    from verify.proofs.lipschitz import LIP

    assert OBLIGATIONS["lemma_3_1.chain_coefficients"].prove().status == "proved"
    monkeypatch.setitem(LIP, "value_w", LIP["value_w"] * 0)
    assert OBLIGATIONS["lemma_3_1.chain_coefficients"].prove().status == "failed"
