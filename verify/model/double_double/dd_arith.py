"""Double-double (DD) arithmetic for the middle precision tier, with its error bounds.

A DD number is an unevaluated sum h + l of two float64 with |l| <= u |h| (u = 2^-53), about 106
bits. The algorithms are those of Joldes, Muller and Popescu, "Tight and rigorous error bounds
for basic building blocks of double-word arithmetic" (ACM TOMS 44, 2017; JMP below), built on
the error-free transformations TwoSum, Fast2Sum and TwoProd (TwoProd with a fused multiply-add,
``fma``: LLVM's llvm.fma.f64, one rounding, a libm call where the CPU has no FMA). Each
function's doc gives its relative error bound; the constants below bound them with a margin of
at least 2, in units of ``UU`` = U^2 = 2^-104 = 4 u^2:

- ``dd_add`` (JMP Alg. 6, AccurateDWPlusDW): 3 u^2 / (1 - 4u) <= 0.76 UU relative to the exact
  sum of the inputs; ``dd_add_d`` (Alg. 4, DWPlusFP): 2 u^2 / (1 - 2u) <= 0.51 UU;
- ``dd_mul_d`` (Alg. 9, DWTimesFP3): 2 u^2 <= 0.5 UU; ``dd_mul`` (Alg. 11 without the xl yl
  term): <= 7 u^2 (1 + 4u) <= 1.76 UU (derivation in its doc);
- ``dd_exp``: relative error <= 2^-80 plus ``TINY`` absolute (estimate about 1e-29; derivation
  in its doc).

Division and square root are not given a priori bounds: the kernels bound 1/t and 1/sqrt(v) a
posteriori from the residual 1 - t q, 1 - v z^2 evaluated with the bounds above.

Underflow: TwoProd is exact only while a b e does not underflow; each such loss is <= 2^-1075,
covered by the ETA that every radius receives. Overflow gives inf or NaN, never a finite
certified value (the callers test finiteness).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
from numba import types
from numba.extending import intrinsic

from verify._numba import kernel
from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import f8, i8

UU = U * U  # 2^-104
DD_ADD = 2.0 * UU  # dd_add, dd_add_d (a centred difference, a residual addition)
DD_MUL = 4.0 * UU  # dd_mul, dd_mul_d
EXP_DD = 2.0**-80  # dd_exp, relative
DD = types.UniTuple(f8, 2)

LN2_HI = 0.6931471805599453  # ln 2 = LN2_HI + LN2_LO + O(2^-106)
LN2_LO = 2.3190468138462996e-17
INV_LN2 = 1.4426950408889634
EXP_TABLE = 64  # exp(a) = 2^m 2^(j/64) exp(r), |r| <= ln 2 / 128
EXP_TAYLOR = 10  # degree of the Taylor polynomial of expm1 on |r| <= 0.00542


def _inverse_factorials(n: int) -> tuple[tuple[float, float], ...]:
    """1/k! for k = 0..n as DD (hi, lo): hi = fl(1/k!), lo = fl(1/k! - hi), so the error is
    <= u |lo| <= u^2 / k! (exact rational arithmetic)."""
    out = []
    for k in range(n + 1):
        x = Fraction(1, math.factorial(k))
        hi = float(x)
        out.append((hi, float(x - Fraction(hi))))
    return tuple(out)


def _exp2_table(n: int) -> tuple[tuple[float, float], ...]:
    """2^(j/n) for j = 0..n-1 as DD (hi, lo) from 300-bit mpmath values: error <= u |lo| +
    2^-290 <= 1.01 u^2 2^(j/n)."""
    with mpmath.workprec(300):
        out = []
        for j in range(n):
            x = mpmath.mpf(2) ** (mpmath.mpf(j) / n)
            hi = float(x)
            out.append((hi, float(x - hi)))
    return tuple(out)


INV_FACT = _inverse_factorials(EXP_TAYLOR)  # compile-time constants in the kernels
EXP2_TABLE = _exp2_table(EXP_TABLE)


@intrinsic
def fma(typingctx, a, b, c):  # pragma: no cover - code generation
    """a * b + c with one rounding (llvm.fma.f64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@kernel(DD(f8, f8))
def two_sum(a, b):  # pragma: no cover - jitted
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@kernel(DD(f8, f8))
def fast_two_sum(a, b):  # pragma: no cover - jitted
    """(s, e) with s + e = a + b exactly, when |a| >= |b| or a = 0 (Dekker)."""
    s = a + b
    return s, b - (s - a)


@kernel(DD(f8, f8))
def two_prod(a, b):  # pragma: no cover - jitted
    """(p, e) with p = fl(a b) and p + e = a b exactly (no underflow)."""
    p = a * b
    return p, fma(a, b, -p)


@kernel(DD(f8, f8, f8, f8, f8, f8))
def dd_dot_step(sh, sl, ah, al, bh, bl):  # pragma: no cover - jitted
    """One term of a compensated dot product of DD vectors (Dot2 of Ogita, Rump & Oishi, with
    the cross terms): sh' = fl(sh + ah bh), sl' = sl + the exact errors of that sum and product
    + fl(ah bl + al bh). The caller bounds the error of n terms, cross terms and the final
    TwoSum included, by (n + 3)^2 UU sum |a| |b| (``dd_l2.attention_l2``: g_dot, g_av)."""
    p = ah * bh
    err = fma(ah, bh, -p)
    t = sh + p
    bb = t - sh
    return t, sl + ((((sh - (t - bb)) + (p - bb)) + err) + fma(ah, bl, al * bh))


@kernel(DD(f8, f8, f8, f8))
def dd_add(xh, xl, yh, yl):  # pragma: no cover - jitted
    """x + y (JMP Alg. 6): relative error <= 3 u^2 / (1 - 4u), also under cancellation."""
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    c = sl + th
    vh, vl = fast_two_sum(sh, c)
    w = tl + vl
    return fast_two_sum(vh, w)


@kernel(DD(f8, f8, f8))
def dd_add_d(xh, xl, y):  # pragma: no cover - jitted
    """x + y for a float64 y (JMP Alg. 4): relative error <= 2 u^2 / (1 - 2u)."""
    sh, sl = two_sum(xh, y)
    v = xl + sl
    return fast_two_sum(sh, v)


@kernel(DD(f8, f8, f8))
def dd_mul_d(xh, xl, y):  # pragma: no cover - jitted
    """x y for a float64 y (JMP Alg. 9): relative error <= 2 u^2."""
    ch, cl1 = two_prod(xh, y)
    cl3 = fma(xl, y, cl1)
    return fast_two_sum(ch, cl3)


@kernel(DD(f8, f8, f8, f8))
def dd_mul(xh, xl, yh, yl):  # pragma: no cover - jitted
    """x y: ch + cl1 = xh yh exactly; tl = xh yl (1 + d1); cl2 = (xl yh + tl)(1 + d2);
    cl3 = (cl1 + cl2)(1 + d3); the xl yl term (<= u^2 |xh yh|) is dropped. With |cl1| <= u
    |xh yh| and |cl2| <= 2u (1 + u)^2 |xh yh| the error is <= (u^2 + 2u^2 + 3u^2 + u^2)(1 + 3u)
    |xh yh| <= 7 u^2 (1 + 4u) |x y|, and Fast2Sum is exact (|cl3| < |ch|)."""
    ch, cl1 = two_prod(xh, yh)
    tl = xh * yl
    cl2 = fma(xl, yh, tl)
    cl3 = cl1 + cl2
    return fast_two_sum(ch, cl3)


@kernel(DD(i8))
def inverse_int(j):  # pragma: no cover - jitted
    """1/j as a DD: h = fl(1/j), rho = 1 - h j exactly (|rho| <= u), l = fl(rho h), so
    |h + l - 1/j| <= rho^2 / j + u |rho h| <= (2 + u) u^2 / j (u^2 / j alone is exceeded: j =
    117 gives 1.17 u^2 / j). Its one caller, ``dd_norm``'s mean and variance, bounds the product
    with 1/j by DD_MUL = 16 u^2, which holds dd_mul's 7 u^2 (1 + 4u) plus this 2.01 u^2."""
    h = 1.0 / j
    p, e = two_prod(h, float(j))  # h j = 1 - rho exactly
    rho = (1.0 - p) - e
    return fast_two_sum(h, rho * h)


@kernel(DD(f8, f8))
def dd_exp(ah, al):  # pragma: no cover - jitted
    """exp(ah + al) for ah <= 709: relative error <= EXP_DD, plus TINY absolute when the result
    is subnormal or 0 (ah < -708).

    Derivation: k = round(ah 64 / ln 2) (|k| <= 68928), k = 64 m + j with 0 <= j < 64; r = a -
    k LN2_HI / 64 - k LN2_LO / 64 with k LN2_HI / 64 exact (TwoProd; the division by 64 is
    exact), two DD additions (<= 0.76 UU |r| + 0.51 UU |r|) and k LN2_LO / 64 rounded (<= u
    68928 2.4e-17 / 64 < 3e-30), and |ln 2 - LN2_HI - LN2_LO| <= 2^-107 contributes <= 1077
    2^-107 < 7e-30: |r| <= 0.00542 with an absolute error < 1.1e-29, i.e. a relative error
    < 1.2e-29 of exp(r). expm1(r) = r q(r) with q the Taylor polynomial sum_{k<=9} r^k /
    (k + 1)! by Horner on the DD constants INV_FACT (each within u^2 / k!): remainder <=
    |r|^10 / 11! (1 + |r|) < 6e-31 relative. Each Horner step q <- q r + c (dd_mul, dd_add)
    adds <= 2.6 UU relative to its value and, as |r q_{k+1}| <= 0.006 |q_k| (no
    cancellation), damps the earlier errors: r q within 4.5 UU < 3e-31 relative. 1 + e: 0.51
    UU, and |expm1(r)| <= 0.006 exp(r). The table value 2^(j/64) (EXP2_TABLE) is within 1.01
    u^2 = 0.26 UU, the product (dd_mul) adds 1.76 UU. Scaling by 2^m (ldexp) is exact unless
    the result is subnormal (then <= 2^-1074 per part, inside TINY). Sum: < 1.2e-29 + 4e-31 +
    2.6 UU < 1.4e-29 = 2^-95.8 relative, so EXP_DD = 2^-80 has a margin of 2^15."""
    if ah != ah:
        return ah, 0.0
    if ah > 709.0:
        return math.inf, 0.0
    if ah < -746.0:
        return 0.0, 0.0
    k = float(round(ah * (INV_LN2 * EXP_TABLE)))
    ph, pl = two_prod(k, LN2_HI / EXP_TABLE)
    rh, rl = dd_add(ah, al, -ph, -pl)
    rh, rl = dd_add_d(rh, rl, -(k * (LN2_LO / EXP_TABLE)))
    qh, ql = INV_FACT[EXP_TAYLOR]
    for j in range(EXP_TAYLOR - 1, 0, -1):  # q <- q r + 1/j!
        ch, cl = INV_FACT[j]
        sh, sl = dd_mul(qh, ql, rh, rl)
        qh, ql = dd_add(sh, sl, ch, cl)
    eh, el = dd_mul(rh, rl, qh, ql)  # expm1(r)
    eh, el = dd_add_d(eh, el, 1.0)
    m = math.floor(k / EXP_TABLE)
    th, tl = EXP2_TABLE[int(k - EXP_TABLE * m)]
    eh, el = dd_mul(eh, el, th, tl)
    mi = int(m)
    return math.ldexp(eh, mi), math.ldexp(el, mi)
