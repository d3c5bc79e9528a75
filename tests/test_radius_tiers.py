"""Radius rules of the exhaustive kernel (scalar and 2-norm radii), with teeth (issue 25).

- A scalar (infinity-norm) rule bounds every component by the componentwise rule's formula
  with |c_i| <= max|c|, sum |c_i|, |W| rows <= ||W||_inf, ...: so its radius is at least the
  largest componentwise radius of the independent implementation
  (``tests/_per_string_reference.py``) on the same input with the same input radius. Checked
  for ``matvec_scalar`` and ``layer_norm_scalar``.
- The input-ball constructions of ``tests/test_radius_constructions.py`` for the other rules:
  the worst point of the input ball (the top singular vector for a product's 2-norm rule, a
  direction orthogonal to 1 and c for the layer norm's Lipschitz constant, sign(c) for the
  z-error term) must stay inside the output ball, and its error reaches most of the radius, so
  a halved spectral norm or Lipschitz constant, or a dropped z-error term, fails (the
  double-double tier's layer norm and softmax: ``tests/test_radius_constructions.py``).

These stages use the register intrinsics, so they run with the JIT only (the default pytest
run), not in the mutation suite's pure-Python processes.
"""

from __future__ import annotations

from fractions import Fraction

import _per_string_reference as ref
import numpy as np
from flint import arb
from test_radius_constructions import arb_layer_norm

from verify.model.arithmetic.contexts import arb_precision
from verify.model.arithmetic.matrix_norms import spectral_norm_upper
from verify.model.stages.bundles import BS
from verify.model.stages.dense import matvec_scalar
from verify.model.stages.layer_norm import layer_norm_scalar
from verify.model.stages.register_sums import LS_ROWS
from verify.model.stages.stage_l2 import layer_norm_l2, matvec_l2


def row_sum_upper(w: np.ndarray) -> float:
    """max_j sum_k |W_jk| rounded up (exact rationals)."""
    exact = max(sum(Fraction(float(abs(v))) for v in row) for row in w)
    up = float(exact)
    return up if Fraction(up) >= exact else float(np.nextafter(up, np.inf))


def inputs(seed: int, n: int, offset: float = 0.0) -> np.ndarray:
    return offset + np.random.default_rng(seed).normal(size=(n, BS))


def run_matvec_scalar(x, rx, w, b):
    m = w.shape[0]
    out, rout, xmax = np.zeros((m, BS)), np.zeros(BS), np.zeros(BS)
    wt = np.ascontiguousarray(w.T)
    matvec_scalar(x, rx, wt, b, 0, m, row_sum_upper(w), float(np.abs(b).max()), out, rout, xmax,
                  True)  # fmt: skip
    return out, rout


def test_matvec_scalar_at_least_the_componentwise_rule() -> None:
    rng = np.random.default_rng(0)
    for n, m, rho in ((8, 8, 0.0), (16, 32, 0.0), (16, 8, 1e-9), (5, 3, 1e-14)):
        w, b = rng.normal(size=(m, n)), rng.normal(size=m)
        x = inputs(n, n)
        _, rout = run_matvec_scalar(x, np.full(BS, rho), w, b)
        _, rc = ref.matvec(x, np.full((n, BS), rho), np.ascontiguousarray(w.T), b, 0, m)
        ratio = rout / rc.max(axis=0)
        print(n, m, rho, "scalar / componentwise: min", ratio.min())
        assert np.all(ratio >= 1 - ref.REL)


def run_layer_norm_scalar(v, rv, gain, bias, eps):
    d = v.shape[0]
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    gmax, bmax = float(np.abs(gain).max()), float(np.abs(bias).max())
    layer_norm_scalar(v, rv, gain, bias, gmax, bmax, eps, False, out, rout, ls, True)
    return out, rout


def test_layer_norm_scalar_at_least_the_componentwise_rule() -> None:
    rng = np.random.default_rng(1)
    for d, eps, offset, rho in ((8, 0.0, 0.0, 0.0), (16, 1e-5, 0.0, 1e-10), (8, 0.0, 300.0, 0.0)):
        v = inputs(d + 1, d, offset)
        gain, bias = rng.normal(size=d), rng.normal(size=d)
        _, rout = run_layer_norm_scalar(v, np.full(BS, rho), gain, bias, eps)
        _, rc = ref.layer_norm(v, np.full((d, BS), rho), gain, bias, eps)
        ratio = rout / rc.max(axis=0)
        print(d, eps, offset, rho, "scalar / componentwise: min", ratio.min())
        assert np.all(ratio >= 1 - ref.REL)


