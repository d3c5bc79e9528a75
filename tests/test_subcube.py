"""Sub-cube certification (issue 29, ``verify.model.subcube``): every string's T lies in its
sub-cube's enclosure (Hypothesis, ordinary and adversarial parameters, eps = 0 included), the
labels equal the per-string table's, adversarial cases stay open, a constant model takes one
bound, and mutants of the enclosure rules (a shrunk hull, a dropped remainder term) are caught
by the containment check."""

from __future__ import annotations

import types
from collections.abc import Iterator

import _radius_mutants as mutants
import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.boolean.function import all_bit_strings
from verify.checks.exact_constructions import dictator_params, majority_params
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.affine import AffineContext
from verify.model.arith import Float64Context, MidRadContext, arb_precision
from verify.model.enclosure import enclose_output
from verify.model.reference import run_generic
from verify.model.subcube import certify_subcubes, subcube_T
from verify.model.truth_table import LABEL_UNCERTAIN, TIER_SUBCUBE, truth_table
from verify.strategies import adversarial_params, configs, params

N_BITS = 3
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _members(bits: np.ndarray, free: np.ndarray) -> np.ndarray:
    """The strings of the sub-cube (bits fixed where free is False)."""
    n = bits.size
    every = all_bit_strings(n)
    keep = np.all((every == bits[None, :]) | free[None, :], axis=1)
    return every[keep]


def _outside(params: Params, bits: np.ndarray, free: np.ndarray, mid: float, rad: float) -> int:
    """How many strings of the sub-cube have an exact T not proven inside [mid - rad, mid + rad]
    (arb at rising precision; a string whose arb ball never fits counts: with a finite radius
    an undefined T, eps = 0 and a variance 0, is a failure too). 0 when rad is not finite."""
    if not np.isfinite(rad) or not np.isfinite(mid):
        return 0
    lo, hi = np.nextafter(mid - rad, -np.inf), np.nextafter(mid + rad, np.inf)
    todo = _members(bits, free)
    for prec in (128, 512, 2048):
        balls = enclose_output(params, todo, prec=prec)
        with arb_precision(prec):
            fits = np.array([bool(arb(lo) <= t) and bool(t <= arb(hi)) for t in balls])
            out = np.array([bool(t < arb(lo)) or bool(t > arb(hi)) for t in balls])
        if np.any(out):
            return int(np.count_nonzero(out))
        todo = todo[~fits]
        if todo.size == 0:
            return 0
    return len(todo)


def _enclosures(ctx: object, params: Params, bits: np.ndarray, free: np.ndarray) -> tuple:
    res = run_generic(ctx, params, bits[None, :], readout_only=True, free=free[None, :])
    t = res.T
    rad = t.spread if hasattr(t, "spread") else t.rad
    return float(t.mid[0]), float(np.asarray(rad).reshape(-1)[0])


@st.composite
def cubes(draw: object, n: int = N_BITS) -> tuple[np.ndarray, np.ndarray]:
    bits = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.uint8)
    free = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return bits, free


@SETTINGS
@given(p=params(configs(eps=(0.0, 1e-5, 1e-2))), cube=cubes())
def test_every_string_lies_in_its_subcube_enclosure(p: Params, cube: tuple) -> None:
    bits, free = cube
    for ctx in (AffineContext(), MidRadContext()):
        mid, rad = _enclosures(ctx, p, bits, free)
        assert _outside(p, bits, free, mid, rad) == 0, (ctx.name, mid, rad)


@SETTINGS
@given(p=adversarial_params(n_bits=N_BITS), cube=cubes())
def test_adversarial_strings_lie_in_their_subcube_enclosure(p: Params, cube: tuple) -> None:
    bits, free = cube
    mid, rad = _enclosures(AffineContext(), p, bits, free)
    assert _outside(p, bits, free, mid, rad) == 0, (mid, rad)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=adversarial_params(n_bits=N_BITS), margin=st.sampled_from([0.0, 0.0, 0.25]))
def test_subcube_labels_equal_the_per_string_table(p: Params, margin: float) -> None:
    sub = certify_subcubes(p, N_BITS, margin, cap=1 << N_BITS)  # down to single strings
    plain = truth_table(p, N_BITS, margin, subcube=False)
    with_sub = truth_table(p, N_BITS, margin, subcube=True)
    settled = sub.label != LABEL_UNCERTAIN
    both = settled & plain.certified
    np.testing.assert_array_equal(sub.label[both], plain.label[both])
    # where the per-string tiers settle a string, the table is theirs (same label)
    np.testing.assert_array_equal(with_sub.label[plain.certified], plain.label[plain.certified])
    assert np.all(with_sub.certified[plain.certified])
    assert np.all(with_sub.certified[settled])


