"""Constructions where a radius term's error materialises, measured exactly (issue 25).

Each test calls one stage of the per-string kernel on inputs built so that the error one term
covers actually occurs, computes the exact value (arb, or rationals), prints how close the
true error comes to the kernel's radius, and asserts both sides: the radius contains the error
(soundness) and the error reaches a stated fraction of the term (the construction
materialises it). Where the error exceeds what the radius would be without the term, a
mutant dropping that term fails here by containment alone.

- a softmax with a dominant logit and score balls: the worst point of the ball changes a small
  weight p_j by ~2 rho p_j, half through the numerator and half through the denominator, so
  the quotient rule's denominator radius is needed (error / radius 0.9999; float64 and
  double-double tiers);
- a layer norm at eps = 0 whose centred input has one large entry among many small ones, with
  an input ball: the worst point changes that output by ~3.5 rho z, more than the ~2 rho z of
  r_c z, so the z-error term |c| r_z is needed (float64 and double-double tiers);
- a layer norm of near-cancelling inputs (variance 2^-40 of the mean square) at eps = 0 and no
  input radius: the mean's rounding, amplified by 1/sqrt(var), is the error;
- sums that all round the same way (a matrix-vector product whose every group of four adds
  just under half an ulp to 1);
- a readout on the threshold (T ~ 0): the whole per-string kernel, error against radius;
- the exhaustive kernel's layer-0 quotient num / den with balls on both: the worst corner
  (num up, den down) needs the denominator's term a1 e_den.

Runs without the JIT too (tiny sizes, strings not a multiple of 8), so the radius mutation
suite runs it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb
from test_radius_rules import N_BITS, bits_for, model, on_threshold

from verify.model.arithmetic.contexts import arb_precision
from verify.model.double_double.dd_l2 import softmax_l2
from verify.model.double_double.dd_norm import layer_norm_dd
from verify.model.exhaustive.exhaustive_kernel import table_quotient_radius
from verify.model.generic.enclosure import enclose_output
from verify.model.per_string.per_string_pass import fast_T
from verify.model.stages.dense import matvec
from verify.model.stages.layer_norm import layer_norm
from verify.model.stages.register_sums import LS_ROWS, LS_RZ, LS_Z
from verify.model.stages.softmax import scaled_softmax

NB = 1  # one string per stage call (not a multiple of 8: no register intrinsics)
u = 2.0**-53


def col(x: np.ndarray) -> np.ndarray:
    return np.array(x, dtype=np.float64).reshape(-1, 1)  # a copy: the stages work in place


def run_softmax(a: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    s = a.shape[0]
    pm, pr = col(a), col(np.full(s, rho))
    scratch = [np.zeros(NB) for _ in range(4)]
    scaled_softmax(pm, pr, 1.0, *scratch, s, NB, True)
    return pm[:, 0], pr[:, 0]


def arb_softmax(a: list[arb]) -> list[arb]:
    e = [x.exp() for x in a]
    tot = sum(e, arb(0))
    return [x / tot for x in e]


def run_softmax_dd(a: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """The double-double tier's softmax (p_h + p_l, the enclosure's radius)."""
    s = a.shape[0]
    ph, pl, sig = col(a), np.zeros((s, NB)), col(np.full(s, rho))
    pr, p0 = np.zeros((s, NB)), np.zeros((s, NB))
    softmax_l2(ph, pl, sig, pr, p0)
    return ph[:, 0] + pl[:, 0], pr[:, 0] + np.abs(pl[:, 0])


@pytest.mark.parametrize("tier", ["float64", "double-double"])
def test_softmax_dominant_logit_needs_the_denominator_radius(tier: str) -> None:
    a = np.array([12.0, 0.5, 0.0, -0.25, 0.0, 1.0])
    rho = 1e-4
    p, rp = (run_softmax if tier == "float64" else run_softmax_dd)(a, rho)
    with arb_precision(200):
        for j in range(1, len(a)):  # raise a_j, lower every other score: p_j at its largest
            worst = [arb(float(v)) + (rho if k == j else -rho) for k, v in enumerate(a)]
            err = abs(arb_softmax(worst)[j] - arb(float(p[j])))
            ratio = float(err.upper()) / rp[j]
            numerator_only = p[j] * rho * 1.0002  # r_j / gap: ~ p_j expm1(rho) / (1 - rho)
            print(f"p_{j}={p[j]:.3e}: error / radius {ratio:.4f}, error / numerator part "
                  f"{float(err.upper()) / numerator_only:.3f}")  # fmt: skip
            assert err <= arb(float(rp[j]))  # sound
            assert err >= arb(1.9 * numerator_only)  # the denominator's half materialises


def layer_norm_stage(v: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(out, rout, z, r_z) of the kernel's layer norm at eps = 0, gain 1, bias 0."""
    d = v.shape[0]
    out, rout = np.zeros((d, NB)), np.zeros((d, NB))
    ls = np.zeros((LS_ROWS, NB))
    layer_norm(col(v), col(np.full(d, rho)), np.ones(d), np.zeros(d), 0.0, False, out, rout, ls,
               True)  # fmt: skip
    return out[:, 0], rout[:, 0], float(ls[LS_Z, 0]), float(ls[LS_RZ, 0])


def arb_layer_norm(v: list[arb]) -> list[arb]:
    d = len(v)
    mean = sum(v, arb(0)) / d
    c = [x - mean for x in v]
    var = sum((x * x for x in c), arb(0)) / d
    return [x * var.rsqrt() for x in c]


