"""Mutation tests of the explicit eps > 0 constants (issue 11): a check that cannot fail proves
nothing.

Each mutant weakens one factor of a constant -- a named function of verify/theory/bounds.py
(C_infl's ``infl_*``, C_Lip's ``lip_*``, Lemma 3.2's exponent and z bound, Prop 3.5's packing
radius) -- by ``monkeypatch``. The test then runs the project's own registered checks of the
statements that use the constant, through the registry at the quick budget (seed 0), the checks
built to kill such mutants first, and asserts that one of them reports VIOLATED; it prints
which. Counterexamples of the mutated runs go to a temporary folder.

Every mutant is killed. A mutant no check can kill (an *equivalent* one: the weakened constant
is still a valid bound) would be declared with ``survives=`` as a strict xfail, so that a kill
is noticed. Halving C_Lip's softmax-reweighting term was one, until the term was tightened to
the covariance bound max|Δs| V Y (Σ_j Δp_j v_j = Cov_p(Δs, v), docs/derivations.md#lemma-31):
the alternating-string construction attains that bound, and halving it now fails the Lemma 3.1
derivation steps (ratio ~2). (In C_infl the factor 2 is needed at another position: the
radial-change construction of the Lemma 2.9 unit steps attains it there; at the flipped position
C_infl's term is v_c (max Δs - min Δs) / 2, attained by the split query/key turn.)

Issue 26 extends the suite to every named bound of verify/theory (Cor 3.3's exponent, Cor
4.3, Lemma 4.2's Markov factor, the trivial bounds, ...): a mutant may name, besides statements,
``tests``: functions of tests/test_theory_functions.py (each bound built from its parts, golden
values) and tests/test_trivial_bounds.py (each trivial bound attained by a construction). Such a
test must fail (AssertionError) under the mutant; it runs before the statements' checks.

Marker ``mutation``; part of the default ``pytest`` run (about 30 s on 2 cores).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import pytest
import test_registry as registry_tests
import test_theory_functions as parts
import test_trivial_bounds as attained

import verify.registry as registry_package
import verify.registry.counterexamples as counterexamples
import verify.statements.lemma_3_2 as lemma_3_2_module
from verify.registry import CheckContext, Status, get_statement
from verify.registry.results import Status as _Status
from verify.theory import bounds, eps_zero_bounds, packing, small_ball, trivial, zero_sensitivity
from verify.theory import hahn_rofin as hr

pytestmark = pytest.mark.mutation

INFL = ("Lemma 2.9", "Cor 3.3")
LIP = ("Lemma 3.1", "Prop 3.5")
BLOWUP = ("Lemma 3.2", "Cor 3.3")
# checks built to kill mutants run first (name prefixes), then every other check in order
FIRST = ("derivation steps", "constructions", "packing step", "tight as", "small-ball")


@dataclass(frozen=True)
class Mutant:
    name: str
    target: str  # function of verify.theory.bounds
    weaken: Callable[[Callable], Callable]  # original -> weakened
    statements: tuple[str, ...]
    survives: str = ""  # why no check kills it (a strict xfail)
    module: object = bounds  # where ``target`` lives
    tests: tuple[Callable[[], None], ...] = ()  # tests that must fail under the mutant


def halved(f: Callable) -> Callable:
    return lambda *a: f(*a) / 2


def zero(f: Callable) -> Callable:
    return lambda *a: 0.0 * f(*a)


def zero_form(f: Callable) -> Callable:
    return lambda *a: bounds.LinearForm()


def lin_halved(f: Callable) -> Callable:
    return lambda *a: 0.5 * f(*a)


def head_max(f: Callable) -> Callable:
    return lambda per_head: mpmath.mpf(max(per_head))


def lin_head_max(f: Callable) -> Callable:
    def weak(forms):
        keys = sorted({k for form in forms for k in form.c})
        return bounds.LinearForm({k: max(form.c.get(k, 0.0) for form in forms) for k in keys})

    return weak


MUTANTS = [
    # C_infl (Lemma 2.9; Cor 3.3 uses it)
    Mutant("C_infl: token change a0 halved", "infl_token_change", halved, INFL),
    Mutant("C_infl: layer-norm factor g/4 halved", "infl_ln_factor", halved, INFL),
    Mutant("C_infl: MLP factor F removed", "infl_ffn_factor", zero, INFL),
    Mutant("C_infl: MLP factor F halved", "infl_ffn_factor", halved, INFL),
    Mutant(
        "C_infl: softmax factor e^{2R} removed",
        "infl_softmax_weight",
        lambda f: lambda *a: mpmath.mpf(1),
        INFL,
    ),
    Mutant("C_infl: softmax factor e^{2R} halved", "infl_softmax_weight", halved, INFL),
    Mutant("C_infl: value term V removed", "infl_value_term", zero, INFL),
    Mutant("C_infl: value term V halved", "infl_value_term", halved, INFL),
    Mutant("C_infl: softmax reweighting 2 v_c G removed", "infl_reweighting", zero, INFL),
    Mutant("C_infl: softmax reweighting 2 v_c G halved", "infl_reweighting", halved, INFL),
    Mutant(
        "C_infl: reweighting at the flipped position removed",
        "infl_reweighting_at_flip",
        zero,
        INFL,
    ),
    Mutant(
        "C_infl: reweighting at the flipped position halved",
        "infl_reweighting_at_flip",
        halved,
        INFL,
    ),
    Mutant("C_infl: W_o factor halved", "infl_out_proj", halved, INFL),
    Mutant("C_infl: per-head sum -> max over heads", "head_sum", head_max, INFL),
    Mutant("C_infl: residual stream dropped", "infl_residual", lambda f: lambda s, b: b, INFL),
    # C_Lip (Lemma 3.1; Prop 3.5 uses it)
    Mutant("C_Lip: layer-norm Jacobian eps^-1/2 halved", "lip_ln_input_factor", halved, LIP),
    Mutant("C_Lip: gain coefficient sqrt(D-1) halved", "lip_ln_gain_coefficient", halved, LIP),
    Mutant("C_Lip: layer-norm bias coefficient removed", "lip_ln_bias_coefficient", zero, LIP),
    Mutant("C_Lip: value term removed", "lip_value_term", zero_form, LIP),
    Mutant("C_Lip: softmax reweighting removed", "lip_reweighting", zero_form, LIP),
    Mutant("C_Lip: softmax reweighting (covariance) halved", "lip_reweighting", lin_halved, LIP),
    Mutant("C_Lip: per-head sum -> max over heads", "lip_head_sum", lin_head_max, LIP),
    Mutant("C_Lip: W_o factor halved", "lip_out_proj_factor", halved, LIP),
    Mutant("C_Lip: W_o coefficient removed", "lip_out_proj_weight_coefficient", zero, LIP),
    Mutant("C_Lip: b_o coefficient removed", "lip_out_proj_bias_coefficient", zero, LIP),
    Mutant("C_Lip: MLP factor ||W_1|| halved", "lip_ffn_input_factor", halved, LIP),
    Mutant("C_Lip: MLP factor ||W_2|| halved", "lip_ffn_output_factor", halved, LIP),
    Mutant(
        "C_Lip: MLP weight coefficients removed",
        "lip_ffn_weight_coefficients",
        lambda f: lambda *a: (0.0, 0.0),
        LIP,
    ),
    Mutant("C_Lip: readout factor ||w|| halved", "lip_readout_factor", halved, LIP),
    Mutant(
        "C_Lip: readout weight coefficient halved", "lip_readout_weight_coefficient", halved, LIP
    ),
    Mutant("C_Lip: readout bias coefficient removed", "lip_readout_bias_coefficient", zero, LIP),
    Mutant(
        "C_Lip: Cauchy-Schwarz over groups -> max",
        "lip_group_combine",
        lambda f: lambda c: max(c.values()),
        LIP,
    ),
    # Lemma 3.2 (Cor 3.3 uses it), Prop 3.5
    Mutant(
        "Lemma 3.2: exponent K -> L (paper)",
        "lemma_3_2_exponent",
        lambda f: lambda cfg: cfg.n_layers,
        BLOWUP,
    ),
    Mutant(
        "Lemma 3.2: exponent K -> K - 1",
        "lemma_3_2_exponent",
        lambda f: lambda cfg: f(cfg) - 1,
        BLOWUP,
    ),
    Mutant("Lemma 3.2: z bound eps^-1/2 halved", "z_max", halved, BLOWUP),
    Mutant(
        "Prop 3.5: packing radius doubled",
        "packing_radius",
        lambda f: lambda *a: 2 * f(*a),
        ("Prop 3.5",),
        module=packing,
    ),
    # eps = 0: the small-ball constant C_SB behind every explicit tail bound of Section 4
    Mutant(
        "small-ball constant C_SB halved",
        "small_ball_constant",
        halved,
        ("Lemma 4.2",),
        module=small_ball,
    ),
]


def times_n(f: Callable) -> Callable:
    """Cor 4.3's bound (w, c, N, zeta) multiplied by N."""
    return lambda w, c, n, zeta: n * f(w, c, n, zeta)