def _constant_model(bias: float) -> Params:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=2, ln_eps=1e-5)  # every T defined
    p = init_params(cfg, "xavier_uniform", 3)
    arrays = dict(p.items())
    arrays["readout.weight"] = np.zeros(cfg.d_model)
    arrays["readout.bias"] = np.array(bias)
    return Params(cfg, arrays)


def test_a_constant_model_is_settled_by_one_bound() -> None:
    p = _constant_model(0.5)
    sub = certify_subcubes(p, 12)
    assert sub.n_bounds == 1 and sub.n_settled == 1 << 12 and np.all(sub.label == 1)
    tt = truth_table(p, 12, subcube=True)
    assert tt.tier_counts["subcube"] == 1 << 12 and np.all(tt.label == 1)
    assert tt.n_float64 == 1 << 12 and np.all(np.isnan(tt.T))  # no per-string value computed
    assert np.all(tt.tier == TIER_SUBCUBE)


@pytest.mark.parametrize("i", [1, 3])
def test_first_and_dictator_are_settled_by_three_bounds(i: int) -> None:
    """The exact eps = 0 DICTATOR_i construction (FIRST: i = 1): the cube is open, bit i ranks
    first, and its two halves settle every string (3 bounds at N = 12 and 16)."""
    p = dictator_params(i, max_len=16)
    for n in (12, 16):
        sub = certify_subcubes(p, n)
        assert sub.n_bounds == 3 and sub.order == (i - 1,)
        x_i = (np.arange(1 << n) >> (i - 1)) & 1
        np.testing.assert_array_equal(sub.label, x_i)
    plain = truth_table(p, 12)
    tt = truth_table(p, 12, subcube=True)
    np.testing.assert_array_equal(tt.label, plain.label)
    assert tt.tier_counts["subcube"] == 1 << 12


def test_a_balanced_function_gains_nothing() -> None:
    sub = certify_subcubes(majority_params(), 5)
    assert sub.n_settled == 0 and sub.n_bounds == 3  # the cube, one level, stop


def test_near_threshold_and_zero_variance_stay_open() -> None:
    tiny = _constant_model(5e-324)  # T = the smallest subnormal > 0: ball crosses 0
    sub = certify_subcubes(tiny, 4)
    assert sub.n_settled == 0
    tt = truth_table(tiny, 4, subcube=True)
    assert np.all(tt.label == 1) and not np.any(tt.tier == TIER_SUBCUBE)  # arb settles it
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=2, ln_eps=0.0, pos_encoding="none")
    p = init_params(cfg, "uniform", 0)
    arrays = {k: np.zeros_like(v) for k, v in p.items()}  # every norm input 0: T undefined
    arrays["readout.bias"] = np.array(1.0)
    flat = Params(cfg, arrays)
    sub = certify_subcubes(flat, 3)
    assert sub.n_settled == 0  # open, never guessed
    assert truth_table(flat, 3, subcube=True).n_uncertain == truth_table(flat, 3).n_uncertain == 8


def test_free_needs_a_ball_context_and_a_matching_mask() -> None:
    p = _constant_model(1.0)
    bits = np.zeros((1, 3), dtype=np.uint8)
    with pytest.raises(ValidationError, match="free"):
        run_generic(Float64Context(), p, bits, free=np.ones((1, 3), dtype=bool))
    with pytest.raises(ValidationError, match="free"):
        run_generic(MidRadContext(), p, bits, free=np.ones((1, 2), dtype=bool))
    with pytest.raises(ValidationError, match="subcube"):
        truth_table(p, 3, subcube="yes")


def test_subcube_T_weights_rank_the_influential_bit() -> None:
    p = init_params(ModelConfig(d_model=4, n_layers=1, n_heads=2, ln_eps=1e-5), "xavier_uniform", 0)
    bits = np.zeros((1, 4), dtype=np.uint8)
    free = np.array([[True, False, True, True]])
    mid, rad, weights = subcube_T(p, bits, free)
    assert weights.shape == (1, 4) and weights[0, 1] == 0.0 and rad[0] >= weights[0].sum()