def layer_norm_dd_stage(v: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """(out, rout) of the double-double tier's layer norm at eps = 0, gain 1, bias 0 (out:
    the high parts; rout covers the low parts too)."""
    d = v.shape[0]
    oh, ol, ro = np.zeros((d, NB)), np.zeros((d, NB)), np.zeros((d, NB))
    layer_norm_dd(col(v), np.zeros((d, NB)), col(np.full(d, rho)), np.ones(d), np.zeros(d), 0.0,
                  False, oh, ol, ro, True)  # fmt: skip
    return oh[:, 0], ro[:, 0] + np.abs(ol[:, 0])


@pytest.mark.parametrize("tier", ["float64", "double-double"])
def test_layer_norm_z_error_materialises_from_an_input_ball(tier: str) -> None:
    d = 64
    v = np.where(np.arange(d) % 2 == 0, 0.7, -0.7)
    v[0] = 6.0  # one large centred entry among many small ones of both signs
    rho = 1e-7
    out, rout, z, rz = layer_norm_stage(v, rho)
    if tier == "double-double":
        out, rout = layer_norm_dd_stage(v, rho)
    c = v - v.mean()
    with arb_precision(200):
        worst = [arb(float(x)) + rho * float(np.sign(ci)) for x, ci in zip(v, c, strict=True)]
        err = abs(arb_layer_norm(worst)[0] - arb(float(out[0])))
    e = float(err.upper())
    rc_z = 2 * rho * z * (1 + 1e-6) + rz * 2 * rho  # r_c (z + r_z), r_c = rho + r_mean ~ 2 rho
    print(f"z={z:.4f}: error {e / (rho * z):.3f} rho z; radius {rout[0] / (rho * z):.3f} rho z, "
          f"of which |c| r_z {abs(c[0]) * rz / (rho * z):.3f} rho z")  # fmt: skip
    assert err <= arb(float(rout[0]))  # sound
    assert e >= 1.5 * rc_z  # beyond r_c (z + r_z): the z-error term is needed


def test_layer_norm_near_cancelling_variance_at_eps_zero() -> None:
    d = 8
    pattern = np.array([1, -1, 3, -3, 1, -1, 2, -2], dtype=float)
    v = 1.0 + 2.0**-20 * pattern + 2.0**-52 * np.arange(1, d + 1)  # the sum rounds
    out, rout, z, _ = layer_norm_stage(v, 0.0)
    with arb_precision(200):
        exact = arb_layer_norm([arb(float(x)) for x in v])
        errs = [float(abs(ex - arb(float(o))).upper()) for ex, o in zip(exact, out, strict=True)]
    ratio = max(e / r for e, r in zip(errs, rout, strict=True))
    print(f"z={z:.3e}: largest error / radius {ratio:.3f}; largest error {max(errs):.3e}")
    assert all(e <= r for e, r in zip(errs, rout, strict=True))
    assert max(errs) >= 1e3 * u  # cancellation: the error is far above float64's u ...
    assert ratio >= 0.01  # ... and within two decades of the radius


def test_sums_that_all_round_the_same_way() -> None:
    """out = 1 + sum_k w_k x_k with every group of four adding g = (1 - 2^-10) u: each
    addition to 1 rounds down by g, so the error is (n / 4) g."""
    n = 64
    g = (1 - 2.0**-10) * u
    wt = np.full((n, 1), g / 4)
    x, rx = np.ones((n, NB)), np.zeros((n, NB))
    out, rout, scratch = np.zeros((1, NB)), np.zeros((1, NB)), np.zeros((n, NB))
    matvec(x, rx, wt, np.abs(wt), np.ones(1), 0, 1, out, rout, scratch, True)
    exact = 1 + n * Fraction(g / 4)
    err = abs(exact - Fraction(float(out[0, 0])))
    ratio = float(err) / rout[0, 0]
    print(f"error {float(err) / u:.2f} u, radius {rout[0, 0] / u:.2f} u: ratio {ratio:.3f}")
    assert err <= Fraction(float(rout[0, 0]))
    assert float(err) >= (n / 4) * g * 0.99 and ratio >= 0.1


def test_readout_on_the_threshold() -> None:
    for config in ("post-L1", "pre-L2"):
        p = on_threshold(model(config))
        bits = bits_for(p)
        t, r = fast_T(p, bits)
        exact = enclose_output(p, bits, prec=200)
        with arb_precision(200):
            err = float(abs(exact[0] - arb(float(t[0]))).upper())
            assert arb(t[0]) - arb(r[0]) <= exact[0] <= arb(t[0]) + arb(r[0])
        print(f"{config}: T {t[0]:.2e}, error {err:.2e}, radius {r[0]:.2e}, ratio {err / r[0]:.2e}")
        assert abs(t[0]) <= 1e-12 and t.shape[0] == len(bits) and bits.shape[1] == N_BITS


def test_layer0_table_quotient_needs_the_denominator_radius() -> None:
    """The exhaustive kernel's A_h = num / den (``table_quotient_radius``, a1 and low as the
    kernel forms them): |(num + e_num) / (den - e_den) - fl(num / den)| within the radius, and
    more than e_num / low alone."""
    U = 2.0**-52
    for num, den, e_num, e_den in ((3.0, 2.0, 1e-9, 1e-9), (-0.7, 5.5, 1e-12, 3e-10)):
        a_max = abs(num) / den * (1 + U)
        a1 = (a_max * (den + e_den) + e_num) / den * (1 + 3 * U)
        low = (den - e_den) * (1 - U)
        r = table_quotient_radius(e_num, e_den, a1, low)
        q = num / den
        sign = 1.0 if num >= 0 else -1.0
        worst = (Fraction(num) + sign * Fraction(e_num)) / (Fraction(den) - Fraction(e_den))
        err = abs(worst - Fraction(q))
        print(f"num/den={q:.3f}: error / radius {float(err) / r:.6f}")
        assert err <= Fraction(r) and float(err) > 1.5 * e_num / low
