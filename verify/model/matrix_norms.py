"""Rigorous upper bounds of matrix norms, for the 2-norm radii of the rigorous passes.

``spectral_norm_upper(W)`` bounds |W|_2 by the squaring argument: with G the smaller Gram
matrix (W W^T or W^T W, symmetric positive semi-definite, largest eigenvalue |W|_2^2) and
k = 2^SQUARINGS, lambda^k <= |G^k|_F <= sqrt(n) lambda^k (n = the smaller side), so

    |W|_2 <= |G^k|_F^(1/(2k)) = (|G^k|_F^2)^(1/(4k)) <= n^(1/(4k)) |W|_2.

G^k is formed by repeated squaring in float64 midpoint-radius arithmetic
(``arith.MidRadContext.matmul``: every entry's ball holds the exact entry, by the dot-product
bound gamma_n |A| |B|, valid for any summation order and with FMA), after scaling W by an exact
power of two so that its largest entry lies in [1/2, 1): no overflow in G^k for any matrix
with fewer than 2^60 entries, and the top eigenvalue of the scaled Gram matrix is >= 1/4, so
nothing that matters underflows (the radii carry an absolute ETA per operation). The
(4k)-th root is 2 + SQUARINGS nested square roots, each correctly rounded and then raised by
(1 + 2U); scaling back is exact (ETA covers a subnormal result). Where the scaling is not
exact (entries that would turn subnormal) or a ball is not finite, the same argument runs in
arb (``_spectral_norm_upper_arb``, 128 bits), the earlier implementation: 0.54 ms against
0.09 ms for a 16 x 16 Gram matrix, which made the weight bounds the largest fixed cost of a
certified truth table at L >= 2.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb, arb_mat

from verify.model.arith import MidRad, MidRadContext, arb_precision
from verify.model.rounding import ETA, U, sum_upper, up

SQUARINGS = 4  # k = 16: the bound is within n^(1/64) of |W|_2


def spectral_norm_upper(w: np.ndarray) -> float:
    """An upper bound of the spectral norm |W|_2 of a float64 matrix, within a factor
    n^(1/64) (n = the smaller side) of it (module doc)."""
    m = np.asarray(w, dtype=np.float64)
    if m.shape[0] > m.shape[1]:
        m = m.T
    if not np.any(m):
        return 0.0
    bound = _spectral_norm_upper_float64(m)
    return _spectral_norm_upper_arb(m) if bound is None else bound


def _spectral_norm_upper_float64(m: np.ndarray) -> float | None:
    """The bound of the module doc in float64 midpoint-radius arithmetic, or None where the
    scaling would not be exact or a ball is not finite (m: rows <= columns, not all zero)."""
    if not np.isfinite(m).all():
        return None
    _, e = np.frexp(np.max(np.abs(m)))  # max |m| in [2^(e-1), 2^e)
    scaled = np.ldexp(m, -int(e))
    if not np.array_equal(np.ldexp(scaled, int(e)), m):  # an entry lost bits (subnormal)
        return None
    g = gram_power_ball(scaled, 1 << SQUARINGS)
    fro2 = frobenius_sq_upper(g)
    if not math.isfinite(fro2):
        return None
    root = root_upper(fro2, SQUARINGS + 2)  # (|G^k|_F^2)^(1/(4k))
    return math.ldexp(root, int(e)) + ETA  # exact scaling; ETA covers a subnormal result


def gram_power_ball(m: np.ndarray, k: int) -> MidRad:
    """Balls holding every entry of (M M^T)^k exactly (k a power of two): the Gram matrix and
    log2(k) squarings in ``MidRadContext`` arithmetic."""
    ctx = MidRadContext()
    g = ctx.matmul(MidRad(m), MidRad(m.T))
    while k > 1:
        g = ctx.matmul(g, g)
        k //= 2
    return g


def frobenius_sq_upper(g: MidRad) -> float:
    """An upper bound of sum_ij x_ij^2 over every matrix x in the balls g: the entries'
    magnitudes |mid| + rad rounded up, squared, summed (``rounding.sum_upper``)."""
    magnitude = up(np.abs(g.mid) + g.rad, 1)
    return float(sum_upper(np.sum(up(magnitude * magnitude, 1)), magnitude.size))


def root_upper(x: float, halvings: int) -> float:
    """An upper bound of x^(2^-halvings) for x >= 0: square roots, each correctly rounded
    (fl(sqrt(y)) >= sqrt(y) (1 - u)) and raised by (1 + 2U) (the product rounded to nearest is
    >= sqrt(y) (1 - u)^2 (1 + 4u) >= sqrt(y))."""
    for _ in range(halvings):
        x = math.sqrt(x) * (1 + 2 * U)
    return x


def _spectral_norm_upper_arb(m: np.ndarray) -> float:
    """The bound of the module doc with G^k in arb balls at 128 bits (m: rows <= columns)."""
    k = 1 << SQUARINGS
    with arb_precision(128):
        a = arb_mat(m.tolist())
        g = a * a.transpose()
        for _ in range(SQUARINGS):
            g = g * g
        fro = sum((g[i, j] ** 2 for i in range(g.nrows()) for j in range(g.ncols())), arb(0))
        bound = (fro.log() / (4 * k)).exp()  # |G^k|_F^(1/(2k)) = exp(log(|G^k|_F^2) / (4k))
        top = bound.mid() + bound.rad()
        return float(top) * (1 + 4 * U) + ETA


def l2_upper(x: np.ndarray) -> float:
    """An upper bound of the 2-norm (Frobenius norm) of a float64 array."""
    x = np.asarray(x, dtype=np.float64)
    return float(np.sqrt(np.sum(x * x) * (1 + (x.size + 4) * U) + 1e-300) * (1 + 2 * U))
