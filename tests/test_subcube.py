"""Sub-cube certification (issue 29, ``verify.model.subcube.subcube_pass``): every string's T lies
in its sub-cube's enclosure (Hypothesis, ordinary and adversarial parameters, eps = 0 included), the
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
from verify.model.arithmetic.contexts import Float64Context, MidRadContext, arb_precision
from verify.model.certified.truth_table import LABEL_UNCERTAIN, TIER_SUBCUBE, truth_table
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import run_generic
from verify.model.subcube.affine import AffineContext
from verify.model.subcube.subcube_pass import certify_subcubes, subcube_T
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


@pytest.mark.tier_count
def test_a_constant_model_is_settled_by_one_bound() -> None:
    p = _constant_model(0.5)
    sub = certify_subcubes(p, 12)
    assert sub.n_bounds == 1 and sub.n_settled == 1 << 12 and np.all(sub.label == 1)
    tt = truth_table(p, 12, subcube=True)
    assert tt.tier_counts["subcube"] == 1 << 12 and np.all(tt.label == 1)
    assert tt.n_float64 == 1 << 12 and np.all(np.isnan(tt.T))  # no per-string value computed
    assert np.all(tt.tier == TIER_SUBCUBE)


@pytest.mark.tier_count
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
    assert sub.n_settled == 0 and sub.n_bounds <= 3  # the cube (and one level), stop


def test_probes_skip_the_bounds_of_mixed_subcubes() -> None:
    """Random xavier models at N = 12 (D = 16, L = 1, eps = 0). Seed 12 computes a non-constant
    function: the cube is open and the probes find both labels in every sub-cube of levels
    1-4, so only the cube's bound is computed (31 bounds before the probes). Seed 8: the probes
    skip 11 of 71 bounds and the rest still settle every string, as the per-string table."""
    cfg = ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=0.0)
    mixed = certify_subcubes(init_params(cfg, "xavier_normal", 12), 12, cap=16)
    assert mixed.n_settled == 0 and mixed.n_bounds == 1 and mixed.depth == 4
    p = init_params(cfg, "xavier_normal", 8)
    sub = certify_subcubes(p, 12, cap=16)
    assert sub.n_settled == 1 << 12 and sub.n_bounds == 60
    np.testing.assert_array_equal(sub.label, truth_table(p, 12).label)


def test_the_probe_rule_needs_two_certified_different_labels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The decision table of the probes, with their balls given: hopeless only when both
    labels are certified and differ (1 and 0; 1 and undecided under a margin); a ball that
    crosses a boundary (uncertain) or equal labels decide nothing."""
    import types as pytypes

    import verify.model.subcube.subcube_pass as subcube
    from verify.model.arithmetic.contexts import MidRad

    mids = np.array([1.0, -1.0, 1.0, 0.0, 1.0, 1.0, 0.1, 1.0])
    rads = np.array([0.1, 0.1, 0.1, 0.5, 0.1, 0.1, 0.05, 0.1])
    monkeypatch.setattr(
        subcube, "run_generic", lambda *a, **k: pytypes.SimpleNamespace(T=MidRad(mids, rads))
    )
    codes = np.arange(4, dtype=np.int64)
    params = pytypes.SimpleNamespace(
        config=pytypes.SimpleNamespace(threshold=0.0)
    )  # the label rule
    skip = subcube._hopeless(params, 4, 0.0, (0, 1), codes, np.ones(4))
    np.testing.assert_array_equal(skip, [True, False, False, False])  # 1|0, 1|?, 1|1, 1|1
    skip = subcube._hopeless(params, 4, 0.5, (0, 1), codes, np.ones(4))
    np.testing.assert_array_equal(skip, [True, False, False, True])  # 1|0, 1|?, 1|1, -1|1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=adversarial_params(n_bits=5),
    level=st.integers(1, 3),
    margin=st.sampled_from([0.0, 0.25]),
    seed=st.integers(0, 2**16),
)
def test_a_probed_hopeless_subcube_has_no_single_label(
    p: Params, level: int, margin: float, seed: int
) -> None:
    """Every sub-cube the probes call hopeless holds two strings of different certified labels
    in the per-string table (over all its strings): the probes lie inside their sub-cube and
    their balls prove their labels."""
    from verify.model.subcube.subcube_pass import _cubes, _hopeless

    n = 5
    rng = np.random.default_rng(seed)
    order = tuple(int(i) for i in rng.permutation(n)[:level])
    direction = rng.standard_normal(n)
    codes = np.arange(1 << level, dtype=np.int64)
    skip = _hopeless(p, n, margin, order, codes, direction)
    table = truth_table(p, n, margin)
    for code in np.flatnonzero(skip):
        bits, free = _cubes(n, order, codes[code : code + 1])
        labels = table.label[_members(bits[0], free[0]) @ (1 << np.arange(n))]
        assert len(set(labels[labels != LABEL_UNCERTAIN].tolist())) > 1, (order, code)


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
    mid, rad, gens = subcube_T(p, bits, free)
    assert gens.shape == (1, 4) and gens[0, 1] == 0.0 and rad[0] >= np.abs(gens[0]).sum()