def doubled(f: Callable) -> Callable:
    return lambda *a: 2 * f(*a)


# issue 26: every named bound, killed by its from-parts / golden test or its construction
COR_3_3_TESTS = (parts.test_cor_3_3_bound_from_parts, parts.test_cor_3_3_bound_golden)
COR_4_3_TESTS = (parts.test_cor_4_3_bound_from_parts, parts.test_cor_4_3_bound_golden)
LEMMA_4_2_TESTS = (parts.test_lemma_4_2_bound_from_parts, parts.test_lemma_4_2_bound_golden)
MUTANTS += [
    Mutant(
        "Cor 3.3: blowup exponent 2K -> K",
        "cor_3_3_exponent",
        lambda f: lambda cfg: f(cfg) // 2,
        (),
        tests=COR_3_3_TESTS,
    ),
    Mutant(
        "Cor 3.4: N* with xi in place of 2 xi",
        "log10_n_star",
        lambda f: lambda src, xi: f(src, xi) + math.log10(2.0),
        ("Cor 3.4",),
        tests=COR_3_3_TESTS,
    ),
    Mutant(
        "Cor 4.3: bound multiplied by N",
        "cor_4_3_bound",
        times_n,
        (),
        module=eps_zero_bounds,
        tests=COR_4_3_TESTS,
    ),
    Mutant(
        "Cor 4.3: per-flip bound halved",
        "cor_4_3_flip_bound",
        halved,
        (),
        module=eps_zero_bounds,
        tests=COR_4_3_TESTS,
    ),
    Mutant(
        "Cor 4.3: good event at N^zeta instead of N^(zeta/2)",
        "good_event_blowup",
        lambda f: lambda n, zeta: f(n, zeta) ** 2,
        (),
        module=eps_zero_bounds,
        tests=COR_4_3_TESTS,
    ),
    Mutant(
        "Lemma 4.2: Markov factor without its '1 +'",
        "lemma_4_2_markov_factor",
        lambda f: lambda n, k: f(n, k) - 1.0,
        (),
        module=small_ball,
        tests=LEMMA_4_2_TESTS,
    ),
    Mutant(
        "Lemma 4.2: sequential tail bound halved",
        "blowup_tail_bound_sequential",
        halved,
        (),
        module=small_ball,
        tests=LEMMA_4_2_TESTS,
    ),
    Mutant(
        "Thm 4.5: exponent (D-1)/(2L) - 5 -> (D-1)/(2L) - 4",
        "theorem_exponent",
        lambda f: lambda d, layers: f(d, layers) + 1,
        (),
        module=zero_sensitivity,
        tests=(parts.test_theorem_4_5_exponent_golden,),
    ),
    Mutant(
        "Cor 4.6: finite-N bound halved",
        "cor_4_6_recognition_bound",
        halved,
        (),
        module=eps_zero_bounds,
        tests=(parts.test_cor_4_6_bound_from_parts,),
    ),
    Mutant(
        "Cor 4.6: threshold N_0 without 1/(1 - zeta)",
        "log10_cor_4_3_threshold",
        lambda f: lambda lwc, xi, zeta: f(lwc, xi, zeta) * (1 - zeta),
        (),
        module=eps_zero_bounds,
        tests=(parts.test_cor_4_3_threshold_golden_and_from_parts,),
    ),
    Mutant(
        "Thm 4.5: bad-event bound a_N halved",
        "bad_event_probability_bound",
        halved,
        (),
        module=zero_sensitivity,
        tests=(parts.test_bad_event_probability_bound_golden,),
    ),
    Mutant(
        "Lemma 3.1: C_Lip ||dtheta|| halved",
        "lemma_3_1_bound",
        halved,
        (),
        tests=(parts.test_lemma_3_1_bound_golden,),
    ),
    Mutant(
        "Lemma 3.2 (per layer): exponent L -> L - 1",
        "lemma_3_2_per_layer_bound",
        lambda f: lambda cfg: f(cfg) / (1.0 + bounds.z_max(cfg)),
        (),
        tests=(parts.test_lemma_3_2_per_layer_bound_golden,),
    ),
    Mutant(
        "Thm 4.5: bound N^e halved",
        "theorem_bound",
        halved,
        (),
        module=zero_sensitivity,
        tests=(parts.test_theorem_4_5_bound_golden,),
    ),
    Mutant(
        "trivial output-swing bound halved",
        "output_swing_bound",
        halved,
        (),
        module=trivial,
        tests=(attained.test_output_swing_bound_is_attained,),
    ),
    Mutant(
        "trivial |T| bound halved",
        "output_abs_bound",
        halved,
        (),
        module=trivial,
        tests=(attained.test_output_abs_bound_is_attained,),
    ),
    Mutant(
        "trivial readout-swing bound halved",
        "readout_swing_bound",
        halved,
        (),
        module=trivial,
        tests=(attained.test_readout_swing_bound_is_attained,),
    ),
    Mutant(
        "trivial H&R Cor 5 bound (swing x as_N) halved",
        "sensitivity_swing_bound",
        halved,
        (),
        module=trivial,
        tests=(attained.test_sensitivity_swing_bound_is_attained,),
    ),
    Mutant(
        "trivial count of functions 2^(2^N) -> 2^N",
        "log10_all_functions",
        lambda f: lambda n: n * math.log10(2.0),
        (),
        module=trivial,
        tests=(attained.test_number_of_functions_is_attained_by_enumeration,),
    ),
]