def spike(d: int = 64) -> np.ndarray:
    """One large centred entry among many small ones of both signs (the z-error construction
    of test_radius_constructions)."""
    v = np.where(np.arange(d) % 2 == 0, 0.7, -0.7)
    v[0] = 6.0
    return v


def worst_error(v: np.ndarray, delta: np.ndarray, computed: float, component: int) -> float:
    with arb_precision(200):
        ex = arb_layer_norm([arb(float(a)) + float(e) for a, e in zip(v, delta, strict=True)])
        return float(abs(ex[component] - arb(float(computed))).upper())


def test_z_error_term_of_the_scalar_layer_norm() -> None:
    """The sign(c) corner of an input ball of radius rho moves LN's output 0 by ~3.5 rho z, past
    the ~2 rho z of r_c z: the scalar rule needs max|c| r_z (the componentwise and
    double-double rules: tests/test_radius_constructions.py)."""
    v = spike()
    d = v.shape[0]
    rho = 1e-7
    delta = rho * np.sign(v - v.mean())
    vb = np.repeat(v[:, None], BS, axis=1)
    out, rout = run_layer_norm_scalar(vb, np.full(BS, rho), np.ones(d), np.zeros(d), 0.0)
    z = 1 / np.sqrt(np.mean((v - v.mean()) ** 2))
    err = worst_error(v, delta, out[0, 0], 0)
    print(f"scalar rule: error {err / (rho * z):.3f} rho z, radius {rout[0] / (rho * z):.3f}")
    assert err <= rout[0] and err >= 3 * rho * z


def test_matvec_l2_contains_the_top_singular_direction() -> None:
    """|W (x + rho v1) + b - out|_2 = sigma_1 rho + rounding: within the 2-norm radius, and at
    least 0.9 of it (the spectral bound is within n^(1/64) of sigma_1)."""
    rng = np.random.default_rng(2)
    for n, m in ((8, 8), (16, 4), (4, 16)):
        w, b = rng.normal(size=(m, n)), rng.normal(size=m)
        x = inputs(n + 7, n)
        rho = 1e-6
        v1 = np.linalg.svd(w)[2][0] * (1 - 1e-9)  # |v1|_2 < 1
        out, rout, xmax = np.zeros((m, BS)), np.zeros(BS), np.zeros(BS)
        zero, one = np.zeros(BS), np.ones(BS)
        matvec_l2(x, np.full(BS, rho), np.ascontiguousarray(w.T), b, 0, m, row_sum_upper(w),
                  float(np.abs(b).max()), spectral_norm_upper(w), out, rout, xmax, zero, one,
                  True)  # fmt: skip
        with arb_precision(200):
            col = 0
            xe = [arb(float(x[k, col])) + rho * float(v1[k]) for k in range(n)]
            e2 = arb(0)
            for j in range(m):
                yj = sum((arb(float(w[j, k])) * xe[k] for k in range(n)), arb(float(b[j])))
                e2 += (yj - arb(float(out[j, col]))) ** 2
            err = float(e2.sqrt().upper())
        print(n, m, f"error / radius {err / rout[col]:.4f}")
        assert err <= rout[col] and err >= 0.9 * rout[col]


def test_layer_norm_l2_contains_its_steepest_direction() -> None:
    """LN's Jacobian z (I - 11^T/d - c^ c^T/d) has norm z along directions orthogonal to 1 and
    c: a move of rho there moves the output by ~z rho, which the 2-norm radius must hold."""
    d = 16
    v = np.random.default_rng(3).normal(size=d)
    c = v - v.mean()
    t = np.random.default_rng(4).normal(size=d)
    t -= t.mean()
    t -= c * (t @ c) / (c @ c)
    rho = 1e-6
    delta = rho * (1 - 1e-9) * t / np.linalg.norm(t)
    vb = np.repeat(v[:, None], BS, axis=1)
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    layer_norm_l2(vb, np.full(BS, rho), np.ones(d), np.zeros(d), 1.0, 0.0, 0.0, False, out, rout,
                  ls, np.zeros((d, BS)), np.zeros(BS), True)  # fmt: skip
    with arb_precision(200):
        ex = arb_layer_norm([arb(float(a)) + float(e) for a, e in zip(v, delta, strict=True)])
        e2 = sum(((ex[i] - arb(float(out[i, 0]))) ** 2 for i in range(d)), arb(0))
        err = float(e2.sqrt().upper())
    z = 1 / np.sqrt(np.mean(c**2))
    print(f"error {err / (rho * z):.4f} rho z, radius {rout[0] / (rho * z):.4f} rho z")
    assert err <= rout[0] and err >= 0.9 * rout[0]
