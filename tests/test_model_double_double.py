"""The double-double tier: its arithmetic against mpmath, its kernel's radius against arb and
the 60-digit reference (on the spec grid, at depth, and on adversarial parameters), and its
place in the truth table."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb, fmpq, fmpq_mat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, Params, init_params, truth_table
from verify.model.arithmetic.contexts import MidRad, arb_precision
from verify.model.arithmetic.matrix_norms import (
    _spectral_norm_upper_arb,
    _spectral_norms_upper_float64,
    frobenius_sq_upper,
    gram_power_ball,
    root_upper,
    spectral_norm_upper,
    spectral_norms_upper,
)
from verify.model.certified.truth_table import TIER_DOUBLE_DOUBLE, TIER_NAMES
from verify.model.double_double import dd_arith as dd
from verify.model.double_double.dd_dense import inverse_dd, rsqrt_dd
from verify.model.double_double.dd_l2 import attention_l2, layer_norm_lipschitz
from verify.model.double_double.dd_pass import dd_T, prepare_dd
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import reference_forward
from verify.model.per_string.per_string_pass import fast_T
from verify.model.plain.forward import forward
from verify.strategies import SPEC_OPTION_GRID, adversarial_params

UU = 2.0**-104


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    p = init_params(ModelConfig(d_model=2, n_layers=1, n_heads=1), "gaussian", seed=0)
    dd_T(p, np.zeros((1, 1), dtype=np.uint8))


def _mp(h: float, lo: float = 0.0) -> mpmath.mpf:
    return mpmath.mpf(h) + mpmath.mpf(lo)


def _dd_pairs(rng: np.random.Generator, k: int, scale: float = 1.0) -> list[tuple[float, float]]:
    out = []
    for _ in range(k):
        h = float(rng.normal() * scale * 10.0 ** rng.integers(-8, 8))
        lo = float(h * rng.uniform(-1, 1) * 2.0**-53)
        h, lo = dd.two_sum(h, lo)
        out.append((h, lo))
    return out


def test_dd_operations_within_their_bounds() -> None:
    rng = np.random.default_rng(0)
    xs, ys = _dd_pairs(rng, 400), _dd_pairs(rng, 400)
    with mpmath.workprec(400):
        for (xh, xl), (yh, yl) in zip(xs, ys, strict=True):
            x, y = _mp(xh, xl), _mp(yh, yl)
            for got, exact, bound in (
                (dd.dd_add(xh, xl, yh, yl), x + y, dd.DD_ADD),
                (dd.dd_add(xh, xl, -xh, -xl * 0.5), x - _mp(xh, xl * 0.5), dd.DD_ADD),
                (dd.dd_add_d(xh, xl, yh), x + yh, dd.DD_ADD),
                (dd.dd_mul(xh, xl, yh, yl), x * y, dd.DD_MUL),
                (dd.dd_mul_d(xh, xl, yh), x * yh, dd.DD_MUL),
            ):
                h, lo = got
                assert abs(lo) <= abs(h) * 2.0**-52
                assert abs(_mp(h, lo) - exact) <= bound * abs(exact), (got, exact)


def test_dd_exp_far_inside_its_bound() -> None:
    rng = np.random.default_rng(1)
    args = list(rng.uniform(-745, 0, 300)) + list(rng.uniform(-1, 1, 200))
    args += [0.0, -1e-300, 1e-20, -700.0, -708.3, -720.0, -745.0, 5.0, 700.0, 709.0]
    args += list(rng.uniform(0, 709, 100))  # and next to the table's points k ln 2 / 64:
    args += [k * np.log(2) / 64 + e for k in range(-3000, 3000, 37) for e in (-1e-15, 0, 1e-15)]
    worst = 0.0
    with mpmath.workprec(400):
        for a in args:
            lo = float(a * rng.uniform(-1, 1) * 2.0**-53)
            ah, al = dd.two_sum(float(a), lo)
            h, low = dd.dd_exp(ah, al)
            exact = mpmath.exp(_mp(ah, al))
            err = abs(_mp(h, low) - exact)
            assert err <= dd.EXP_DD * exact + 1e-322, (a, h, low)
            if exact > 1e-280:  # below ~2^-969 the low part is subnormal: TINY covers it
                worst = max(worst, float(err / exact))
    print("worst relative error of dd_exp (results > 1e-280):", worst)
    assert worst < 1e-28  # the derivation's estimate is 5e-29; EXP_DD = 2^-80 ~ 8e-25


def test_inverse_and_rsqrt_bounds_hold_and_are_tight() -> None:
    rng = np.random.default_rng(2)
    with mpmath.workprec(400):
        for h, lo in _dd_pairs(rng, 300):
            t = abs(h)
            tl = lo if h > 0 else -lo
            qh, ql, err = inverse_dd(t, tl)
            exact = 1 / _mp(t, tl)
            assert abs(_mp(qh, ql) - exact) <= err <= 1e-29 * exact
            zh, zl, err = rsqrt_dd(t, tl)
            exact = 1 / mpmath.sqrt(_mp(t, tl))
            assert abs(_mp(zh, zl) - exact) <= err <= 1e-29 * exact


def _grid_config(i: int, n_layers: int) -> ModelConfig:
    norm_first, eps, affine, embedding, pos, eos = SPEC_OPTION_GRID[i]
    return ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, norm_first=norm_first, ln_eps=eps,
        ln_affine=affine, embedding=embedding, pos_encoding=pos, eos=eos, max_len=12,
    )  # fmt: skip


@pytest.mark.parametrize("i", range(0, len(SPEC_OPTION_GRID), 3))
def test_radius_contains_the_arb_enclosure(i: int) -> None:
    for n_layers, n in ((1, 5), (2, 4), (4, 3), (6, 3)):
        p = init_params(_grid_config(i, n_layers), "gaussian", seed=i, scale=0.7)
        bits = np.random.default_rng(i).integers(0, 2, size=(3, n)).astype(np.uint8)
        t, r = dd_T(p, bits)
        t_plain, r_plain = dd_T(p, bits, bounds=False)
        assert np.array_equal(t, t_plain, equal_nan=True) and not r_plain.any()
        t64, r64 = fast_T(p, bits)
        exact = enclose_output(p, bits, prec=256)
        with arb_precision(256):
            for b in range(3):
                if not exact[b].is_finite():
                    assert not (np.isfinite(t[b]) and np.isfinite(r[b]))
                    continue
                assert arb(t[b]) - arb(r[b]) <= exact[b] <= arb(t[b]) + arb(r[b]), (t[b], r[b])
                if np.isfinite(r64[b]):  # far tighter than float64's (r includes the low part)
                    tight = r[b] - 2.0**-52 * abs(t[b])
                    assert tight <= max(1e-6 * r64[b], 1e-25 * max(1.0, abs(t[b]))), (r[b], r64[b])


def _within(t: float, r: float, exact: mpmath.mpf) -> bool:
    with mpmath.workprec(4000):
        return abs(mpmath.mpf(t) - exact) <= mpmath.mpf(r)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=adversarial_params(n_bits=3), n=st.sampled_from([2, 3]))
def test_radius_encloses_the_exact_value_on_adversarial_parameters(p: Params, n: int) -> None:
    bits = all_bit_strings(n)
    t, r = dd_T(p, bits)
    with mpmath.workdps(100):
        exact = list(reference_forward(p, bits, dps=100).T)
    for k, value in enumerate(exact):
        if mpmath.isnan(value):  # an undefined layer norm (eps = 0, constant input)
            assert not (np.isfinite(t[k]) and np.isfinite(r[k]))
        elif np.isfinite(t[k]) and np.isfinite(r[k]):
            assert _within(t[k], r[k], value), (t[k], r[k], value)


@pytest.mark.tier_count
@pytest.mark.parametrize(
    ("d", "n_layers", "norm_first", "scheme"),
    [(64, 6, False, "xavier_uniform"), (16, 4, True, "gaussian")],
)  # models whose bits the float64 passes settle none of (the widest, deepest grid cell; N(0, 1)
# parameters)
def test_deep_model_is_settled_by_the_double_double_tier(
    d: int, n_layers: int, norm_first: bool, scheme: str
) -> None:
    cfg = ModelConfig(d_model=d, n_layers=n_layers, n_heads=2, ln_eps=0.0, norm_first=norm_first)
    p = init_params(cfg, scheme, seed=0)
    tt = truth_table(p, 6)
    counts = tt.tier_counts
    print(counts)
    assert set(counts) == set(TIER_NAMES) and sum(counts.values()) == 64
    assert counts["double_double"] >= 32 and counts["uncertain"] == 0
    idx = np.flatnonzero(tt.tier == TIER_DOUBLE_DOUBLE)[:6]
    exact = enclose_output(p, all_bit_strings(6)[idx], prec=256)
    for k, ball in zip(idx, exact, strict=True):
        assert (ball > 0 and tt.label[k] == 1) or (ball < 0 and tt.label[k] == 0)
    plain = truth_table(p, 6, double_double=False)
    assert np.array_equal(plain.label, tt.label)
    assert plain.tier_counts["double_double"] == 0


@pytest.mark.tier_count
def test_deep_model_skips_the_float64_passes_without_losing_a_bit_or_a_midpoint() -> None:
    """Where the float64 passes settle nothing (D = 64, L = 6; the readout bias moved to the
    median of T, so that the function is balanced), after a probe no float64 pass runs and the
    double-double tier supplies every label and every midpoint of T."""
    from verify.model.certified.truth_table import LABEL_UNCERTAIN, _float64_stage
    from verify.model.exhaustive.exhaustive_pass import exhaustive_T

    cfg = ModelConfig(d_model=64, n_layers=6, n_heads=2, ln_eps=0.0)
    base = init_params(cfg, "xavier_uniform", seed=0)
    median = float(np.median(exhaustive_T(base, 10, bounds=False)[0]))  # plain midpoints
    p = base.with_arrays({"readout.bias": np.array(float(base["readout.bias"]) - median)})
    t, label, _ = _float64_stage(p, 10, 0.0, "numba", skip_to_dd=True)
    assert np.isnan(t).all() and (label == LABEL_UNCERTAIN).all()  # skipped after the probe
    t_full, label_full, _ = _float64_stage(p, 10, 0.0, "numba")
    print("float64 passes settle", np.count_nonzero(label_full != LABEL_UNCERTAIN), "of 1024")
    assert (label_full == LABEL_UNCERTAIN).all()  # so the skip loses nothing
    tt = truth_table(p, 10)
    assert tt.tier_counts["double_double"] == 1024 and np.isfinite(tt.T).all()
    assert 0 < np.count_nonzero(tt.label == 1) < 1024  # a non-constant function
    np.testing.assert_allclose(tt.T, t_full, rtol=0, atol=1e-12)
    shallow = init_params(ModelConfig(d_model=16, n_layers=3, n_heads=2), "xavier_uniform", 0)
    t3, label3, _ = _float64_stage(shallow, 8, 0.0, "numba", skip_to_dd=True)
    assert (label3 != LABEL_UNCERTAIN).all() and np.isfinite(t3).all()  # not skipped at L = 3


def _sigma_max(w: np.ndarray) -> mpmath.mpf:
    """sigma_max(W) at 60 digits, as the square root of the Gram matrix's top eigenvalue."""
    with mpmath.workdps(60):
        g = mpmath.matrix(w.tolist())
        g = g * g.T if w.shape[0] <= w.shape[1] else g.T * g
        return mpmath.sqrt(max(mpmath.eigsy(g)[0]))