def holds_when_ok(f: Callable) -> Callable:
    """The policy that counts every row within its bound as holding (vacuous and definitional
    rows included): the over-claim issue 26 removed."""

    def weak(pol, rows, unsettled=()):
        status = f(pol, rows, unsettled)
        return _Status.HOLDS if status in (_Status.VACUOUS, _Status.DEFINITIONAL) else status

    return weak


# statement-level mutants (issue 26): a bound a statement's own check must catch
MUTANTS += [
    Mutant(
        "H&R Thm 6: chi-square probability halved",
        "noise_variance_probability",
        halved,
        ("H&R Thm 6",),
        module=hr,
    ),
    Mutant("H&R Cor 5: bound halved", "cor_5_bound", halved, ("H&R Cor 5",), module=hr),
    Mutant(
        "Lemma 4.2: (SB) probability bound halved",
        "variance_small_ball_bound",
        halved,
        ("Lemma 4.2",),
        module=small_ball,
    ),
    Mutant(
        "Lemma 3.2 tightness: computed lower bound on beta doubled",
        "beta_lower_bound",
        doubled,
        ("Lemma 3.2",),
        module=lemma_3_2_module,
    ),
    Mutant(
        "policy: vacuous and definitional counted as holds",
        "decide_status",
        holds_when_ok,
        (),
        module=registry_package,
        tests=(registry_tests.test_definitional_rows_never_count_as_holds,),
    ),
]


