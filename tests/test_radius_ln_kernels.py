"""The annotated layer norm (``ln_form="annotated"``, issue 44) in the Numba kernels: its radius
rules against independent implementations written from the formulas of docs/model.md
(``tests/_per_string_reference.py``, ``tests/_exhaustive_reference.py``,
``tests/_l2_reference.py``, an eps of type ``AnnotatedEps`` selecting the form), and the exact
error in arb.

LN(v) = a (v - mean) / (std_unbiased + eps) + b: the kernels compute z = 1 / (sqrt(ss / (D -
1)) + eps) and its radius (``stages.layer_norm.annotated_radius``, the double-double
``double_double.dd_norm.inverse_std_dd``, both through ``stages.l2_bounds.inverse_std_radius``) and
the Lipschitz constant max|a| / (t / sqrt(D - 1) + eps) on a ball (``l2_bounds.
lipschitz_from_sums``).

Constructions (``STAGES``) that make each new term weigh: gains != 1 per coordinate (7, -0.01,
3, 0.5), the unbiased std comparable to eps (1e-6), D = 2 (D / (D - 1) = 2), an input ball as
wide as the centred values (the square-root term of the std's radius near 0), zero input radius
(only the roundings of sqrt, + eps and 1 / t), eps = 0, an input ball whose variance radius is
~0.4 of the variance (the low ends of the std's and of 1/t's balls). Each stage kernel's radius
must be >= the reference's (1 - REL), and the kernel's ball must hold the exact LN (arb, 256
bits) at the midpoint and at every corner of the input box; printed: kernel / reference and the
largest exact error / radius. Whole models: the per-string, exhaustive (L = 1, 2) and double-
double kernels against the references and arb's exact T. The sub-cube pass: its sqrt of the
unbiased variance (a chord relaxation, ``subcube.affine_split.relax_sqrt``) against exact values
on forms away from, touching and near 0, and its bound of T against every string of a sub-cube.

Runs without the JIT too (``tests/test_radius_mutations.py`` runs it against the issue-44
kernel mutants of ``tests/_radius_mutants_tiers.py``).
"""

from __future__ import annotations

import dataclasses
import itertools
import os

import _exhaustive_reference as xref
import _l2_reference as l2ref
import _per_string_reference as psr
import _radius_mutants
import numpy as np
import pytest
from flint import arb

from verify.model import ModelConfig, Params, init_params, truth_table
from verify.model.arithmetic.contexts import arb_precision
from verify.model.double_double.dd_l2 import layer_norm_lipschitz
from verify.model.double_double.dd_norm import layer_norm_dd
from verify.model.double_double.dd_pass import dd_T, prepare_dd
from verify.model.exhaustive.exhaustive_pass import exhaustive_T
from verify.model.generic.enclosure import enclose_output
from verify.model.per_string.per_string_pass import fast_T, prepare
from verify.model.stages.bundles import BS
from verify.model.stages.layer_norm import layer_norm, layer_norm_scalar
from verify.model.stages.register_sums import LS_ROWS
from verify.model.stages.stage_l2 import layer_norm_l2

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
needs_intrinsics = pytest.mark.skipif(
    NO_JIT and not _radius_mutants.python_intrinsics_installed(),
    reason="the register intrinsics without the JIT (run with -p _radius_mutants)",
)
REL = psr.REL
DD_REL = 1e-3  # the double-double rule against the float64 one: their rounding terms differ
A = psr.AnnotatedEps