def test_spectral_norm_upper_bounds_and_is_tight() -> None:
    rng = np.random.default_rng(3)
    cases = [rng.normal(size=shape) for shape in ((5, 5), (3, 17), (40, 8), (1, 9), (9, 1))]
    cases += [np.diag([3.0, -7.5, 1e-3]), np.outer([1.0, 2.0, -2.0], [0.5, 0.5]), np.zeros((3, 4))]
    cases += [rng.normal(size=(6, 6)) * 1e-150, rng.normal(size=(4, 4)) * 1e150]
    cases += [np.array([[1e-310, 1.0], [0.5, 2.0]])]  # scaling would round 1e-310: the arb path
    cases += [rng.normal(size=(3, 5)), np.full((5, 3), np.inf), rng.normal(size=(5, 3))]
    together = spectral_norms_upper(cases)  # stacked by shape (3 x 5 with 5 x 3 transposed)
    for w, joint in zip(cases, together, strict=True):
        bound = spectral_norm_upper(w)
        assert bound == joint or (np.isnan(bound) and np.isnan(joint))
        if not np.isfinite(w).all():
            assert bound == np.inf
            continue
        sigma = _sigma_max(w)
        assert sigma <= bound <= sigma * min(w.shape) ** (1 / 64) * (1 + 1e-12) + 1e-300


