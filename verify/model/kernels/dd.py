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

from numba import types
from numba.extending import intrinsic

from verify._numba import kernel
from verify.model.kernels.bundles import f8, i8
from verify.model.rounding import U

UU = U * U  # 2^-104
DD_ADD = 2.0 * UU  # dd_add, dd_add_d (a centred difference, a residual addition)
DD_MUL = 4.0 * UU  # dd_mul, dd_mul_d
EXP_DD = 2.0**-80  # dd_exp, relative
DD = types.UniTuple(f8, 2)

LN2_HI = 0.6931471805599453  # ln 2 = LN2_HI + LN2_LO + O(2^-106)
LN2_LO = 2.3190468138462996e-17
INV_LN2 = 1.4426950408889634
EXP_SQUARINGS = 5  # exp(r) = (exp(r / 2^5))^(2^5)
EXP_TAYLOR = 11  # degree of the Taylor polynomial of expm1 on |t| <= 0.0109


def _inverse_factorials(n: int) -> tuple[tuple[float, float], ...]:
    """1/k! for k = 0..n as DD (hi, lo): hi = fl(1/k!), lo = fl(1/k! - hi), so the error is
    <= u |lo| <= u^2 / k! (exact rational arithmetic)."""
    out = []
    for k in range(n + 1):
        x = Fraction(1, math.factorial(k))
        hi = float(x)
        out.append((hi, float(x - Fraction(hi))))
    return tuple(out)


INV_FACT = _inverse_factorials(EXP_TAYLOR)  # a compile-time constant in the kernels


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
    """1/j as a DD (error <= u^2 / j: the second part is the rounded remainder)."""
    h = 1.0 / j
    p, e = two_prod(h, float(j))  # h j = 1 - rho exactly
    rho = (1.0 - p) - e
    return fast_two_sum(h, rho * h)


@kernel(DD(f8, f8))
def dd_exp(ah, al):  # pragma: no cover - jitted
    """exp(ah + al) for ah <= 709: relative error <= EXP_DD, plus TINY absolute when the result
    is subnormal or 0 (ah < -708).

    Derivation: k = round(ah / ln 2) (|k| <= 1077); r = a - k LN2_HI - k LN2_LO with k LN2_HI
    exact (TwoProd), two DD additions (<= 0.76 UU |r| + 0.51 UU |r|) and k LN2_LO rounded
    (<= u 1077 2.4e-17 < 3e-30), and |ln 2 - LN2_HI - LN2_LO| <= 2^-107 contributes <= 1077
    2^-107 < 7e-30: |r| <= 0.35 with an absolute error < 1.1e-29, i.e. a relative error
    < 1.2e-29 of exp(r). t = r / 2^5 (exact), |t| <= 0.0109; expm1(t) = t q(t) with q the
    Taylor polynomial sum_{k<=10} t^k / (k + 1)! by Horner on the DD constants INV_FACT (each
    within u^2 / k!): remainder <= |t|^11 / 12! (1 + |t|) < 6e-31 relative. Each Horner step
    q <- q t + c (dd_mul, dd_add: <= 1.76 UU + 0.76 UU relative to the step's value, plus the
    constant's u^2 c) adds <= 2.6 UU relative to q_k, and since |t q_{k+1}| <= 0.011 |q_k| (no
    cancellation) the earlier errors are damped by 0.011: q within 2.7 UU, t q within 4.5 UU
    < 3e-31 relative; with the remainder < 1e-30. Five steps e <- 2e + e^2 (expm1(2t) =
    expm1(t)(2 + expm1(t)), no cancellation) each add <= 2.6 UU relative and carry the earlier
    relative error with a factor (2 + 2e)/(2 + e) <= 1.2: < 1.2^5 (1e-30 + 5 2.6 UU) < 5e-30
    relative to expm1(r), and |expm1(r)| <= 0.42 exp(r). 1 + e: 0.51 UU. Scaling by 2^k
    (ldexp) is exact unless the result is subnormal (then <= 2^-1074 per part, inside TINY).
    Sum: < 1.2e-29 + 2.1e-30 + 3e-32 < 1.5e-29 = 2^-95.7 relative, so EXP_DD = 2^-80 has a
    margin of 2^15."""
    if ah != ah:
        return ah, 0.0
    if ah > 709.0:
        return math.inf, 0.0
    if ah < -746.0:
        return 0.0, 0.0
    k = float(round(ah * INV_LN2))
    ph, pl = two_prod(k, LN2_HI)
    rh, rl = dd_add(ah, al, -ph, -pl)
    rh, rl = dd_add_d(rh, rl, -(k * LN2_LO))
    scale = 1.0 / (1 << EXP_SQUARINGS)
    th = rh * scale
    tl = rl * scale
    qh, ql = INV_FACT[EXP_TAYLOR]
    for j in range(EXP_TAYLOR - 1, 0, -1):  # q <- q t + 1/j!
        ch, cl = INV_FACT[j]
        sh, sl = dd_mul(qh, ql, th, tl)
        qh, ql = dd_add(sh, sl, ch, cl)
    eh, el = dd_mul(th, tl, qh, ql)  # expm1(t)
    for _ in range(EXP_SQUARINGS):
        sh, sl = dd_mul(eh, el, eh, el)
        eh, el = dd_add(sh, sl, 2.0 * eh, 2.0 * el)
    eh, el = dd_add_d(eh, el, 1.0)
    ki = int(k)
    return math.ldexp(eh, ki), math.ldexp(el, ki)
