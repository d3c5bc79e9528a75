"""Arithmetic contexts for the one transformer algorithm of ``verify.model.generic.reference``.

The algorithm is written once against a context ``ctx`` that supplies arrays and a few
functions; Python operators (+ - * /) act elementwise. Contexts:

- :class:`Float64Context`: plain numpy float64 (used to test the generic algorithm).
- :class:`MidRadContext`: numpy float64 midpoint-radius arrays (:class:`MidRad`). Every
  operation returns a midpoint and a radius that bounds |exact - midpoint| rigorously, where
  "exact" means the real-number result for the exact stored float64 parameters. The radius
  accounts for float64 rounding of the midpoint (round to nearest, IEEE), standard error bounds
  of dot products and sums (gamma_n = n u / (1 - n u)) valid for any summation order, a few ulps
  for libm's exp, and the rounding of the radius computation itself (each radius is inflated
  by a relative (1 + c u) and an absolute 1e-300 to cover underflow). Batched, vectorised.
- :class:`MpmathContext`: numpy object arrays of ``mpmath.mpf`` at a chosen precision.
- :class:`ArbContext`: numpy object arrays of python-flint ``arb`` balls at a chosen precision;
  parameters may be balls (midpoint + radius), so a whole parameter cube is enclosed.

A context's ``rsqrt`` of an enclosure that reaches 0 (eps = 0, variance not bounded away from 0)
gives an unbounded / undefined result (radius inf for MidRad, NaN ball for arb), never a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

import mpmath
import numpy as np
from flint import arb, arb_mat
from flint import ctx as flint_ctx

from verify.model.arithmetic.rounding import EXP_ULPS, TINY, U, up
from verify.model.arithmetic.sinusoidal_arb import sinusoidal_arb


class MidRad:
    """A float64 array of balls: exact value within ``rad`` of ``mid`` (elementwise)."""

    __array_priority__ = 100.0
    __array_ufunc__ = None  # numpy arrays defer to MidRad's reflected operators

    def __init__(self, mid: object, rad: object = None) -> None:
        self.mid = np.asarray(mid, dtype=np.float64)
        self.rad = np.zeros_like(self.mid) if rad is None else np.asarray(rad, dtype=np.float64)

    # -- structure
    @property
    def shape(self) -> tuple[int, ...]:
        return self.mid.shape

    def __getitem__(self, index: Any) -> MidRad:
        return MidRad(self.mid[index], self.rad[index])

    def reshape(self, *shape: Any) -> MidRad:
        return MidRad(self.mid.reshape(*shape), self.rad.reshape(*shape))

    def transpose(self, *axes: int) -> MidRad:
        return MidRad(self.mid.transpose(*axes), self.rad.transpose(*axes))

    def swapaxes(self, a: int, b: int) -> MidRad:
        return MidRad(self.mid.swapaxes(a, b), self.rad.swapaxes(a, b))

    @staticmethod
    def lift(x: object) -> MidRad:
        return x if isinstance(x, MidRad) else MidRad(np.asarray(x, dtype=np.float64))

    # -- arithmetic
    def __add__(self, other: object) -> MidRad:
        o = MidRad.lift(other)
        mid = self.mid + o.mid
        return MidRad(mid, up(self.rad + o.rad + U * np.abs(mid)))

    __radd__ = __add__

    def __neg__(self) -> MidRad:
        return MidRad(-self.mid, self.rad)

    def __sub__(self, other: object) -> MidRad:
        return self + (-MidRad.lift(other))

    def __rsub__(self, other: object) -> MidRad:
        return MidRad.lift(other) + (-self)

    def __mul__(self, other: object) -> MidRad:
        o = MidRad.lift(other)
        mid = self.mid * o.mid
        rad = np.abs(self.mid) * o.rad + self.rad * (np.abs(o.mid) + o.rad) + U * np.abs(mid)
        return MidRad(mid, up(rad))

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> MidRad:
        o = MidRad.lift(other)
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = self.mid / o.mid
            gap = np.abs(o.mid) - o.rad
            rad = (self.rad + np.abs(mid) * (1 + U) * o.rad) / (gap * (1 - U)) + U * np.abs(mid)
            rad = np.where(gap > 0, rad, np.inf)
        return MidRad(mid, up(rad))

    def sum(self, axis: int) -> MidRad:
        n = self.mid.shape[axis]
        mid = self.mid.sum(axis=axis)
        rad = self.rad.sum(axis=axis) + n * U * np.abs(self.mid).sum(axis=axis)
        return MidRad(mid, up(rad, n))

    @property
    def lower(self) -> np.ndarray:
        return self.mid - self.rad  # not rounded outward: use only for reporting

    def __repr__(self) -> str:
        return f"MidRad(mid={self.mid!r}, rad={self.rad!r})"


class Float64Context:
    """Plain float64 numpy arrays."""

    name = "float64"

    def param(self, array: np.ndarray, radius: object = None) -> np.ndarray:
        return np.asarray(array, dtype=np.float64)

    def const(self, value: object) -> np.ndarray:
        return np.asarray(value, dtype=np.float64)

    def rsqrt_int(self, n: int) -> float:
        return 1.0 / math.sqrt(n)

    def sinusoidal(self, n_positions: int, width: int) -> np.ndarray:
        from verify.model.plain.forward_numpy import sinusoidal_table

        return sinusoidal_table(n_positions, width)

    def matmul(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x @ w

    def sum(self, x: np.ndarray, axis: int) -> np.ndarray:
        return x.sum(axis=axis)

    def exp(self, x: np.ndarray) -> np.ndarray:
        return np.exp(x)

    def rsqrt(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / np.sqrt(x)

    def sqrt_nonneg(self, x: np.ndarray) -> np.ndarray:  # of a value known >= 0: ball
        return np.sqrt(np.maximum(x, 0.0))  # contexts may use the ball's non-negative part

    def reciprocal(self, x: np.ndarray) -> np.ndarray:  # NaN or unbounded where x may be 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / x

    def relu(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0)

    def concat(self, parts: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.concatenate(parts, axis=axis)

    def midpoint(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)

    def hull(self, a: Any, b: Any) -> Any:
        """A ball holding every value of ``a`` and of ``b`` (elementwise): ball contexts only."""
        from verify.errors import ValidationError

        raise ValidationError("free", "a ball context (midrad, affine or arb)", self.name)

    def ln_bound(self, z: Any, eps: float) -> Any:
        """The normalised layer-norm output z = c / sqrt(var + eps) (last axis of width d):
        contexts may use |z_i| <= sqrt(d), which holds wherever z is defined; unchanged here."""
        return z

    def embed(self, emb: Any, tokens: np.ndarray, free: np.ndarray | None) -> Any:
        """The token rows emb[tokens] (B, S, E); a ``free`` position (mask (B, S)) takes the
        hull of rows 0 and 1 (``hull``), so the rows enclose both of its tokens."""
        if free is None:
            return emb[tokens]
        tokens = np.where(free, emb.shape[0], tokens)  # the hull row, appended
        return self.concat([emb, self.hull(emb[0:1], emb[1:2])], axis=0)[tokens]

    def broadcast(self, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return np.broadcast_to(x, shape)

    def readout(self, y: Any, w: Any, bias: Any, normed: tuple | None) -> Any:
        """T = y @ w + bias for the readout rows y (B, D) and w (D, 1). ``normed``: when y is a
        layer norm's output, (c, z, (gain, bias) or None) with y = gain c z + bias; a context
        may use the equal T = z (c @ (gain w)) + (bias @ w + bias_T)."""
        return self.matmul(y, w)[:, 0] + bias

    def attend(self, s: Any, v: Any) -> Any:
        """softmax(s) V for the (shifted) scores s (..., Sq, Skv) and the values v (..., Skv,
        d_h): with ex = exp(s), (ex / sum_j ex_j) @ v. A context may use any equal form."""
        ex = self.exp(s)
        return self.matmul(ex / self.sum(ex, -1)[..., None], v)

    def stack(self, parts: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.stack(parts, axis=axis)

    @contextmanager
    def active(self) -> Any:
        yield self


class MidRadContext(Float64Context):
    """Rigorous float64 midpoint-radius arithmetic (see module doc)."""

    name = "midrad"

    def param(self, array: np.ndarray, radius: object = None) -> MidRad:
        mid = np.asarray(array, dtype=np.float64)
        rad = np.zeros_like(mid) if radius is None else np.broadcast_to(radius, mid.shape)
        return MidRad(mid, np.array(rad, dtype=np.float64))

    def const(self, value: object) -> MidRad:
        return MidRad(np.asarray(value, dtype=np.float64))

    def rsqrt_int(self, n: int) -> MidRad:
        v = 1.0 / math.sqrt(n)
        return MidRad(v, 2 * U * v)  # sqrt and division each correctly rounded

    def sinusoidal(self, n_positions: int, width: int) -> MidRad:
        return _sinusoidal_midrad(n_positions, width)

    def matmul(self, x: MidRad, w: MidRad) -> MidRad:
        n = x.shape[-1]
        mid = x.mid @ w.mid
        absx = np.abs(x.mid)
        rad = (x.rad + n * U * absx) @ np.abs(w.mid)
        if np.any(w.rad):
            rad = rad + (absx + x.rad) @ w.rad
        return MidRad(mid, up(rad, 2 * n))

    def sum(self, x: MidRad, axis: int) -> MidRad:
        return x.sum(axis)

    def exp(self, x: MidRad) -> MidRad:
        with np.errstate(over="ignore", invalid="ignore"):
            mid = np.exp(x.mid)
            big = mid * (1 + EXP_ULPS * U) + TINY  # >= exp(x.mid), also on underflow
            rad = big * (np.expm1(x.rad) * (1 + EXP_ULPS * U) + EXP_ULPS * U)
            rad = np.where(np.isfinite(rad), rad, np.inf)
        return MidRad(mid, up(rad))

    def rsqrt(self, x: MidRad) -> MidRad:
        with np.errstate(divide="ignore", invalid="ignore"):
            low = (x.mid - x.rad) * (1 - U)  # <= every value of the ball
            mid = 1.0 / np.sqrt(x.mid)
            rad = x.rad / (2.0 * low * np.sqrt(low) * (1 - 4 * U)) + 4 * U * np.abs(mid)
            rad = np.where(low > 0, rad, np.inf)
        return MidRad(mid, up(rad))

    def sqrt_nonneg(self, x: MidRad) -> MidRad:
        """sqrt of an exact value >= 0 in [m - r, m + r]: sqrt(max(m, 0)) within
        min(r / (sqrt(low) + sqrt(m)), sqrt(r)) + U mid, low = max(m - r, 0), rounded safely."""
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = np.sqrt(np.maximum(x.mid, 0.0))
            low = np.maximum(x.mid - x.rad, 0.0) * (1 - 2 * U)  # <= max(exact m - r, 0)
            den = (np.sqrt(low) + mid) * (1 - 4 * U)
            linear = np.where(den > 0, x.rad / den * (1 + U), np.inf)
            rad = np.minimum(linear, np.sqrt(x.rad) * (1 + 2 * U)) + U * mid
        return MidRad(mid, up(rad, 2))

    def reciprocal(self, x: MidRad) -> MidRad:  # the quotient rule (inf where x may be 0)
        return MidRad(np.ones_like(x.mid)) / x

    def relu(self, x: MidRad) -> MidRad:
        mid = np.maximum(x.mid, 0.0)
        rad = np.where(x.mid + x.rad <= 0, 0.0, x.rad)  # relu is 1-Lipschitz
        return MidRad(mid, rad)

    def concat(self, parts: Sequence[MidRad], axis: int) -> MidRad:
        return MidRad(
            np.concatenate([p.mid for p in parts], axis=axis),
            np.concatenate([p.rad for p in parts], axis=axis),
        )

    def stack(self, parts: Sequence[MidRad], axis: int) -> MidRad:
        return MidRad(
            np.stack([p.mid for p in parts], axis=axis),
            np.stack([p.rad for p in parts], axis=axis),
        )

    def midpoint(self, x: MidRad) -> np.ndarray:
        return x.mid

    def hull(self, a: MidRad, b: MidRad) -> MidRad:
        """Midpoint m = a/2 + b/2 (any float64 will do), radius max(|a - m| + r_a, |b - m| + r_b)
        rounded up: |a - m| is off by one rounding, the sum by one more (``up``, 2 terms)."""
        mid = 0.5 * a.mid + 0.5 * b.mid
        rad = np.maximum(np.abs(a.mid - mid) + a.rad, np.abs(b.mid - mid) + b.rad)
        return MidRad(mid, up(rad, 2))

    def broadcast(self, x: MidRad, shape: tuple[int, ...]) -> MidRad:
        return MidRad(np.broadcast_to(x.mid, shape), np.broadcast_to(x.rad, shape))


_SIN_CACHE: dict[tuple[int, int], MidRad] = {}


def _sinusoidal_midrad(n_positions: int, width: int) -> MidRad:
    """The sinusoidal table as float64 balls, enclosed with arb at 128 bits."""
    key = (n_positions, width)
    if key not in _SIN_CACHE:
        with arb_precision(128):
            table = sinusoidal_arb(n_positions, width)
        mid = np.array([[float(v.mid()) for v in row] for row in table])
        rad = np.array(
            [[float(abs(v - arb(float(v.mid()))).upper()) for v in row] for row in table]
        )
        _SIN_CACHE[key] = MidRad(mid, up(rad))
    return _SIN_CACHE[key]


@contextmanager
def arb_precision(bits: int) -> Any:
    """Temporarily set python-flint's working precision (bits)."""
    old = flint_ctx.prec
    flint_ctx.prec = int(bits)
    try:
        yield
    finally:
        flint_ctx.prec = old


