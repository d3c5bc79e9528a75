"""The register-blocked product (``stages.simd`` through ``dense.matvec_mid``) stays within
the rounding bound the scalar radii assume: |fl - exact| <= (n + 2) U (|b| + sum |w| |x|); the
fused MLP and the register sums (``stages.register_sums``) give bit for bit what the loops
they replaced give."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import BS
from verify.model.stages.dense import matvec_mid


@pytest.mark.parametrize(("rows", "n", "r0"), [(16, 64, 0), (64, 16, 0), (29, 7, 3), (3, 1, 1)])
def test_matvec_mid_within_bound(rows: int, n: int, r0: int) -> None:
    rng = np.random.default_rng(rows * 100 + n)
    w = rng.normal(size=(rows + r0 + 2, n)) * rng.choice([1e-8, 1.0, 1e8], size=(rows + r0 + 2, n))
    x = rng.normal(size=(n, BS))
    bias = rng.normal(size=rows + r0 + 2)
    out = np.full((rows + 1, BS), np.nan)
    matvec_mid(x, np.ascontiguousarray(w.T), bias, r0, r0 + rows, out)
    assert np.all(np.isnan(out[rows]))  # nothing written past the rows asked for
    for j in range(rows):
        for b in (0, 7, 8, BS - 1):
            exact = Fraction(bias[r0 + j]) + sum(
                Fraction(w[r0 + j, k]) * Fraction(x[k, b]) for k in range(n)
            )
            mag = abs(bias[r0 + j]) + float(np.sum(np.abs(w[r0 + j]) * np.abs(x[:, b])))
            assert abs(Fraction(out[j, b]) - exact) <= Fraction((n + 2) * U * mag)


@pytest.mark.parametrize(("d", "f", "n_heads", "i", "lo_q"),
                         [(16, 64, 2, 20, False), (21, 13, 3, 1, True), (5, 8, 1, 4, True),
                          (16, 64, 2, 5, False)])  # fmt: skip
def test_mlp_from_tables_matches_the_passes(d: int, f: int, n_heads: int, i: int, lo_q: bool):
    """The fused layer-0 MLP gives bit for bit what the separate passes give."""
    from verify.model.stages.dense import col_absmax, relu_scalar
    from verify.model.stages.tables import add_weighted, fill_rows, mlp_from_tables

    rng = np.random.default_rng(d + f + i)
    width, off = d + 1 + f, d + 1
    lo = rng.normal(size=(n_heads, width, BS))
    hi = rng.normal(size=(2, n_heads, width))
    iv = rng.random(size=(n_heads, BS)) + 0.1
    z = rng.random(size=BS) * 3
    g0a, g0b, c0 = rng.normal(size=f), rng.normal(size=f), rng.normal(size=f)
    w2, b2 = rng.normal(size=(d, f)), rng.normal(size=d)
    lo[0, off + 1, 3] = np.nan  # a NaN stays in its string's output, and max skips it
    hid = np.empty((f, BS))
    fill_rows(hid, g0a, g0b, i, lo_q)
    for hd in range(n_heads):
        add_weighted(hid, lo[hd], off, hi[0, hd], hi[1, hd], off, f, iv[hd], i, lo_q)
    hid = hid * z + c0[:, None]
    relu_scalar(hid)
    want = np.empty((d, BS))
    matvec_mid(hid, np.ascontiguousarray(w2.T), b2, 0, d, want)
    want_max = np.empty(BS)
    col_absmax(hid, want_max)
    out, xmax = np.empty((d, BS)), np.empty(BS)
    mlp_from_tables(
        lo, off, hi, iv, z, g0a, g0b, c0, np.ascontiguousarray(w2.T), b2, out, xmax, i, lo_q
    )
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(xmax, want_max)


def _hard_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Normal values with the cases where a reordered or rewritten sum would show: -0.0, +0.0,
    subnormals, values near overflow, exact cancellations, a NaN and an inf."""
    x = rng.normal(size=shape) * rng.choice([1e-300, 1e-8, 1.0, 1e8], size=shape)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 40), replace=False)
    specials = [-0.0, 0.0, 5e-324, -5e-324, 1e308, -1e308, 2.2e-308, np.nan, np.inf, -np.inf]
    for k, p in enumerate(picks):
        flat[p] = specials[k % len(specials)]
    return x