def test_spectral_norm_upper_float64_is_rigorous_where_the_bound_is_tight() -> None:
    """Rank-1 matrices: |G^k|_F = lambda^k exactly, so the float64 path has no slack but its
    radii and upward roundings (dropping either fails this test); it agrees with arb."""
    rng = np.random.default_rng(11)
    for _ in range(120):
        rows, cols = (int(v) for v in rng.integers(1, 12, size=2))
        u = rng.normal(size=rows) * 10.0 ** rng.uniform(-3, 3, size=rows)
        v = rng.normal(size=cols) * 10.0 ** rng.uniform(-3, 3, size=cols)
        w = np.outer(u, v) * 10.0 ** rng.integers(-100, 100)
        m = w if rows <= cols else w.T
        fast = _spectral_norms_upper_float64(m[None])[0]
        assert np.isfinite(fast) and _sigma_max(w) <= fast
        assert fast == pytest.approx(_spectral_norm_upper_arb(m), rel=1e-12)


def _fmpq(x: float) -> fmpq:
    return fmpq(*Fraction(x).as_integer_ratio())


def test_gram_power_ball_holds_the_exact_power() -> None:
    """(M M^T)^16 in exact rationals lies in every ball; the midpoints alone (radii dropped)
    or one squaring's radius left out miss it."""
    rng = np.random.default_rng(12)
    for shape in ((1, 3), (3, 3), (4, 7), (6, 6)):
        m = rng.uniform(-1, 1, size=shape)
        m[0, 0] = 0.75  # the scaled input: largest entry in [1/2, 1)
        g = gram_power_ball(m, 16)
        a = fmpq_mat([[_fmpq(v) for v in row] for row in m.tolist()])
        exact = a * a.transpose()
        for _ in range(4):
            exact = exact * exact
        for i, j in np.ndindex(g.shape):
            err = abs(exact[i, j] - _fmpq(g.mid[i, j]))
            assert err <= _fmpq(g.rad[i, j])