def _objmap(fn: Any, x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape, dtype=object)
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)
    for i in range(flat_in.size):
        flat_out[i] = fn(flat_in[i])
    return out


class _ObjectContext(Float64Context):
    """Shared parts of the object-array contexts (mpmath, arb)."""

    def sum(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.sum(x, axis=axis)

    def concat(self, parts: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.concatenate(parts, axis=axis)

    def stack(self, parts: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.stack(parts, axis=axis)


class MpmathContext(_ObjectContext):
    """numpy object arrays of mpmath.mpf at ``dps`` decimal digits (high-precision reference)."""

    name = "mpmath"

    def __init__(self, dps: int = 50) -> None:
        self.dps = int(dps)

    @contextmanager
    def active(self) -> Any:
        with mpmath.workdps(self.dps):
            yield self

    def param(self, array: np.ndarray, radius: object = None) -> np.ndarray:
        return _objmap(mpmath.mpf, np.asarray(array, dtype=np.float64))

    def const(self, value: object) -> np.ndarray:
        return _objmap(mpmath.mpf, np.asarray(value, dtype=np.float64))

    def rsqrt_int(self, n: int) -> Any:
        return 1 / mpmath.sqrt(n)

    def sinusoidal(self, n_positions: int, width: int) -> np.ndarray:
        table = np.empty((n_positions, width), dtype=object)
        for j in range(width):
            freq = mpmath.mpf(10000) ** (-mpmath.mpf(j - j % 2) / width)
            for n in range(n_positions):
                angle = n * freq
                table[n, j] = mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)
        return table

    def matmul(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x @ w

    def exp(self, x: np.ndarray) -> np.ndarray:
        return _objmap(mpmath.exp, x)

    def rsqrt(self, x: np.ndarray) -> np.ndarray:
        def f(v: Any) -> Any:
            return mpmath.mpf("nan") if v <= 0 else 1 / mpmath.sqrt(v)

        return _objmap(f, x)

    def sqrt_nonneg(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: mpmath.mpf("nan") if v < 0 else mpmath.sqrt(v), x)

    def reciprocal(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: mpmath.mpf("nan") if v == 0 else 1 / v, x)

    def relu(self, x: np.ndarray) -> np.ndarray:
        zero = mpmath.mpf(0)
        return _objmap(lambda v: v if v > 0 else zero, x)

    def midpoint(self, x: np.ndarray) -> np.ndarray:
        return _objmap(float, x).astype(np.float64)


class ArbContext(_ObjectContext):
    """numpy object arrays of python-flint arb balls at ``prec`` bits (rigorous enclosures)."""

    name = "arb"

    def __init__(self, prec: int = 128) -> None:
        self.prec = int(prec)

    @contextmanager
    def active(self) -> Any:
        with arb_precision(self.prec):
            yield self

    def param(self, array: np.ndarray, radius: object = None) -> np.ndarray:
        mid = np.asarray(array, dtype=np.float64)
        if radius is None:
            return _objmap(arb, mid)
        rad = np.broadcast_to(np.asarray(radius, dtype=np.float64), mid.shape)
        out = np.empty(mid.shape, dtype=object)
        for idx in np.ndindex(mid.shape):
            r = float(rad[idx])
            out[idx] = arb(float(mid[idx]), r) if r > 0 else arb(float(mid[idx]))
        return out

    def const(self, value: object) -> np.ndarray:
        return _objmap(arb, np.asarray(value, dtype=np.float64))

    def rsqrt_int(self, n: int) -> Any:
        return arb(n).rsqrt()

    def sinusoidal(self, n_positions: int, width: int) -> np.ndarray:
        return sinusoidal_arb(n_positions, width)

    def matmul(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if x.ndim == 2 and w.ndim == 2:
            prod = arb_mat(x.tolist()) * arb_mat(w.tolist())
            return np.array(prod.tolist(), dtype=object).reshape(x.shape[0], w.shape[1])
        if w.ndim == 2:
            lead = x.shape[:-1]
            flat = self.matmul(x.reshape(-1, x.shape[-1]), w)
            return flat.reshape(*lead, w.shape[1])
        # batched (..., n, k) @ (..., k, m)
        lead = np.broadcast_shapes(x.shape[:-2], w.shape[:-2])
        xb = np.broadcast_to(x, (*lead, *x.shape[-2:]))
        wb = np.broadcast_to(w, (*lead, *w.shape[-2:]))
        out = np.empty((*lead, x.shape[-2], w.shape[-1]), dtype=object)
        for idx in np.ndindex(lead):
            out[idx] = self.matmul(np.asarray(xb[idx]), np.asarray(wb[idx]))
        return out

    def exp(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: v.exp(), x)

    def rsqrt(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: v.rsqrt() if v > 0 else arb.nan(), x)

    def sqrt_nonneg(self, x: np.ndarray) -> np.ndarray:  # a ball reaching below 0 (squares
        def f(v: Any) -> Any:  # of balls holding 0) becomes [0, sqrt(upper)]
            ok = v.is_finite() and v.upper() >= 0
            return v.sqrt() if v > 0 else arb(0).union(v.upper().sqrt()) if ok else arb.nan()

        return _objmap(f, x)

    def reciprocal(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: 1 / v if (v > 0 or v < 0) else arb.nan(), x)

    def relu(self, x: np.ndarray) -> np.ndarray:
        zero = arb(0)

        def f(v: Any) -> Any:
            if v >= 0:
                return v
            if v <= 0:
                return zero
            return zero.union(v.upper())

        return _objmap(f, x)

    def midpoint(self, x: np.ndarray) -> np.ndarray:
        return _objmap(lambda v: float(v.mid()), x).astype(np.float64)

    def hull(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The arb union of the two balls, elementwise."""
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(a.shape):
            out[idx] = a[idx].union(b[idx])
        return out