# ------------------------------------------------------------------------------- mutations
AFFINE_MUTANTS = {
    "hull_half": ("gen[k, sel, k] = half", "gen[k, sel, k] = 0.5 * half"),
    "mul_quadratic_dropped": ("rest = quad_rest + am * o.rad", "rest = am * o.rad"),
    "mul_offdiag_dropped": (
        "quad_rest = np.maximum(up(sa * sb, 2) - quad[1], 0.0)",
        "quad_rest = 0.0",
    ),
    "matmul_offdiag_dropped": (
        "rest = rest + np.maximum(up(sx @ sw, n + 2) - quad[1], 0.0) + diag_err",
        "rest = rest + diag_err",
    ),
    "square_lower_unclamped": (
        "q_lo = np.maximum(2 * d_lo - q_hi, 0.0) * (1 - 2 * U)",
        "q_lo = 2 * d_lo * (1 - 2 * U)",
    ),
    "square_range_half": (
        "quad_rest = up(0.5 * (q_hi - q_lo), 2) + 2 * U * q_hi",
        "quad_rest = up(0.25 * (q_hi - q_lo), 2) + 2 * U * q_hi",
    ),
    "readout_ln_bias_dropped": (
        "bias = self.matmul(ln_affine[1][None, :], w)[0, 0] + bias",
        "bias = bias + 0.0",
    ),
    "readout_ln_gain_dropped": ("w = ln_affine[0][:, None] * w", "w = w + 0.0"),
    "exp_remainder_dropped": ("rest = rest + big * (x.rad + rho)", "rest = rest + big * x.rad"),
    "rsqrt_curvature_dropped": ("* cube * x.rad + curv", "* cube * x.rad"),
}
# edits of verify.model.subcube.affine_split (the split on the dominant bit and the chord
# relaxations)
SPLIT_MUTANTS = {
    "split_cross_dropped": ("+ ad * wmax + ac * (rad", "+ ac * (rad"),
    "split_rest_half": ("rest = np.maximum(rp, rm) +", "rest = 0.5 * np.maximum(rp, rm) +"),
    "chord_band_half": ("rho = 0.5 * (g_max - g_min) +", "rho = 0.25 * (g_max - g_min) +"),
    "relu_band_dropped": ("up(0.5 * top + 2 * U", "up(2 * U"),
    "attend_den_range_from_upper": (
        "lo = (np.exp(s_lo) * (1 - EXP_ULPS * U))",
        "lo = (np.exp(s_hi) * (1 - EXP_ULPS * U))",
    ),
    "attend_hull_half": (
        "return centre, up(0.5 * (hi - lo), 2)",
        "return centre, up(0.25 * (hi - lo), 2)",
    ),
    "fresh_symbols_as_bits": (
        "k = min(nb, ga.shape[0], gb.shape[0])",
        "k = min(ga.shape[0], gb.shape[0])",
    ),
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


def _split_mutated(name: str) -> types.ModuleType:
    """verify.model.subcube.affine with the split functions of an edited
    verify.model.subcube.affine_split (the copy looks them up in its own namespace at call time)."""
    split = _mutated("verify.model.subcube.affine_split", *SPLIT_MUTANTS[name])
    mod = _mutated("verify.model.subcube.affine", "MAX_SYMBOLS = 1024", "MAX_SYMBOLS = 1024 + 0")
    for name, value in vars(split).items():  # every function affine took from the module
        if callable(value) and getattr(value, "__module__", None) == split.__name__:
            if name in vars(mod):
                setattr(mod, name, value)
    return mod


def _any_mutated(name: str) -> types.ModuleType:
    """verify.model.subcube.affine with the mutant ``name`` of either table."""
    if name in SPLIT_MUTANTS:
        return _split_mutated(name)
    return _mutated("verify.model.subcube.affine", *AFFINE_MUTANTS[name])


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
    mod = _mutated("verify.model.subcube.affine", *AFFINE_MUTANTS[name])
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
    import verify.model.subcube.affine as affine_mod

    assert _op_failures(affine_mod, op) == 0


def test_op_mutants_are_caught() -> None:
    for name, op in (("rsqrt_curvature_dropped", "rsqrt"), ("exp_remainder_dropped", "exp"),
                     ("mul_quadratic_dropped", "square")):  # fmt: skip
        assert (
            _op_failures(_mutated("verify.model.subcube.affine", *AFFINE_MUTANTS[name]), op) > 0
        ), name


# op-level containment at the vertices: symbols 0 and 1 are bits (+-1 at every string, where
# the split on the dominant bit and the e_k^2 = 1 diagonal apply), symbol 2 an earlier step's
# remainder (any value in [-1, 1]); checked exactly (mpmath) at e0, e1 = +-1 and a grid of e2
_VERTEX_CASES = [(1.3, 0.5), (0.2, 0.1), (-0.7, 0.4), (4.0, 2.5), (0.05, 0.2), (-2.0, 0.5),
                 (1.0, 0.02), (3.0, 1.2)]  # fmt: skip
_VERTEX_OPS = {  # step(ctx, x, y, z) and its exact value at (x, y, z)
    "exp": (lambda ctx, x, y, z: ctx.exp(x), lambda v, w, u: mpmath.exp(v)),
    "rsqrt": (lambda ctx, x, y, z: ctx.rsqrt(x), lambda v, w, u: 1 / mpmath.sqrt(v)),
    "reciprocal": (lambda ctx, x, y, z: x.reciprocal(), lambda v, w, u: 1 / v),
    "relu": (lambda ctx, x, y, z: ctx.relu(x), lambda v, w, u: max(v, 0)),
    "square": (lambda ctx, x, y, z: x * x, lambda v, w, u: v * v),
    "product": (lambda ctx, x, y, z: x * y, lambda v, w, u: v * w),
    "matmul": (
        lambda ctx, x, y, z: ctx.matmul(x.reshape(1, 1), y.reshape(1, 1)),
        lambda v, w, u: v * w,
    ),
    # z is mostly the remainder symbol: e2^2 is not 1 there
    "square_of_remainder": (lambda ctx, x, y, z: z * z, lambda v, w, u: u * u),
    "matmul_of_remainder": (
        lambda ctx, x, y, z: ctx.matmul(z.reshape(1, 1), z.reshape(1, 1)),
        lambda v, w, u: u * u,
    ),
}


def _vertex_op_failures(affine_mod: types.ModuleType, op: str) -> int:
    step, exact = _VERTEX_OPS[op]
    ctx = affine_mod.AffineContext()
    bad = 0
    with mpmath.workdps(80), ctx.active():
        for m, g in _VERTEX_CASES:
            if op in ("rsqrt", "reciprocal") and abs(m) <= 1.2 * g:  # the split may still work
                continue
            ctx.n_symbols, ctx.n_bits = 3, 2
            gens = (
                np.array([g, 0.4 * g, 0.3 * g]),
                np.array([-0.5 * g, 0.9 * g, 0.6 * g]),
                np.array([0.02 * g, 0.0, g]),
            )
            mids = (m, 0.5 - m, 0.3 * m)
            forms = [
                affine_mod.Affine(np.array([mi]), gi[:, None], np.array([0.0]))
                for mi, gi in zip(mids, gens, strict=True)
            ]
            out = step(ctx, *forms)
            gen = None if out.gen is None else out.gen.reshape(out.gen.shape[0], -1)[:, 0]
            extra = mpmath.mpf(float(np.ravel(out.rad)[0]))
            if gen is not None and gen.size > 3:
                extra += sum(abs(mpmath.mpf(float(v))) for v in gen[3:])
            for e0 in (-1.0, 1.0):
                for e1 in (-1.0, 1.0):
                    for e2 in _GRID:
                        e = [mpmath.mpf(e0), mpmath.mpf(e1), mpmath.mpf(e2)]
                        vals = [
                            mpmath.mpf(mi) + sum(mpmath.mpf(float(gi[i])) * e[i] for i in range(3))
                            for mi, gi in zip(mids, gens, strict=True)
                        ]
                        lin = mpmath.mpf(float(np.ravel(out.mid)[0]))
                        for g, ei in zip([] if gen is None else gen[:3], e, strict=False):
                            lin += mpmath.mpf(float(g)) * ei
                        bad += abs(exact(*vals) - lin) > extra
    return bad


@pytest.mark.parametrize("op", sorted(_VERTEX_OPS))
def test_each_step_contains_the_exact_values_at_the_vertices(op: str) -> None:
    import verify.model.subcube.affine as affine_mod

    assert _vertex_op_failures(affine_mod, op) == 0


@pytest.mark.parametrize(
    ("name", "ops"),
    [("mul_offdiag_dropped", ("product",)), ("matmul_offdiag_dropped", ("matmul",)),
     ("square_lower_unclamped", ("square",)), ("square_range_half", ("square",)),
     ("fresh_symbols_as_bits", ("square_of_remainder", "matmul_of_remainder"))],
)  # fmt: skip
def test_vertex_product_mutants_are_caught(name: str, ops: tuple[str, ...]) -> None:
    mod = _any_mutated(name)
    for op in ops:
        assert _vertex_op_failures(mod, op) > 0, (name, op)


@pytest.mark.parametrize(
    "name",
    sorted(
        set(SPLIT_MUTANTS)
        - {"fresh_symbols_as_bits", "attend_den_range_from_upper", "attend_hull_half"}
    ),
)
def test_split_mutants_are_caught(name: str) -> None:
    """Each edit of the split or of a chord relaxation fails the vertex check of some step."""
    mod = _split_mutated(name)
    fails = {op: _vertex_op_failures(mod, op) for op in ("exp", "rsqrt", "reciprocal", "relu")}
    assert sum(fails.values()) > 0, (name, fails)


def test_midrad_hull_holds_both_rows_exactly() -> None:
    """The hull's radius covers |row_t - mid| + r_t exactly (rational arithmetic), and the
    halved-radius mutant fails the same check."""
    from fractions import Fraction

    import verify.model.arithmetic.contexts as arith

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
    assert not holds(_mutated("verify.model.arithmetic.contexts", *MIDRAD_MUTANT))


@pytest.mark.parametrize(
    ("scheme", "eps", "seed"), [("uniform", 0.0, 8), ("gaussian", 1e-5, 4)]
)  # settled at levels up to 4 (9 bounds) and 3 (15 bounds)
def test_deep_levels_paint_the_right_strings(scheme: str, eps: float, seed: int) -> None:
    """A random model at N = 6 explored down to single strings: every settled string's label
    equals the per-string table's (the code -> string painting of levels >= 2)."""
    cfg = ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=eps)
    p = init_params(cfg, scheme, seed)
    sub = certify_subcubes(p, 6, cap=1 << 6)
    plain = truth_table(p, 6)
    settled = sub.label != LABEL_UNCERTAIN
    assert sub.depth >= 2 and np.count_nonzero(settled) > 0
    np.testing.assert_array_equal(sub.label[settled], plain.label[settled])


