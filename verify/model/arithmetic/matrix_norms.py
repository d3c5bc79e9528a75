"""Rigorous upper bounds of matrix norms, for the 2-norm radii of the rigorous passes.

``spectral_norm_upper(W)`` bounds |W|_2 by the squaring argument: with G the smaller Gram
matrix (W W^T or W^T W, symmetric positive semi-definite, largest eigenvalue |W|_2^2) and
k = 2^SQUARINGS, lambda^k <= |G^k|_F <= sqrt(n) lambda^k (n = the smaller side), so

    |W|_2 <= |G^k|_F^(1/(2k)) = (|G^k|_F^2)^(1/(4k)) <= n^(1/(4k)) |W|_2.

G^k is formed by repeated squaring in float64 midpoint-radius arithmetic
(``arith.MidRadContext.matmul``: every entry's ball holds the exact entry, by the dot-product
bound gamma_n |A| |B|, valid for any summation order and with FMA), after scaling W by an exact
power of two so that its largest entry lies in [1/2, 1). Then lambda <= trace(G) < the number
of entries, so |G^k|_F^2 <= n lambda^(2k) stays finite below 2^30 entries (beyond, an infinite
ball sends the matrix to arb), and lambda >= 1/4, so nothing that matters underflows (the
radii carry an absolute ETA per operation). The (4k)-th root is 2 + SQUARINGS nested square
roots, each correctly rounded and then raised by (1 + 2U); scaling back is exact (ETA covers
a subnormal result). Where the scaling is not exact (entries that would turn subnormal) or a
ball is not finite, the same argument runs in arb (``_spectral_norm_upper_arb``, 128 bits),
the earlier implementation: 0.54 ms against 0.09 ms for a 16 x 16 Gram matrix, which made the
weight bounds the largest fixed cost of a certified truth table at L >= 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from flint import arb, arb_mat

from verify.model.arithmetic.contexts import MidRad, MidRadContext, arb_precision
from verify.model.arithmetic.rounding import ETA, U, sum_upper, up

SQUARINGS = 4  # k = 16: the bound is within n^(1/64) of |W|_2


def spectral_norm_upper(w: np.ndarray) -> float:
    """An upper bound of the spectral norm |W|_2 of a float64 matrix, within a factor
    n^(1/64) (n = the smaller side) of it (module doc)."""
    return float(spectral_norms_upper([w])[0])


def spectral_norms_upper(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """``spectral_norm_upper`` of each matrix, the matrices of one shape (up to transposition)
    squared together as one stack."""
    oriented = [np.asarray(w, dtype=np.float64) for w in matrices]
    oriented = [m.T if m.shape[0] > m.shape[1] else m for m in oriented]
    out = np.zeros(len(oriented))
    groups: dict[tuple[int, ...], list[int]] = {}
    for k, m in enumerate(oriented):
        if np.any(m):  # an all-zero matrix has norm 0
            groups.setdefault(m.shape, []).append(k)
    for members in groups.values():
        stack = np.stack([oriented[k] for k in members])
        bounds = _spectral_norms_upper_float64(stack)
        for k, bound in zip(members, bounds, strict=True):
            out[k] = bound if math.isfinite(bound) else _spectral_norm_upper_arb(oriented[k])
    return finite_or_inf(out)


def finite_or_inf(bound: np.ndarray | float) -> np.ndarray:
    """An upper bound checked where it is produced: every entry that is not a finite number
    >= 0 (NaN, a negative value, -inf) becomes +inf. A rigorous bound that could not be
    computed is then vacuous, so every radius it enters is infinite (or NaN: inf times a zero
    radius) and the bit it decides is reported uncertain: it never passes as a number."""
    x = np.array(bound, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(x) & (x >= 0))
    x[bad] = np.inf
    return x


def _spectral_norms_upper_float64(stack: np.ndarray) -> np.ndarray:
    """The bound of the module doc for each matrix of a (k, rows, columns) stack (rows <=
    columns, none all zero) in float64 midpoint-radius arithmetic; inf where the scaling
    would not be exact or a ball is not finite (those go to arb)."""
    out = np.full(stack.shape[0], np.inf)
    finite = np.isfinite(stack).all(axis=(1, 2))
    if not finite.any():
        return out
    m = stack[finite]
    _, e = np.frexp(np.abs(m).max(axis=(1, 2)))  # max |m| in [2^(e-1), 2^e)
    scaled = np.ldexp(m, -e[:, None, None])
    exact = (np.ldexp(scaled, e[:, None, None]) == m).all(axis=(1, 2))  # no entry lost bits
    fro2 = frobenius_sq_upper(gram_power_ball(scaled, 1 << SQUARINGS))
    root = root_upper(fro2, SQUARINGS + 2)  # (|G^k|_F^2)^(1/(4k))
    with np.errstate(over="ignore"):  # beyond float64: inf, then the arb path
        bound = np.ldexp(root, e) + ETA  # exact scaling; ETA covers a subnormal result
    out[finite] = np.where(exact & np.isfinite(bound), bound, np.inf)
    return out


def gram_power_ball(m: np.ndarray, k: int) -> MidRad:
    """Balls holding every entry of (M M^T)^k exactly (k a power of two; M one matrix or a
    stack of them): the Gram matrix and log2(k) squarings in ``MidRadContext`` arithmetic."""
    ctx = MidRadContext()
    g = ctx.matmul(MidRad(m), MidRad(np.swapaxes(m, -1, -2)))
    while k > 1:
        g = ctx.matmul(g, g)
        k //= 2
    return g


def frobenius_sq_upper(g: MidRad) -> np.ndarray:
    """An upper bound of sum_ij x_ij^2 over every matrix x in the balls g (over the last two
    axes): the entries' magnitudes |mid| + rad rounded up, squared, summed
    (``rounding.sum_upper``)."""
    magnitude = up(np.abs(g.mid) + g.rad, 1)
    terms = magnitude.shape[-1] * magnitude.shape[-2]
    return sum_upper(np.sum(up(magnitude * magnitude, 1), axis=(-2, -1)), terms)


def root_upper(x: np.ndarray | float, halvings: int) -> np.ndarray:
    """An upper bound of x^(2^-halvings) for x >= 0: square roots, each correctly rounded
    (fl(sqrt(y)) >= sqrt(y) (1 - u)) and raised by (1 + 2U) (the product rounded to nearest is
    >= sqrt(y) (1 - u)^2 (1 + 4u) >= sqrt(y))."""
    x = np.asarray(x, dtype=np.float64)
    for _ in range(halvings):
        x = np.sqrt(x) * (1 + 2 * U)
    return x


def _spectral_norm_upper_arb(m: np.ndarray) -> float:
    """The bound of the module doc with G^k in arb balls at 128 bits (m: rows <= columns)."""
    k = 1 << SQUARINGS
    with arb_precision(128):
        a = arb_mat(m.tolist())
        g = a * a.transpose()
        for _ in range(SQUARINGS):
            g = g * g
        # x * x, not x ** 2: python-flint 0.9 answers nan for ** 2 of a ball straddling 0 (an
        # entry of G^k that is 0 or tiny next to its radius)
        fro = sum((g[i, j] * g[i, j] for i in range(g.nrows()) for j in range(g.ncols())), arb(0))
        bound = (fro.log() / (4 * k)).exp()  # |G^k|_F^(1/(2k)) = exp(log(|G^k|_F^2) / (4k))
        if not bound.is_finite():  # e.g. fro's ball reaches 0 (log -inf): no bound, not nan
            return math.inf
        top = bound.mid() + bound.rad()
        return float(finite_or_inf(float(top) * (1 + 4 * U) + ETA))


def l2_upper(x: np.ndarray) -> float:
    """An upper bound of the 2-norm (Frobenius norm) of a float64 array (+inf where it is not
    a finite number: ``finite_or_inf``)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = np.sqrt(np.sum(x * x) * (1 + (x.size + 4) * U) + 1e-300) * (1 + 2 * U)
    return float(finite_or_inf(bound))
