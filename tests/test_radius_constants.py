"""The rounding model's constants pinned, each with where it comes from (issue 25).

A radius rule is only as good as its constants: halving U or dropping the exp error would
leave every containment test green (float64's real errors are far below the worst case), so
the values are pinned here against their sources, and where the source is a property of this
machine's arithmetic it is also measured.

- U = 2^-52 (``verify.model.arithmetic.rounding``): IEEE 754 binary64 has precision p = 53, so round
  to nearest has unit roundoff u = 2^-53 (Higham, Accuracy and Stability of Numerical
  Algorithms, 2nd ed., 2002, Thm 2.2: fl(x op y) = (x op y)(1 + d), |d| <= u); U = 2u is the
  machine epsilon (the gap from 1 to the next float64), and the rules' gamma_n = n u / (1 - n
  u) <= n U for n U <= 1 (Higham Lemma 3.1).
- ETA = 1e-300: each operation that underflows loses at most half the smallest subnormal,
  2^-1075 (IEEE 754 gradual underflow), and every radius gets ETA per rule, far more than the
  losses of all its operations (<= 2^-1075 each: ETA covers ~2e23 of them), yet ~1e-285 of any
  radius of interest.
- EXP_ULPS = 8 (the rules allow a relative EXP_ULPS U, between 8 and 16 ulps): glibc's
  exp and expm1 (the libm that Numba's math.exp and math.expm1 call) are accurate to about
  half an ulp and the glibc manual's table of known maximum errors lists at most 1 ulp for
  both on x86_64 (recalled, not quoted: this test measures them instead); numpy's exp and
  expm1 (the generic MidRad pass) are measured too. The margin of 16 is for other libms.
- TINY = 1e-322 >= 16 subnormal ulps (16 * 2^-1074 = 7.9e-323): a bound of exp(a) where
  fl(exp(a)) underflows to a subnormal or 0.
- Double-double (``verify.model.double_double.dd_arith``): UU = U^2 = 4 u^2; DD_ADD = 2 UU >= 2 x
  Joldes-Muller-Popescu (ACM TOMS 44, 2017) Alg. 6's 3 u^2 / (1 - 4u); DD_MUL = 4 UU >= 2 x
  the 7 u^2 (1 + 4u) derived in ``dd_mul``'s doc; EXP_DD = 2^-80 >= 2^15 x the 1.4e-29
  derived in ``dd_exp``'s doc.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb

from verify.model.arithmetic import rounding
from verify.model.arithmetic.contexts import MidRadContext, arb_precision
from verify.model.double_double import dd_arith as dd

u = 2.0**-53  # the unit roundoff of binary64, round to nearest


def test_unit_roundoff() -> None:
    assert rounding.U == 2.0**-52 == np.finfo(np.float64).eps == 2 * u
    assert 1.0 + rounding.U != 1.0 and 1.0 + u == 1.0  # U is an ulp of 1; u, half of it, ties
    assert np.finfo(np.float64).nmant + 1 == 53  # p = 53
    for n in (1, 10, 1000, 2**20):  # gamma_n <= n U for every n the kernels use
        assert n * u / (1 - n * u) <= n * rounding.U


def test_eta_covers_underflow() -> None:
    smallest = 2.0**-1074
    assert smallest == np.nextafter(0.0, 1.0)
    assert rounding.ETA == 1e-300 and rounding.ETA >= 2.0**70 * smallest  # ~1e21 losses
    assert 0.75 * smallest == smallest and 0.25 * smallest == 0.0  # losses <= 2^-1075 each


def test_tiny_covers_an_underflowing_exp() -> None:
    assert rounding.TINY == 1e-322 and rounding.TINY >= 16 * 2.0**-1074
    with arb_precision(128):
        for a in (-744.0, -745.1, -746.0, -800.0):
            assert arb(a).exp() <= arb(math.exp(a)) + arb(rounding.TINY)


def _ulps(computed: np.ndarray, points: np.ndarray, fn: str) -> float:
    """The largest |computed - exact| over the points, in ulps of the exact value (arb)."""
    worst = 0.0
    with arb_precision(160):
        for x, c in zip(points, computed, strict=True):
            exact = getattr(arb(float(x)), fn)()
            ulp = float(np.spacing(abs(float(exact.mid()))))
            worst = max(worst, float(abs(arb(float(c)) - exact).upper()) / ulp)
    return worst


def test_exp_error_in_ulps() -> None:
    """EXP_ULPS = 8: a relative EXP_ULPS U is at least 8 ulps (U is 1 to 2 ulps relative);
    libm (math.exp, math.expm1) and numpy (the generic MidRad pass) measured on 3000 points
    each."""
    assert rounding.EXP_ULPS == 8.0
    allowed = rounding.EXP_ULPS
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-700.0, 700.0, 1000), rng.uniform(-1.0, 1.0, 2000)])
    y = rng.uniform(0.0, 30.0, 3000)
    rows = {
        "math.exp": _ulps(np.array([math.exp(v) for v in x]), x, "exp"),
        "numpy.exp": _ulps(np.exp(x), x, "exp"),
        "math.expm1": _ulps(np.array([math.expm1(v) for v in y]), y, "expm1"),
        "numpy.expm1": _ulps(np.expm1(y), y, "expm1"),
    }
    print("largest error in ulps (allowed", allowed, "):", rows)
    assert max(rows.values()) <= allowed


def test_one_over_sqrt_d_head() -> None:
    """1/sqrt(n) by a correctly rounded sqrt and division: within 2u (1 + u) < 2U relative."""
    for n in (1, 2, 3, 4, 8, 16, 64, 100):
        ball = MidRadContext().rsqrt_int(n)
        with arb_precision(128):
            assert abs(arb(float(ball.mid)) - arb(n).rsqrt()) <= arb(float(ball.rad))
        assert ball.rad <= 2 * rounding.U * ball.mid


def test_double_double_constants() -> None:
    assert dd.UU == rounding.U**2 == 4 * u**2
    assert dd.DD_ADD == 2 * dd.UU and dd.DD_ADD >= 2 * 3 * u**2 / (1 - 4 * u)
    assert dd.DD_MUL == 4 * dd.UU and dd.DD_MUL >= 2 * 7 * u**2 * (1 + 4 * u)
    assert dd.EXP_DD == 2.0**-80 and dd.EXP_DD >= 2**15 * 1.4e-29
    with arb_precision(200):
        ln2 = arb.log(arb(2))  # LN2_HI + LN2_LO within 2^-107 of ln 2
        assert abs(arb(dd.LN2_HI) + arb(dd.LN2_LO) - ln2) <= arb(2.0**-107)