# ------------------------------------------------------------------------------- mutations
AFFINE_MUTANTS = {
    "hull_half": ("gen[k, sel, k] = half", "gen[k, sel, k] = 0.5 * half"),
    "mul_quadratic_dropped": ("rest = sa * sb + am * o.rad", "rest = am * o.rad"),
    "exp_remainder_dropped": ("rest = rest + big * (x.rad + rho)", "rest = rest + big * x.rad"),
    "rsqrt_curvature_dropped": ("* cube * x.rad + curv", "* cube * x.rad"),
}
MIDRAD_MUTANT = (
    "rad = np.maximum(np.abs(a.mid - mid) + a.rad, np.abs(b.mid - mid) + b.rad)",
    "rad = 0.5 * np.maximum(np.abs(a.mid - mid) + a.rad, np.abs(b.mid - mid) + b.rad)",
)


def _mutated(module_name: str, old: str, new: str) -> types.ModuleType:
    """A copy of the module with one source edit (the original module is left alone)."""
    import importlib

    mod = types.ModuleType(module_name + "_mutant")
    mod.__file__ = importlib.import_module(module_name).__file__
    exec(compile(mutants.edit_source(module_name, old, new), mod.__file__, "exec"), mod.__dict__)
    return mod


def _kill_cases() -> Iterator[tuple[Params, np.ndarray, np.ndarray]]:
    """Fixed models and sub-cubes (seeded) on which the containment check is run."""
    for scheme, layers, eps, seed in (
        ("xavier_uniform", 1, 1e-5, 0), ("uniform", 1, 1e-2, 1), ("xavier_uniform", 2, 1e-5, 2),
        ("gaussian", 1, 1e-5, 3), ("uniform", 2, 1e-2, 4),
    ):  # fmt: skip
        cfg = ModelConfig(d_model=4, n_layers=layers, n_heads=2, ln_eps=eps)
        p = init_params(cfg, scheme, seed, scale=0.5)
        for free in ([True, True, True], [True, False, False], [False, True, True]):
            yield p, np.zeros(N_BITS, dtype=np.uint8), np.array(free)
    # sharper attention (query and key rows x 3, as the "saturated" adversarial kind): the
    # exp remainder matters here while the rest of the enclosure is tight
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=1e-2)
    arrays = dict(init_params(cfg, "xavier_uniform", 1).items())
    arrays["layers.0.self_attn.in_proj_weight"] = arrays["layers.0.self_attn.in_proj_weight"] * 1.0
    arrays["layers.0.self_attn.in_proj_weight"][:8] *= 3.0
    yield Params(cfg, arrays), np.zeros(N_BITS, dtype=np.uint8), np.array([True, True, True])
    # a smaller token difference (row 1 pulled 70% towards row 0): the variance's square term
    # matters at the corners
    arrays = dict(init_params(cfg, "xavier_uniform", 0).items())
    te = arrays["token_embedding"].copy()
    te[1] = te[0] + 0.3 * (te[1] - te[0])
    arrays["token_embedding"] = te
    cfg2 = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=1e-2)
    yield Params(cfg2, arrays), np.zeros(N_BITS, dtype=np.uint8), np.array([False, False, True])


def _violations(make_ctx: object) -> int:
    total = 0
    for p, bits, free in _kill_cases():
        mid, rad = _enclosures(make_ctx(), p, bits, free)
        total += _outside(p, bits, free, mid, rad)
    return total


def test_the_kill_cases_pass_unmutated() -> None:
    assert _violations(AffineContext) == 0
    assert _violations(MidRadContext) == 0


@pytest.mark.parametrize("name", ["exp_remainder_dropped", "hull_half", "mul_quadratic_dropped"])
def test_an_affine_mutant_is_caught(name: str) -> None:
    """On whole models (the rsqrt curvature mutant survives there, the enclosure being loose
    enough elsewhere: the op-level test below kills it)."""
    mod = _mutated("verify.model.affine", *AFFINE_MUTANTS[name])
    assert _violations(mod.AffineContext) > 0, f"mutant {name} survived the containment check"


# op-level containment: each nonlinear step on one- and two-symbol forms, checked exactly
# (mpmath, 80 digits) at a grid of symbol values: |f(x(e)) - (mid + gen . e)| <= rad + the
# fresh symbols' |gen| (they hold the step's remainder)
_GRID = np.linspace(-1.0, 1.0, 9)