def test_frobenius_sq_and_root_upper_bound_their_exact_values() -> None:
    rng = np.random.default_rng(13)
    for _ in range(50):
        mid = rng.normal(size=(3, 4)) * 10.0 ** rng.uniform(-5, 5)
        rad = np.abs(mid) * 10.0 ** rng.uniform(-16, 0, size=mid.shape)
        exact = sum(
            (abs(_fmpq(a)) + _fmpq(r)) ** 2 for a, r in zip(mid.flat, rad.flat, strict=True)
        )
        assert exact <= _fmpq(frobenius_sq_upper(MidRad(mid, rad)))
    with mpmath.workdps(50):
        for x in 10.0 ** rng.uniform(-300, 300, size=400):
            for halvings in (1, 6):
                bound = root_upper(float(x), halvings)
                true = mpmath.root(mpmath.mpf(float(x)), 2**halvings)
                assert true <= bound <= true * (1 + 4 * halvings * 2.0**-52)


def _ln(x: list[mpmath.mpf], gain: np.ndarray, eps: float) -> list[mpmath.mpf]:
    mean = mpmath.fsum(x) / len(x)
    var = mpmath.fsum((a - mean) ** 2 for a in x) / len(x)
    return [g * (a - mean) / mpmath.sqrt(var + eps) for a, g in zip(x, gain, strict=True)]