def run_killing_tests(tests: tuple[Callable[[], None], ...]) -> tuple[str | None, list[str]]:
    """Run ``tests`` under the mutant: (the first one that fails, what ran)."""
    ran = []
    for t in tests:
        try:
            t()
        except AssertionError as exc:
            ran.append(f"{t.__name__} -> fails")
            return f"test {t.__name__} ({str(exc).splitlines()[0][:80]})", ran
        ran.append(f"{t.__name__} -> passes")
    return None, ran


def run_until_violated(statements: tuple[str, ...]) -> tuple[str | None, float, list[str]]:
    """Run the quick-budget checks of ``statements`` (FIRST ones first) until one reports
    VIOLATED: (killer "statement: check" or None, its worst ratio, the checks run)."""
    ran = []
    for sid in statements:
        stmt = get_statement(sid)
        checks = [c for c in stmt.checks if not c.slow and c.finding is None]
        checks.sort(key=lambda c: not c.name.startswith(FIRST))
        for check in checks:
            result = check.run(CheckContext(budget="quick", seed=0), stmt)
            ran.append(f"{sid}: {check.name} -> {result.status.value}")
            if result.status is Status.VIOLATED:
                worst = max((r.ratio for r in result.rows if not r.ok), default=math.nan)
                return f"{sid}: {check.name}", worst, ran
    return None, math.nan, ran