def test_one_free_bit_is_exact_at_the_vertices() -> None:
    """A sub-cube with one free bit encloses its two strings' T within rounding: the split on
    the dominant bit and e_k^2 = 1 leave no linearisation remainder (before them the whole
    gap between the two token rows went through each nonlinear step's curvature)."""
    for layers in (1, 2):
        cfg = ModelConfig(d_model=16, n_layers=layers, n_heads=2, ln_eps=0.0)
        p = init_params(cfg, "xavier_uniform", 0)
        bits = np.zeros((1, 8), dtype=np.uint8)
        free = np.zeros((1, 8), dtype=bool)
        free[0, 3] = True
        mid, rad, _ = subcube_T(p, bits, free)
        pair = np.zeros((2, 8), dtype=np.uint8)
        pair[1, 3] = 1
        exact = run_generic(Float64Context(), p, pair, readout_only=True).T
        half = abs(exact[1] - exact[0]) / 2
        assert half <= rad[0] <= half + 1e-9, (layers, half, rad[0])


def _ln_readout_model(seed: int) -> Params:
    """A post-LN model with random layer-norm gains and biases (the fused readout uses both)."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=2, ln_eps=1e-5)
    arrays = dict(init_params(cfg, "xavier_uniform", seed).items())
    rng = np.random.default_rng(seed)
    for name in ("layers.0.norm2.weight", "layers.0.norm2.bias"):
        arrays[name] = rng.normal(size=cfg.d_model) + (1.0 if name.endswith("weight") else 0.0)
    return Params(cfg, arrays)


def test_the_fused_readout_is_sound_and_its_mutants_are_caught() -> None:
    """T = z (c @ (gain w)) + (beta @ w + b) after the last norm (AffineContext.readout) holds
    every string's T; dropping the norm's gain or bias from it is caught."""
    import verify.model.subcube.affine as affine_mod

    def violations(mod: types.ModuleType) -> int:
        total = 0
        for seed in range(4):
            p = _ln_readout_model(seed)
            for free in ([True, True, True], [False, True, False]):
                bits, fr = np.zeros(N_BITS, dtype=np.uint8), np.array(free)
                total += _outside(p, bits, fr, *_enclosures(mod.AffineContext(), p, bits, fr))
        return total

    assert violations(affine_mod) == 0
    for name in ("readout_ln_bias_dropped", "readout_ln_gain_dropped"):
        assert violations(_any_mutated(name)) > 0, name


def _attend_failures(affine_mod: types.ModuleType, sharp: float) -> int:
    """softmax(s) V by AffineContext.attend against the exact value at every vertex of three
    bit symbols: score j and value j move with bit j (scores by +-sharp, the regime where the
    range of the denominator and the hull of the values matter), plus a small shared term."""
    ctx = affine_mod.AffineContext()
    bad = 0
    with mpmath.workdps(60), ctx.active():
        ctx.n_symbols, ctx.n_bits = 3, 3
        s_mid = np.array([0.3, -0.5, 0.1])
        s_gen = np.diag([sharp, 0.8 * sharp, 1.2 * sharp]) + 0.05  # (symbol, key)
        v_mid = np.array([1.0, -2.0, 0.5])
        v_gen = np.diag([0.7, 1.5, -1.1])
        s = affine_mod.Affine(
            s_mid.reshape(1, 1, 3), s_gen.reshape(3, 1, 1, 3), np.zeros((1, 1, 3))
        )
        v = affine_mod.Affine(
            v_mid.reshape(1, 3, 1), v_gen.reshape(3, 1, 3, 1), np.zeros((1, 3, 1))
        )
        out = ctx.attend(s, v)
        mid = mpmath.mpf(float(out.mid.ravel()[0]))
        gen = (
            []
            if out.gen is None
            else [float(g) for g in out.gen.reshape(out.gen.shape[0], -1)[:, 0]]
        )
        extra = mpmath.mpf(float(out.rad.ravel()[0])) + sum(abs(mpmath.mpf(g)) for g in gen[3:])
        for code in range(8):
            e = [mpmath.mpf(1 if code >> k & 1 else -1) for k in range(3)]
            sc = [
                mpmath.mpf(s_mid[j]) + sum(mpmath.mpf(s_gen[k, j]) * e[k] for k in range(3))
                for j in range(3)
            ]
            vv = [
                mpmath.mpf(v_mid[j]) + sum(mpmath.mpf(v_gen[k, j]) * e[k] for k in range(3))
                for j in range(3)
            ]
            ex = [mpmath.exp(x) for x in sc]
            exact = sum(a * b for a, b in zip(ex, vv, strict=True)) / sum(ex)
            lin = mid + sum(mpmath.mpf(g) * ek for g, ek in zip(gen[:3], e, strict=False))
            bad += abs(exact - lin) > extra
    return bad


def test_attend_holds_softmax_at_the_vertices_and_its_mutants_are_caught() -> None:
    import verify.model.subcube.affine as affine_mod

    for sharp in (0.1, 1.0, 3.0, 6.0):
        assert _attend_failures(affine_mod, sharp) == 0, sharp
    for name in ("attend_den_range_from_upper", "attend_hull_half"):
        mod = _any_mutated(name)
        assert sum(_attend_failures(mod, sharp) for sharp in (0.1, 1.0, 3.0, 6.0)) > 0, name


def test_the_sweep_runs_the_pass_where_it_pays_and_records_the_same() -> None:
    """subcube_pays: one layer and N >= 15 (a quarter of the table's cost buys the cube's
    bound), never at L >= 2; a sweep cell's record is the same with and without the pass."""
    from verify.model.subcube.subcube_pass import default_budget, subcube_pays
    from verify.sweep import RUNNERS

    one = init_params(
        ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=0.0), "xavier_normal", 1
    )
    two = init_params(
        ModelConfig(d_model=16, n_layers=2, n_heads=2, ln_eps=0.0), "xavier_normal", 1
    )
    assert subcube_pays(one, 15) and not subcube_pays(one, 14) and not subcube_pays(two, 20)
    assert default_budget(one, 20) == 32 and default_budget(two, 20) == 4
    assert default_budget(one, 10) == 3  # an explicit call still tries the cube and its halves
    cell = {"d_model": 16, "n_heads": 2, "ln_eps": 0.0, "n_bits": 15, "n_layers": 1,
            "scheme": "xavier_normal", "seed": 1}  # fmt: skip
    run = RUNNERS["transformer"]
    assert run(cell) == run({**cell, "subcube": False}) == run({**cell, "subcube": True})
    sub = certify_subcubes(one, 15)
    assert sub.n_settled == 1 << 15 and sub.n_bounds == 1  # settled by the cube's bound