@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_layer_norm_lipschitz_bounds_sampled_perturbations(eps: float) -> None:
    rng = np.random.default_rng(4)
    for trial in range(40):
        d = int(rng.integers(2, 12))
        vh = rng.normal(size=(d, 1)) * 10.0 ** rng.integers(-3, 3)
        vh[:, 0] += rng.normal() * 10.0 ** rng.integers(-2, 3)  # an offset: the mean cancels
        vl = vh * rng.uniform(-1, 1, size=(d, 1)) * 2.0**-53
        spread = np.std(vh)
        rho = np.array([spread * np.sqrt(d) * 10.0 ** rng.uniform(-8, 0.3)])
        gain = rng.normal(size=d)
        out = np.empty(1)
        layer_norm_lipschitz(vh, vl, rho, eps, False, float(np.max(np.abs(gain))), out)
        if spread * np.sqrt(d) > 2 * rho[0] and eps == 0.0 or eps > 0.0:
            assert np.isfinite(out[0]), trial
        if not np.isfinite(out[0]):
            continue
        # no looser than max|g| / sqrt((|P v| - rho)^2 / d + eps) by more than rounding
        t = max(float(np.linalg.norm(vh[:, 0] - vh[:, 0].mean())) - rho[0], 0.0)
        assert out[0] <= np.max(np.abs(gain)) / np.sqrt(t * t / d + eps) * (1 + 1e-9)
        with mpmath.workdps(60):
            mid = [_mp(a, b) for a, b in zip(vh[:, 0], vl[:, 0], strict=True)]
            base = _ln(mid, gain, eps)
            for _ in range(5):
                e = rng.normal(size=d)
                e *= rho[0] / np.linalg.norm(e) * rng.uniform(0.5, 1.0)
                moved = _ln([a + mpmath.mpf(b) for a, b in zip(mid, e, strict=True)], gain, eps)
                dist = mpmath.sqrt(
                    mpmath.fsum((a - b) ** 2 for a, b in zip(moved, base, strict=True))
                )
                assert dist <= out[0] * mpmath.mpf(rho[0]), (trial, dist, out[0] * rho[0])