def _param(m: Mutant):
    marks = []
    if m.survives:
        marks.append(pytest.mark.xfail(strict=True, reason=f"surviving mutant: {m.survives}"))
    return pytest.param(m, id=m.name, marks=marks)


@pytest.fixture
def scratch_counterexamples(tmp_path, monkeypatch):
    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    return tmp_path


@pytest.mark.parametrize("mutant", [_param(m) for m in MUTANTS])
def test_mutant_is_killed(mutant: Mutant, monkeypatch, scratch_counterexamples) -> None:
    original = getattr(mutant.module, mutant.target)
    monkeypatch.setattr(mutant.module, mutant.target, mutant.weaken(original))
    killer, ran = run_killing_tests(mutant.tests)
    ratio = math.nan
    if killer is None:
        killer, ratio, more = run_until_violated(mutant.statements)
        ran += more
    if killer:
        worst = "" if math.isnan(ratio) else f" (worst ratio {ratio:.4g})"
        print(f"\n[mutation] KILLED {mutant.name}: by {killer}{worst}")
    else:
        print(f"\n[mutation] SURVIVED {mutant.name}: " + "; ".join(ran))
    assert killer is not None, f"{mutant.name} survived every check: " + "; ".join(ran)


def test_unmutated_constants_hold(scratch_counterexamples) -> None:
    """The killing checks, unmutated: none reports a violation (the true constants hold; the
    theorem suite runs every other check)."""
    for m in MUTANTS:
        for t in m.tests:
            t()  # the killing tests pass unmutated
    statements = sorted({s for m in MUTANTS for s in m.statements})
    for sid in statements:
        stmt = get_statement(sid)
        for check in stmt.checks:
            if check.slow or check.finding is not None or not check.name.startswith(FIRST):
                continue
            result = check.run(CheckContext(budget="quick", seed=0), stmt)
            assert result.status is not Status.VIOLATED, result.summary()
    assert not list(scratch_counterexamples.iterdir())