def _stage_cases() -> dict[str, tuple]:
    """name -> (v (d,), rv, gain, bias, eps)."""
    rng = np.random.default_rng(44)
    return {
        "gains": (rng.normal(size=4) * 2, 1e-10, np.array([7.0, -0.01, 3.0, 0.5]),
                  rng.normal(size=4), 1e-6),
        "std_near_eps": (5.0 + 1e-6 * np.array([1.0, -2.0, 1.0]), 1e-13,
                         np.array([2.0, -1.5, 0.75]), np.zeros(3), 1e-6),
        "d2": (np.array([0.3, -0.9]), 1e-9, np.array([2.0, -0.5]), np.array([0.1, 0.2]), 1e-6),
        "rounding_only": (np.array([1.25, -0.3, 0.7]), 0.0, np.array([1.5, -2.0, 0.25]),
                          np.array([0.5, 0.0, -1.0]), 1e-6),
        "ball_near_zero": (np.array([1e-8, -1e-8]), 0.7e-8, np.array([3.0, 0.5]), np.zeros(2),
                           4e-8),
        "eps0": (np.array([0.4, -1.1, 2.3, 0.05]), 1e-12, np.array([1.0, 4.0, -0.3, 2.0]),
                 np.zeros(4), 0.0),
        "wide_ball": (np.array([1.0, -1.0, 0.2]), 0.09, np.array([1.0, 2.0, -0.5]), np.zeros(3),
                      1e-6),
    }  # fmt: skip


STAGES = _stage_cases()


def _columns(x: np.ndarray, nb: int) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(np.asarray(x, dtype=np.float64)[:, None], nb, axis=1))


def arb_annotated_ln(v: list, gain: np.ndarray, bias: np.ndarray, eps: float) -> list:
    """a (v - mean) / (std_unbiased + eps) + b in arb (the working precision), from the
    formula; v: arb entries."""
    d = len(v)
    mean = sum(v, arb(0)) / d
    std = (sum(((x - mean) ** 2 for x in v), arb(0)) / (d - 1)).sqrt()
    return [
        arb(float(g)) * (x - mean) / (std + arb(eps)) + arb(float(c))
        for x, g, c in zip(v, gain, bias, strict=True)
    ]


def exact_error_ratio(v, rv, gain, bias, eps, out, rout) -> float:
    """max over the midpoint and the corners of the input box (v_i +- rv) of |LN_exact - out|
    / rout (arb at 256 bits; the box's points are exact binary values up to 2^-256); asserts
    containment (<= 1) on the way."""
    worst = 0.0
    d = v.shape[0]
    signs = [np.zeros(d)] + ([np.array(s) for s in itertools.product((-1, 1), repeat=d)] if rv
                             else [])  # fmt: skip
    with arb_precision(256):
        for sg in signs:
            pts = [arb(float(x)) + arb(float(s)) * arb(rv) for x, s in zip(v, sg, strict=True)]
            exact = arb_annotated_ln(pts, gain, bias, eps)
            for i in range(d):
                err = abs(exact[i] - arb(float(out[i])))
                assert err <= arb(float(rout[i])), (i, sg, err, rout[i])
                worst = max(worst, float((err / arb(float(rout[i]))).upper()))
    return worst


@pytest.mark.parametrize("nb", [5, 8])  # 8: the moments in registers (``ln_block``)
@pytest.mark.parametrize("name", list(STAGES))
def test_componentwise_layer_norm_at_least_the_reference(name: str, nb: int) -> None:
    """``stages.layer_norm.layer_norm`` (per-string kernel) in the annotated form: the same
    midpoints as the reference, radius >= the reference's, the exact LN inside."""
    v, rv, gain, bias, eps = STAGES[name]
    d = v.shape[0]
    vb, rvb = _columns(v, nb), np.full((d, nb), rv)
    out, rout, ls = np.zeros((d, nb)), np.zeros((d, nb)), np.zeros((LS_ROWS, nb))
    layer_norm(vb, rvb, gain, bias, eps, True, out, rout, ls, True)
    want, rwant = psr.layer_norm(vb, rvb, gain, bias, A(eps))
    assert np.array_equal(out, want), (out, want)
    ratio = rout / rwant
    worst = exact_error_ratio(v, rv, gain, bias, eps, out[:, 0], rout[:, 0])
    print(f"{name} nb {nb}: kernel / reference min {ratio.min():.6g}; exact / radius {worst:.3g}")
    assert np.all(np.isfinite(rout)) and np.all(ratio >= 1 - REL), ratio