def test_attention_radius_bounds_sampled_perturbations() -> None:
    """attention_l2's 2-norm radius against exact outputs (60 digits) at perturbed queries,
    keys and values inside the balls it was given (scores up to ~8, radii up to 3e-2)."""
    rng = np.random.default_rng(5)
    for trial in range(12):
        s, n_heads, dh = int(rng.integers(2, 6)), int(rng.integers(1, 3)), int(rng.integers(1, 4))
        d = n_heads * dh
        qh = (rng.normal(size=(s, 3 * d, 1)) * rng.uniform(0.3, 3.0)).copy()
        ql = qh * rng.uniform(-1, 1, size=qh.shape) * 2.0**-54
        rq = rng.uniform(0, 1, size=(s, 3 * n_heads, 1)) * 10.0 ** rng.uniform(-8, -1.5)
        c = 1.0 / np.sqrt(dh)
        ath, atl, rat = np.empty((d, 1)), np.empty((d, 1)), np.empty(1)
        ph, pl, pr = np.empty((s, 1)), np.empty((s, 1)), np.empty((s, 1))
        i = int(rng.integers(0, s))
        attention_l2(qh, ql, rq, i, n_heads, c, 0.0, 1e-16, ath, atl, rat, ph, pl, pr)
        assert np.isfinite(rat[0])
        with mpmath.workdps(60):
            mid = [[_mp(qh[j, e, 0], ql[j, e, 0]) for e in range(3 * d)] for j in range(s)]
            got = [_mp(ath[e, 0], atl[e, 0]) for e in range(d)]
            cx = 1 / mpmath.sqrt(dh)
            for _ in range(6):
                x = [row[:] for row in mid]
                for j in range(s):
                    for c3 in range(3 * n_heads):
                        r0 = (c3 // n_heads) * d + (c3 % n_heads) * dh
                        u = rng.normal(size=dh)
                        u *= rq[j, c3, 0] * rng.uniform(0.9, 1.0) / np.linalg.norm(u)
                        for e in range(dh):
                            x[j][r0 + e] += mpmath.mpf(float(u[e]))
                out = []
                for hd in range(n_heads):
                    c0 = hd * dh
                    sc = [cx * mpmath.fsum(x[i][c0 + e] * x[j][d + c0 + e] for e in range(dh))
                          for j in range(s)]  # fmt: skip
                    w = [mpmath.exp(a - max(sc)) for a in sc]
                    tot = mpmath.fsum(w)
                    out += [mpmath.fsum(w[j] * x[j][2 * d + c0 + e] for j in range(s)) / tot
                            for e in range(dh)]  # fmt: skip
                dist = mpmath.sqrt(mpmath.fsum((a - b) ** 2 for a, b in zip(out, got, strict=True)))
                assert dist <= mpmath.mpf(rat[0]), (trial, dist, rat[0])


@pytest.mark.parametrize(("norm_first", "eps"), [(False, 0.0), (True, 0.0), (False, 1e-5)])
def test_radius_propagates_an_embedding_box_through_every_layer(
    norm_first: bool, eps: float
) -> None:
    """The kernel with the embeddings' radii widened by R (so that the propagation rules, not
    the rounding, make the radius): T of models whose token and position embeddings move by
    <= R / 2 (100-digit reference; random corners and the gradient's) is inside the ball.
    (The largest |T' - T| is ~1e-4 of the radius here: norms multiplied stage by stage, ~20x
    per layer at D = 8; the stage rules themselves are tested tight above.)"""
    cfg = ModelConfig(
        d_model=8, n_layers=3, n_heads=2, norm_first=norm_first, ln_eps=eps,
        pos_encoding="learned", max_len=4,
    )  # fmt: skip
    p = init_params(cfg, "xavier_uniform", seed=7)
    n, big_r = 4, 1e-7
    bits = np.random.default_rng(7).integers(0, 2, size=(4, n)).astype(np.uint8)
    inputs = prepare_dd(p, n)
    tables = inputs.tables._replace(y0_rad=inputs.tables.y0_rad + big_r)
    t, r = dd_T(p, bits, inputs=dataclasses.replace(inputs, tables=tables))
    assert np.all(np.isfinite(r)) and np.all(r < 0.5)
    names = ("token_embedding", "pos_embedding")  # y0 = token + position: each moves <= R/2
    shapes = [p[name].shape for name in names]
    sizes = [int(np.prod(sh)) for sh in shapes]

    def moved(delta: np.ndarray) -> Params:
        parts = np.split(delta, [sizes[0]])
        arrays = {**dict(p.items())}
        for name, part, shape in zip(names, parts, shapes, strict=True):
            arrays[name] = p[name] + part.reshape(shape)
        return Params(cfg, arrays)

    # corners of the box: random ones, and per string the one along the sign of the gradient
    rng = np.random.default_rng(8)
    m = sum(sizes)
    corners = [rng.choice([-0.45, 0.45], size=m) * big_r for _ in range(4)]
    base = forward(p, bits).T
    grad = np.zeros((bits.shape[0], m))
    for q in range(m):
        step = np.zeros(m)
        step[q] = 1e-6
        grad[:, q] = (forward(moved(step), bits).T - base) / 1e-6
    corners += [np.sign(g) * 0.45 * big_r for g in grad]
    worst = 0.0
    for delta in corners:
        exact = reference_forward(moved(delta), bits, dps=100).T
        for k, value in enumerate(exact):
            assert _within(t[k], r[k], value), (k, t[k], r[k], value)
            worst = max(worst, float(abs(mpmath.mpf(t[k]) - value)) / r[k])
    print("largest |T' - t| / r:", worst)