def _radius_part_failures(affine_mod: types.ModuleType, op: str) -> int:
    """A step on x = m + g e + d with |d| <= rad (no fresh symbols for d): its enclosure must
    hold x at d = -rad, 0, +rad too (mpmath, 80 digits; e on a grid, no vertex rule)."""
    ctx = affine_mod.AffineContext()
    step, exact = _VERTEX_OPS[op]
    bad = 0
    with mpmath.workdps(80), ctx.active():
        for m, g in _VERTEX_CASES:
            if op in ("rsqrt", "reciprocal") and abs(m) <= 2.0 * g:
                continue
            ctx.n_symbols, ctx.n_bits, ctx.max_symbols = 1, 0, 1  # the remainder stays in rad
            x = affine_mod.Affine(np.array([m]), np.array([[g]]), np.array([0.3 * g]))
            out = step(ctx, x, x, x)
            mid, extra = mpmath.mpf(float(out.mid[0])), mpmath.mpf(float(out.rad[0]))
            gen = float(out.gen[0, 0]) if out.gen is not None else 0.0
            for e in _GRID:
                for d in (-0.3 * g, 0.0, 0.3 * g):
                    xv = mpmath.mpf(m) + mpmath.mpf(g) * mpmath.mpf(e) + mpmath.mpf(d)
                    lin = mid + mpmath.mpf(gen) * mpmath.mpf(e)
                    bad += abs(exact(xv, xv, xv) - lin) > extra
    return bad


@pytest.mark.parametrize("op", ["exp", "rsqrt", "reciprocal", "relu"])
def test_each_step_holds_the_radius_part(op: str) -> None:
    import verify.model.subcube.affine as affine_mod

    assert _radius_part_failures(affine_mod, op) == 0


def test_a_dropped_radius_term_of_relu_is_caught() -> None:
    mod = _mutated(
        "verify.model.subcube.affine",
        "rest = rho + lam * x.rad + U * _gsum(gen)",
        "rest = rho + U * _gsum(gen)",
    )
    assert _radius_part_failures(mod, "relu") > 0