def _eq(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit, NaN equal to NaN and -0.0 told apart from +0.0."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(np.array_equal(a.view(np.int64), b.view(np.int64)) or (
        np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a), np.signbit(b))
    ))  # fmt: skip


@pytest.mark.parametrize(("d", "nb", "eps"), [(16, 64, 0.0), (5, 8, 1e-5), (33, 40, 0.0)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ln_block_matches_the_sequential_loops(d: int, nb: int, eps: float, seed: int) -> None:
    """``register_sums.ln_block`` against the Numba loops it replaced (sequential sums over
    the rows, numpy elementwise: each operation rounded once), including LS_SC and 2 LS_CSUM as
    the DD Lipschitz rule computes them at a zero low part (sums of c + 0 and |c| + |c + 0|)."""
    from numba import njit

    from verify.model.stages import register_sums as rsum

    @njit
    def run(v, out, ls, g, b, eps, bounds, affine):  # pragma: no cover - jitted
        rsum.ln_block(v, out, ls, g, b, eps, bounds, affine, 0)

    rng = np.random.default_rng(seed)
    v = _hard_values(rng, (d, nb))
    if seed == 2:
        v[:, 0] = 3.25  # a constant column: var = 0, z = inf at eps = 0
        v[:, 1] = -0.0
    g, bias = rng.normal(size=d), rng.normal(size=d)
    with np.errstate(all="ignore"):
        mean = np.zeros(nb)
        for i in range(d):
            mean = mean + v[i]
        mean = mean / d
        c = v - mean
        ss, sabs, csum, cmax, sc, sac = (np.zeros(nb) for _ in range(6))
        for i in range(d):
            c2 = c[i] + 0.0
            ss = ss + c[i] * c[i]
            sabs = sabs + np.abs(v[i])
            csum = csum + np.abs(c[i])
            cmax = np.where(np.abs(c[i]) > cmax, np.abs(c[i]), cmax)
            sc = sc + c2
            sac = sac + (np.abs(c[i]) + np.abs(c2))
        var = ss / d
        z = 1.0 / np.sqrt(var + eps)
        affine = c * z * g[:, None] + bias[:, None]
    for bounds in (0, 1):
        for aff in (0, 1):
            out = np.full((d, nb), 7.0)
            ls = np.full((rsum.LS_ROWS, nb), 7.0)
            run(v, out, ls, g, bias, eps, bounds, aff)
            assert _eq(out, affine if aff else c)
            for row, want in ((rsum.LS_MEAN, mean), (rsum.LS_SS, ss), (rsum.LS_VAR, var),
                              (rsum.LS_Z, z)):  # fmt: skip
                assert _eq(ls[row], want), row
            if bounds:
                want_sums = {rsum.LS_SABS: sabs, rsum.LS_CSUM: csum, rsum.LS_CMAX: cmax,
                        rsum.LS_SC: sc}  # fmt: skip
                for row, want in want_sums.items():
                    assert _eq(ls[row], want), row
                assert _eq(2.0 * ls[rsum.LS_CSUM], sac)  # what stage_l2.layer_norm_l2 passes


@pytest.mark.parametrize(("s", "d", "nb"), [(21, 16, 64), (3, 5, 8), (9, 33, 24)])
def test_column_sums_match_the_sequential_loops(s: int, d: int, nb: int) -> None:
    """``dots_rows``, ``mix_rows``, ``dist2_rows`` and ``norms_rows`` against sequential
    numpy loops (each operation rounded once, the sums in the documented order)."""
    from numba import njit

    from verify.model.stages import register_sums as rsum

    @njit
    def run(a, x, init, p, m, o_dots, o_mix, o_dist, o_sq, o_max):  # pragma: no cover
        rsum.dots_rows(a, x, init, o_dots)
        rsum.mix_rows(p, x, o_mix)
        rsum.dist2_rows(x, m, o_dist)
        rsum.norms_rows(x, o_sq, o_max)

    rng = np.random.default_rng(s * d)
    x = _hard_values(rng, (s, d, nb))
    a, m, p = _hard_values(rng, (d, nb)), _hard_values(rng, (d, nb)), rng.random((s, nb))
    init = rng.normal(size=nb)
    with np.errstate(all="ignore"):
        dots = np.empty((s, nb))
        dist = np.empty((s, nb))
        sq = np.empty((s, nb))
        amax = np.empty((s, nb))
        for j in range(s):
            acc, acc2, acc3, mx = init.copy(), np.zeros(nb), np.zeros(nb), np.zeros(nb)
            for k in range(d):
                acc = acc + a[k] * x[j, k]
                dx = x[j, k] - m[k]
                acc2 = acc2 + dx * dx
                ax = np.abs(x[j, k]) + np.abs(0.0)
                acc3 = acc3 + ax * ax
                mx = np.where(np.abs(x[j, k]) > mx, np.abs(x[j, k]), mx)
            dots[j], dist[j], sq[j], amax[j] = acc, acc2, acc3, mx
        mix = np.zeros((d, nb))
        for j in range(s):
            mix = mix + p[j] * x[j]
    outs = [np.full(shape, 7.0) for shape in ((s, nb), (d, nb), (s, nb), (s, nb), (s, nb))]
    run(a, x, init, p, m, *outs)
    for got, want in zip(outs, (dots, mix, dist, sq, amax), strict=True):
        assert _eq(got, want)


@pytest.mark.parametrize(("s", "d", "nb"), [(21, 16, 64), (3, 5, 8), (9, 33, 24)])
def test_two_head_column_sums_are_the_one_head_sums(s: int, d: int, nb: int) -> None:
    """``dots_rows2`` and ``mix_rows2`` (two sums per pass over x) give each sum of
    ``dots_rows`` and ``mix_rows`` bit for bit."""
    from numba import njit

    from verify.model.stages import register_sums as rsum

    @njit
    def run(a, a2, x, init, init2, p, p2, outs):  # pragma: no cover
        rsum.dots_rows(a, x, init, outs[0])
        rsum.dots_rows(a2, x, init2, outs[1])
        rsum.dots_rows2(a, a2, x, init, init2, outs[2], outs[3])
        rsum.mix_rows(p, x, outs[4])
        rsum.mix_rows(p2, x, outs[5])
        rsum.mix_rows2(p, p2, x, outs[6], outs[7])

    rng = np.random.default_rng(s + d)
    x = _hard_values(rng, (s, d, nb))
    a, a2 = _hard_values(rng, (d, nb)), _hard_values(rng, (d, nb))
    p, p2 = rng.random((s, nb)), rng.random((s, nb))
    init, init2 = rng.normal(size=nb), rng.normal(size=nb)
    small = [np.full((s, nb), 7.0) for _ in range(4)] + [np.full((d, nb), 7.0) for _ in range(4)]
    with np.errstate(all="ignore"):
        run(a, a2, x, init, init2, p, p2, tuple(small))
    for one, two in ((0, 2), (1, 3), (4, 6), (5, 7)):
        assert _eq(small[two], small[one])


@pytest.mark.parametrize(("eps", "seed"), [(0.0, 0), (1e-5, 1), (0.0, 2)])
def test_layer_norm_l2_lipschitz_is_the_dd_rule(eps: float, seed: int) -> None:
    """``stage_l2.layer_norm_l2`` takes its Lipschitz constant from the sums of
    ``ln_block``; it is ``dd_l2.layer_norm_lipschitz`` at a zero low part, bit for bit."""
    from verify.model.double_double.dd_l2 import layer_norm_lipschitz
    from verify.model.stages.register_sums import LS_ROWS
    from verify.model.stages.stage_l2 import layer_norm_l2

    rng = np.random.default_rng(seed)
    d = 16
    v = _hard_values(rng, (d, BS))
    v[:, 5] = 1.0  # a constant column: the ball reaches var = 0 at eps = 0
    # nearly constant columns, spread of a few ulps: the rounded mean leaves sum c_i of the
    # order of |c|_2, where the rule's cancellation terms (sum c, sum |c|) decide the bound
    ulp = np.spacing(1.0)
    v[:, 6:14] = 1.0 + ulp * rng.integers(-3, 4, size=(d, 8))
    rv = rng.random(BS) * rng.choice([1e-14, 1e-3, 10.0], size=BS)
    rv[6:14] = 0.0
    g, b = rng.normal(size=d), rng.normal(size=d)
    zero = np.zeros((d, BS))
    out, rout, lip = np.empty((d, BS)), np.empty(BS), np.empty(BS)
    with np.errstate(all="ignore"):
        layer_norm_l2(v, rv, g, b, 1.5, 2.0, eps, False, out, rout, np.empty((LS_ROWS, BS)), zero,
                      lip, True)  # fmt: skip
        want = np.empty(BS)
        layer_norm_lipschitz(v, zero, rv, eps, False, 1.5, want)
    assert _eq(lip, want)