@needs_intrinsics
@pytest.mark.parametrize("name", list(STAGES))
def test_scalar_layer_norm_at_least_the_reference(name: str) -> None:
    """``layer_norm_scalar`` (the exhaustive kernel's layer 0) in the annotated form against
    ``_exhaustive_reference.ln_scalar``; the exact LN inside its radius."""
    v, rv, gain, bias, eps = STAGES[name]
    d = v.shape[0]
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    gmax, bmax = float(np.abs(gain).max()), float(np.abs(bias).max())
    layer_norm_scalar(_columns(v, BS), np.full(BS, rv), gain, bias, gmax, bmax, eps, True, out,
                      rout, ls, True)  # fmt: skip
    want, rwant, _, _ = xref.ln_scalar(v, rv, gain, bias, A(eps))
    assert np.array_equal(out[:, 0], want)
    worst = exact_error_ratio(v, rv, gain, bias, eps, out[:, 0], np.full(d, rout[0]))
    print(f"{name}: kernel / reference {rout[0] / rwant:.6g}; exact / radius {worst:.3g}")
    assert np.isfinite(rout[0]) and rout[0] >= rwant * (1 - REL), (rout[0], rwant)


@pytest.mark.parametrize("frac", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("d", [2, 3, 8])
def test_lipschitz_constant_at_least_the_reference_and_realised(d: int, frac: float) -> None:
    """max|a| / (t / sqrt(D - 1) + eps), t = |P v| - rho, on balls of radius frac |P v| with
    the std near eps: the kernel's constant (``dd_l2.layer_norm_lipschitz``, the sums of
    ``l2_bounds.lipschitz_from_sums``) >= the reference's; and no pair of points of the ball
    (the ball's nearest point to the centring axis and a step across it, in arb) moves the
    output by more than the constant times their distance."""
    rng = np.random.default_rng(d)
    eps, nb = 1e-3, 4
    v = 1e-3 * rng.normal(size=(d, nb))
    gain = rng.uniform(0.5, 3.0, size=d) * np.where(rng.random(d) < 0.5, -1.0, 1.0)
    gmax = float(np.abs(gain).max())
    pv = np.linalg.norm(v - v.mean(axis=0), axis=0)
    rho = frac * pv
    out = np.zeros(nb)
    layer_norm_lipschitz(np.ascontiguousarray(v), np.zeros_like(v), rho, eps, True, gmax, out)
    want = np.array([l2ref.lipschitz(v[:, k], rho[k], A(eps), gmax) for k in range(nb)])
    ratio = out / want
    assert np.all(ratio >= 1 - REL), ratio
    realised = 0.0
    with arb_precision(256):
        for k in range(nb):
            c = v[:, k] - v[:, k].mean()
            x = v[:, k] - rho[k] * (1 - 1e-9) * c / np.linalg.norm(c)  # |P x| = t
            step = np.zeros(d)  # across P x, inside the centred subspace
            step[0], step[1] = 1.0, -1.0
            step -= step.dot(c) / c.dot(c) * c if d > 2 else 0.0
            step *= 1e-9 / np.linalg.norm(step)
            fx = arb_annotated_ln([arb(float(t)) for t in x], gain, np.zeros(d), eps)
            fy = arb_annotated_ln([arb(float(t)) for t in x + step], gain, np.zeros(d), eps)
            moved = sum(((a - b) ** 2 for a, b in zip(fx, fy, strict=True)), arb(0)).sqrt()
            dist = float(np.linalg.norm((x + step) - x))
            realised = max(realised, float(moved.upper()) / (dist * out[k]))
    print(f"D {d} rho {frac} |Pv|: kernel / reference {ratio.min():.6g};"
          f" realised / constant {realised:.3g}")  # fmt: skip
    assert realised <= 1.0 + 1e-6, realised


@needs_intrinsics
@pytest.mark.parametrize("frac", [0.0, 0.6])
def test_layer_norm_l2_at_least_the_reference(frac: float) -> None:
    """``stage_l2.layer_norm_l2`` (the exhaustive kernel's layers >= 1): Lip rho + sqrt(D) r0
    in the annotated form, D = 3, the std near eps."""
    rng = np.random.default_rng(5)
    d, eps = 3, 1e-6
    v = 2.0 + 1e-6 * rng.normal(size=(d, BS))
    gain, bias = np.array([3.0, -0.2, 1.0]), rng.normal(size=d)
    rho = frac * np.linalg.norm(v - v.mean(axis=0), axis=0)
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    gmax, bmax = float(np.abs(gain).max()), float(np.abs(bias).max())
    layer_norm_l2(np.ascontiguousarray(v), rho, gain, bias, gmax, bmax, eps, True, out, rout, ls,
                  np.zeros((d, BS)), np.zeros(BS), True)  # fmt: skip
    want = np.array(
        [l2ref.layer_norm_l2(v[:, k], rho[k], gain, bias, A(eps))[1] for k in range(BS)]
    )
    ratio = rout / want
    print(f"layer_norm_l2 rho {frac} |Pv|: kernel / reference min {ratio.min():.6g}")
    assert np.all(np.isfinite(rout)) and np.all(ratio >= 1 - REL), ratio


@pytest.mark.parametrize("name", [n for n in STAGES if STAGES[n][1] > 0])
def test_double_double_layer_norm_at_least_the_reference(name: str) -> None:
    """``dd_norm.layer_norm_dd`` in the annotated form with input radii >= 1e-10 max|v|: its
    radius is the propagated part of the float64 rule (the roundings differ, ~1e-5 of it at
    most here), so it must be >= the float64 reference's (1 - DD_REL); the exact LN inside."""
    v, rv, gain, bias, eps = STAGES[name]
    rv = max(rv, 1e-10 * float(np.abs(v).max()))
    d, nb = v.shape[0], 3
    oh, ol, ro = np.zeros((d, nb)), np.zeros((d, nb)), np.zeros((d, nb))
    layer_norm_dd(_columns(v, nb), np.zeros((d, nb)), np.full((d, nb), rv), gain, bias, eps,
                  True, oh, ol, ro, True)  # fmt: skip
    _, rwant = psr.layer_norm(_columns(v, nb), np.full((d, nb), rv), gain, bias, A(eps))
    ratio = ro / rwant
    worst = exact_error_ratio(v, rv, gain, bias, eps, oh[:, 0] + ol[:, 0], ro[:, 0])
    print(
        f"dd {name}: kernel / float64 reference min {ratio.min():.6g}; exact / radius {worst:.3g}"
    )
    assert np.all(np.isfinite(ro)) and np.all(ratio >= 1 - DD_REL), ratio


def test_double_double_layer_norm_rounding_only_holds_the_exact_value() -> None:
    """At zero input radius the double-double radius is its own rounding (~1e-31 relative): the
    exact LN (arb, 256 bits) lies within it, and it is not vacuous (< 1e-28 |out|)."""
    v, _, gain, bias, eps = STAGES["rounding_only"]
    d = v.shape[0]
    oh, ol, ro = np.zeros((d, 1)), np.zeros((d, 1)), np.zeros((d, 1))
    layer_norm_dd(_columns(v, 1), np.zeros((d, 1)), np.zeros((d, 1)), gain, bias, eps, True, oh,
                  ol, ro, True)  # fmt: skip
    with arb_precision(256):
        exact = arb_annotated_ln([arb(float(x)) for x in v], gain, bias, eps)
        for i in range(d):
            err = abs(exact[i] - (arb(float(oh[i, 0])) + arb(float(ol[i, 0]))))
            assert err <= arb(float(ro[i, 0])), (i, err, ro[i, 0])
    assert np.all(ro[:, 0] < 1e-28 * np.abs(oh[:, 0]))


# ---------------------------------------------------------------- the sub-cube pass
# forms x = m + g e1 + g/2 e2 (e1 on a grid, e2 = +-1) whose values are all >= 0: away from 0,
# touching 0 (m = 1.5 g), and mostly near 0
_SQRT_CASES = [(1.3, 0.5), (0.2, 0.1), (4.0, 2.5), (0.3, 0.2), (1.0, 0.02), (1e-6, 6e-7)]
_GRID = np.linspace(-1.0, 1.0, 9)


def test_subcube_sqrt_contains_the_exact_values() -> None:
    """``AffineContext.sqrt_nonneg`` (the annotated form's std in the sub-cube pass): |sqrt(x(e))
    - (mid + gen . e)| <= rad + the fresh symbols' |gen| at every grid point, exactly (mpmath,
    80 digits); printed: the largest error / that bound (the chord's tightness)."""
    import mpmath

    from verify.model.subcube.affine import Affine, AffineContext

    ctx = AffineContext()
    worst = 0.0
    with mpmath.workdps(80), ctx.active():
        for m, g in _SQRT_CASES:
            ctx.n_symbols = 2
            x = Affine(np.array([m]), np.array([[g], [0.5 * g]]), np.array([0.0]))
            y = ctx.sqrt_nonneg(x)
            extra = mpmath.mpf(float(y.rad[0]))
            extra += sum(abs(mpmath.mpf(float(v))) for v in y.gen[2:, 0])
            assert 0 < extra < mpmath.inf
            for e1, e2 in itertools.product(_GRID, (-1.0, 1.0)):
                xv = mpmath.mpf(m) + mpmath.mpf(g) * e1 + mpmath.mpf(0.5 * g) * e2
                lin = mpmath.mpf(float(y.mid[0])) + mpmath.mpf(float(y.gen[0, 0])) * e1
                lin += mpmath.mpf(float(y.gen[1, 0])) * e2
                err = abs(mpmath.sqrt(xv) - lin)
                assert err <= extra, (m, g, e1, e2, err, extra)
                worst = max(worst, float(err / extra))
    print(f"sub-cube sqrt: largest exact error / bound {worst:.3g}")


# ---------------------------------------------------------------- whole models
def annotated_model(name: str, norm_first: bool, n_layers: int, eps: float) -> Params:
    """D = 8 (H = 2) or D = 2 (H = 1); "gains": norm gains per coordinate in [0.1, 10] of both
    signs; "near_eps": the first norm's input at position 0 nearly constant (std ~ 1e-7 against
    eps), learned positions."""
    d = 2 if name == "d2" else 8
    cfg = ModelConfig(
        d_model=d, n_layers=n_layers, n_heads=1 if d == 2 else 2, d_ff=2 * d, ln_eps=eps,
        norm_first=norm_first, final_norm=True if norm_first else None, max_len=8,
        pos_encoding="learned", ln_form="annotated",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=3, scale=0.7)
    rng = np.random.default_rng(17)
    arrays: dict[str, np.ndarray] = {}
    if name == "gains":
        for key in p:
            if key.endswith("norm1.weight") or key.endswith("norm2.weight"):
                arrays[key] = 10.0 ** rng.uniform(-1.0, 1.0, size=d) * rng.choice([-1, 1], d)
    elif name == "near_eps":
        pos = np.array(p["pos_embedding"])
        pos[0] = 0.7 - p["token_embedding"][0] + 1e-7 * rng.normal(size=d)
        arrays["pos_embedding"] = pos
    return p.with_arrays(arrays) if arrays else p


MODELS = [
    (name, nf, eps) for name in ("plain", "gains", "near_eps", "d2") for nf in (False, True)
    for eps in (1e-6, 0.0)
]  # fmt: skip
BITS = np.array([[0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0], [1, 1, 1]], dtype=np.uint8)


def _contains(t: np.ndarray, r: np.ndarray, exact: list) -> None:
    with arb_precision(256):
        for b in np.flatnonzero(np.isfinite(t) & np.isfinite(r)):
            assert arb(float(t[b])) - arb(float(r[b])) <= exact[b], (b, t[b], r[b])
            assert exact[b] <= arb(float(t[b])) + arb(float(r[b])), (b, t[b], r[b])


@pytest.mark.parametrize(("name", "norm_first", "eps"), MODELS)
def test_per_string_kernel_at_least_the_reference_and_holds_T(name, norm_first, eps) -> None:
    p = annotated_model(name, norm_first, 2, eps)
    t, r = fast_T(p, BITS)
    t_ref, r_ref = psr.certified_T(prepare(p, 3), BITS)
    assert np.array_equal(t, t_ref, equal_nan=True), (t, t_ref)
    settled = np.isfinite(r_ref)
    assert settled.sum() >= 3, r_ref
    ratio = r[settled] / r_ref[settled]
    print(name, norm_first, eps, "per-string kernel / reference: min", ratio.min())
    assert np.all(ratio >= 1 - REL), ratio
    _contains(t, r, enclose_output(p, BITS, prec=256))


@needs_intrinsics
@pytest.mark.parametrize(("name", "norm_first", "eps"), MODELS)
def test_exhaustive_kernel_at_least_the_reference_and_holds_T(name, norm_first, eps) -> None:
    """L = 1 (scalar radii: ``_exhaustive_reference``) and L = 2 (2-norm radii from layer 0's
    MLP on: ``_l2_reference``), all 8 strings of N = 3."""
    bits = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(np.uint8)
    for n_layers in (1, 2):
        p = annotated_model(name, norm_first, n_layers, eps)
        t, r = exhaustive_T(p, 3)
        r_ref = xref.certified_T_L1(p, 3)[1] if n_layers == 1 else l2ref.exhaustive_radius(p, 3)
        settled = np.isfinite(r_ref)
        ratio = r[settled] / r_ref[settled]
        print(name, norm_first, eps, n_layers, "exhaustive kernel / reference: min", ratio.min())
        rel = REL if n_layers == 1 else l2ref.REL  # l2ref: other orders, float64 midpoints
        assert settled.sum() >= 4 and np.all(ratio >= 1 - rel), ratio
        _contains(t, r, enclose_output(p, bits, prec=256))


R = 1e-9  # the double-double kernel's embedding radius, widened (as tests/test_radius_l2_dd.py)


# eps > 0 (near_eps at eps = 0: the widened ball reaches the std's 0, both radii unbounded)
DD_MODELS = [m for m in MODELS if m[2] > 0]


@pytest.mark.parametrize(("name", "norm_first", "eps"), DD_MODELS)
def test_double_double_kernel_at_least_the_reference_and_holds_T(name, norm_first, eps) -> None:
    p = annotated_model(name, norm_first, 2, eps)
    inputs = prepare_dd(p, 3)
    tables = inputs.tables._replace(y0_rad=inputs.tables.y0_rad + R)
    _, r = dd_T(p, BITS, inputs=dataclasses.replace(inputs, tables=tables))
    r_ref = l2ref.dd_radius(p, BITS, tables.y0_rad)
    fin = np.isfinite(r_ref)  # near_eps pre-LN: the widened ball reaches the std's 0
    ratio = r[fin] / r_ref[fin]
    print(name, norm_first, eps, "double-double kernel / reference: min", ratio.min())
    assert fin.sum() >= 3 and np.all(ratio >= 1 - l2ref.REL), ratio
    t0, r0 = dd_T(p, BITS, inputs=inputs)
    _contains(t0, r0, enclose_output(p, BITS, prec=256))


@pytest.mark.parametrize(("norm_first", "eps"), [(True, 1e-6), (False, 1e-6), (True, 0.0)])
def test_subcube_bound_holds_every_string(norm_first: bool, eps: float) -> None:
    """``subcube_T`` of annotated models: every string of each sub-cube (all 8 strings of N = 3
    under 1, 2 and 3 free bits) has its exact T (arb, 256 bits) inside the bound; and
    ``truth_table(subcube=True)`` gives the table of the per-string tiers."""
    from verify.model.subcube.subcube_pass import subcube_T

    p = annotated_model("plain", norm_first, 2, eps)
    bits = np.array([[0, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=np.uint8)
    free = np.array([[True, False, False], [True, True, False], [True, True, True]])
    mid, rad, _ = subcube_T(p, bits, free)
    every = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(np.uint8)
    exact = enclose_output(p, every, prec=256)
    finite = 0
    with arb_precision(256):
        for b in range(bits.shape[0]):
            if not np.isfinite(rad[b]):
                continue
            finite += 1
            for k, row in enumerate(every):
                if np.all((row == bits[b]) | free[b]):
                    assert arb(float(mid[b])) - arb(float(rad[b])) <= exact[k], (b, k)
                    assert exact[k] <= arb(float(mid[b])) + arb(float(rad[b])), (b, k)
    assert finite >= 2 or eps == 0.0, rad  # eps = 0: the std's range may reach 0 (no bound)
    with_cubes = truth_table(p, 5, subcube=True)
    assert np.array_equal(with_cubes.label, truth_table(p, 5).label)