def _op_failures(affine_mod: types.ModuleType, op: str) -> int:
    ctx = affine_mod.AffineContext()
    cases = [(1.3, 0.5), (0.2, 0.1), (-0.7, 0.4), (4.0, 2.5), (0.05, 0.2), (-2.0, 0.5), (1.0, 0.02)]
    bad = 0
    with mpmath.workdps(80), ctx.active():
        for m, g in cases:
            if op in ("rsqrt", "reciprocal") and abs(m) <= 1.5 * g:  # not away from 0
                continue
            x = affine_mod.Affine(np.array([m]), np.array([[g], [0.5 * g]]), np.array([0.0]))
            ctx.n_symbols = 2
            y = {
                "exp": lambda v: ctx.exp(v),
                "rsqrt": lambda v: ctx.rsqrt(v),
                "reciprocal": lambda v: v.reciprocal(),
                "relu": lambda v: ctx.relu(v),
                "square": lambda v: v * v,
            }[op](x)
            f = {
                "exp": mpmath.exp, "rsqrt": lambda v: 1 / mpmath.sqrt(v),
                "reciprocal": lambda v: 1 / v, "relu": lambda v: max(v, 0),
                "square": lambda v: v * v,
            }[op]  # fmt: skip
            extra = mpmath.mpf(float(y.rad[0]))
            if y.gen is not None and y.gen.shape[0] > 2:
                extra += sum(abs(mpmath.mpf(float(v))) for v in y.gen[2:, 0])
            for e1 in _GRID:
                for e2 in (-1.0, 1.0):
                    xv = mpmath.mpf(m) + mpmath.mpf(g) * mpmath.mpf(e1)
                    xv += mpmath.mpf(0.5 * g) * mpmath.mpf(e2)
                    lin = mpmath.mpf(float(y.mid[0]))
                    if y.gen is not None:
                        lin += mpmath.mpf(float(y.gen[0, 0])) * mpmath.mpf(e1)
                        lin += mpmath.mpf(float(y.gen[1, 0])) * mpmath.mpf(e2)
                    bad += abs(f(xv) - lin) > extra
    return bad


@pytest.mark.parametrize("op", ["exp", "rsqrt", "reciprocal", "relu", "square"])
def test_each_nonlinear_step_contains_the_exact_values(op: str) -> None:
    import verify.model.affine as affine_mod

    assert _op_failures(affine_mod, op) == 0


def test_op_mutants_are_caught() -> None:
    for name, op in (("rsqrt_curvature_dropped", "rsqrt"), ("exp_remainder_dropped", "exp"),
                     ("mul_quadratic_dropped", "square")):  # fmt: skip
        assert _op_failures(_mutated("verify.model.affine", *AFFINE_MUTANTS[name]), op) > 0, name


def test_midrad_hull_holds_both_rows_exactly() -> None:
    """The hull's radius covers |row_t - mid| + r_t exactly (rational arithmetic), and the
    halved-radius mutant fails the same check."""
    from fractions import Fraction

    import verify.model.arith as arith

    rng = np.random.default_rng(5)
    a = arith.MidRad(rng.normal(size=64) * 10.0 ** rng.integers(-8, 8, 64), rng.random(64) * 1e-3)
    b = arith.MidRad(rng.normal(size=64), np.zeros(64))

    def holds(mod: types.ModuleType) -> bool:
        h = mod.MidRadContext().hull(mod.MidRad(a.mid, a.rad), mod.MidRad(b.mid, b.rad))
        return all(
            abs(Fraction(x.mid[i]) - Fraction(h.mid[i])) + Fraction(x.rad[i]) <= Fraction(h.rad[i])
            for x in (a, b) for i in range(64)
        )  # fmt: skip

    assert holds(arith)
    assert not holds(_mutated("verify.model.arith", *MIDRAD_MUTANT))


def test_deep_levels_paint_the_right_strings() -> None:
    """A random model at N = 6 explored down to single strings: every settled string's label
    equals the per-string table's (the code -> string painting of levels >= 2)."""
    cfg = ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=0.0)
    p = init_params(cfg, "xavier_uniform", 3)  # settled at levels 2 and 3 (15 bounds)
    sub = certify_subcubes(p, 6, cap=1 << 6)
    plain = truth_table(p, 6)
    settled = sub.label != LABEL_UNCERTAIN
    assert sub.depth >= 2 and np.count_nonzero(settled) > 0
    np.testing.assert_array_equal(sub.label[settled], plain.label[settled])
