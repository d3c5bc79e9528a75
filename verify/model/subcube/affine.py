"""Rigorous float64 affine arithmetic over the free bits of a sub-cube (issue 29).

An :class:`Affine` array holds, elementwise, the set {mid + sum_k gen[k] e_k + d : e in
[-1, 1]^G, |d| <= rad}; the noise symbols e_k are shared by every array of one pass, one per
input position (G = N). A free position's token row is row0/2 + row1/2 + e_k (row1 - row0)/2
(:meth:`AffineContext.embed`): e_k = -1 gives row 0, +1 row 1. Linear maps carry the
generators exactly (W applied to a difference of token rows keeps its cancellations, which a
ball hull loses), so the T enclosure of a sub-cube is far tighter than
``MidRadContext.hull``'s. Nonlinear steps linearise at the midpoint with a rigorous remainder
(|t| <= T = sum_k |gen_k| + rad, t = x - mid):

- x y: mid_x mid_y, generators mid_x g_y + mid_y g_x, remainder S_x S_y + |m_x| r_y +
  r_x (|m_y| + S_y + r_y) + S_x r_y (S = sum_k |g_k|);
- exp: e^m (1 + t) + e^m (e^t - 1 - t), |e^t - 1 - t| <= T^2 e^T / 2;
- 1/x on a ball with |x| >= gap > 0: 1/m - t/m^2 + R, |R| <= T^2 / (m^2 gap);
- x^(-1/2) with x >= gap > 0: m^(-1/2) - t m^(-3/2) / 2 + R, |R| <= 3 T^2 gap^(-5/2) / 8;
  a variance enclosure reaching 0 gives radius inf (never a number), as in MidRad;
- sqrt of a quantity known >= 0 (the annotated std): a chord over the range clipped at 0
  (``AffineContext.sqrt_nonneg``); the coefficient 1 / (std + eps) is then the 1/x rule;
- relu on [lo, hi] with lo < 0 < hi: lam x + c, lam = hi / (hi - lo) (any lam in [0, 1]),
  0 <= c <= max(-lam lo, hi (1 - lam)).

The first ``n_bits`` symbols are the free bits; the strings are their vertices e_k = +-1 and
the forms need to hold only there (fresh symbols range over [-1, 1]): products take the bit
diagonal (e_k^2 = 1) as a constant, a square's quadratic part lies in [max(0, 2 D - S^2), S^2],
each nonlinear step is also linearised at both values of its dominant bit with chord
relaxations (``verify.model.subcube.affine_split``; the narrower form kept), and attention and the
readout take forms with fewer remainders (``AffineContext.attend``, ``.readout``).

Every float64 rounding of the midpoint and the generators goes into ``rad`` with the constants
of ``verify.model.arithmetic.rounding`` (the rounding model of MidRad and the kernels), each radius
inflated by ``up``. Affine subclasses MidRad, so mixed expressions take Affine's operators.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from verify.model.arithmetic.contexts import MidRad, MidRadContext
from verify.model.arithmetic.rounding import EXP_ULPS, TINY, U, up
from verify.model.subcube.affine_split import (
    Relaxation,
    align_generators,
    exp_sum_range,
    linearise_in_range,
    nonneg_range,
    relax_exp,
    relax_reciprocal,
    relax_relu,
    relax_rsqrt,
    relax_sqrt,
    split_dominant,
    values_hull,
    vertex_square_terms,
)


def _gsum(gen: np.ndarray | None) -> Any:
    """An upper bound of sum_k |gen_k| (0 without generators)."""
    if gen is None:
        return 0.0
    return up(np.abs(gen).sum(axis=0), gen.shape[0])


def _gadd(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """Sum of two generator arrays; the shorter is padded with zero generators (symbol k is
    the same symbol in every array of a pass)."""
    if a is None:
        return b
    if b is None:
        return a
    a, b = align_generators(a, b)  # the element axes, never the symbol axis
    if a.shape[0] != b.shape[0]:
        a, b = (a, b) if a.shape[0] > b.shape[0] else (b, a)
        shape = (a.shape[0], *np.broadcast_shapes(a.shape[1:], b.shape[1:]))
        out = np.array(np.broadcast_to(a, shape))
        out[: b.shape[0]] += b
        return out
    return a + b


def _pad(g: np.ndarray, n: int) -> np.ndarray:
    if g.shape[0] == n:
        return g
    return np.concatenate([g, np.zeros((n - g.shape[0], *g.shape[1:]))])


def _gscale(g: np.ndarray | None, s: Any) -> np.ndarray | None:
    """g * s with s broadcast against the element axes of g (never against its symbol axis)."""
    if g is None:
        return None
    s = np.asarray(s)
    if s.ndim > g.ndim - 1:
        g = g.reshape(g.shape[0], *([1] * (s.ndim - g.ndim + 1)), *g.shape[1:])
    return g * s


MAX_SYMBOLS = 1024  # noise symbols per pass at most (arrays carry (symbols, *shape) generators)
_ACTIVE: list[AffineContext] = []  # the context of the running pass (for fresh symbols)


def _fresh(x: Affine) -> Affine:
    return _ACTIVE[-1].fresh(x) if _ACTIVE else x


def _n_bits() -> int:
    """How many leading noise symbols of the running pass are bits (vertex-valued)."""
    return _ACTIVE[-1].n_bits if _ACTIVE else 0


def _best_of_split(x: Affine, plain: Affine, relax: Relaxation) -> Affine:
    """Elementwise the narrower of ``plain`` (the midpoint linearisation of a step) and the
    split on the dominant bit symbol (``verify.model.subcube.affine_split``); both enclose the step
    at every vertex of the bit symbols, so either may be taken for each element."""
    nb = _n_bits()
    if nb == 0 or x.gen is None or x.mid.ndim == 0 or plain.gen is None:
        return plain
    with np.errstate(all="ignore"):
        split = Affine(*split_dominant(x.mid, x.gen, x.rad, nb, relax))
    return _narrower(plain, split)


def _narrower(a: Affine, b: Affine) -> Affine:
    """Elementwise the one of two enclosures of the same values with the smaller spread (a
    where b is not narrower, NaN included)."""
    with np.errstate(invalid="ignore"):
        take = b.spread < np.where(np.isnan(a.spread), np.inf, a.spread)
    if not np.any(take):
        return a
    mid, rad = np.where(take, b.mid, a.mid), np.where(take, b.rad, a.rad)
    if a.gen is None and b.gen is None:
        return Affine(mid, None, rad)
    g = max(x.gen.shape[0] for x in (a, b) if x.gen is not None)

    def gens(x: Affine) -> np.ndarray:
        return np.zeros((g, *x.mid.shape)) if x.gen is None else _pad(x.gen, g)

    return Affine(mid, np.where(take[None], gens(b), gens(a)), rad)


def _gaxis(axis: int) -> int:
    return axis + 1 if axis >= 0 else axis


class Affine(MidRad):
    """Affine forms over shared noise symbols (module doc); ``gen`` (G, *shape) or None."""

    def __init__(self, mid: object, gen: np.ndarray | None = None, rad: object = None) -> None:
        super().__init__(mid, rad)
        self.gen = None if gen is None else np.asarray(gen, dtype=np.float64)

    @staticmethod
    def of(x: object) -> Affine:
        if isinstance(x, Affine):
            return x
        if isinstance(x, MidRad):
            return Affine(x.mid, None, x.rad)
        return Affine(np.asarray(x, dtype=np.float64))

    @property
    def spread(self) -> Any:
        """An upper bound of |x - mid| over the whole set: sum_k |gen_k| + rad."""
        return up(_gsum(self.gen) + self.rad, 2)

    # -- structure (generators: the leading axis)
    def _g(self, fn: Any) -> np.ndarray | None:
        return None if self.gen is None else fn(self.gen)

    def __getitem__(self, index: Any) -> Affine:
        idx = index if isinstance(index, tuple) else (index,)
        return Affine(self.mid[index], self._g(lambda g: g[(slice(None), *idx)]), self.rad[index])

    def reshape(self, *shape: Any) -> Affine:
        shp = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        g = self._g(lambda g: g.reshape(g.shape[0], *shp))
        return Affine(self.mid.reshape(*shp), g, self.rad.reshape(*shp))

    def swapaxes(self, a: int, b: int) -> Affine:
        g = self._g(lambda g: g.swapaxes(_gaxis(a), _gaxis(b)))
        return Affine(self.mid.swapaxes(a, b), g, self.rad.swapaxes(a, b))

    def transpose(self, *axes: int) -> Affine:
        raise NotImplementedError("Affine.transpose")

    # -- arithmetic
    def __add__(self, other: object) -> Affine:
        o = Affine.of(other)
        mid = self.mid + o.mid
        gen = _gadd(self.gen, o.gen)
        err = U * np.abs(mid) + (
            U * _gsum(gen) if self.gen is not None and o.gen is not None else 0
        )
        return Affine(mid, gen, up(self.rad + o.rad + err, 3))

    __radd__ = __add__

    def __neg__(self) -> Affine:
        return Affine(-self.mid, self._g(np.negative), self.rad)

    def __sub__(self, other: object) -> Affine:
        return self + (-Affine.of(other))

    def __rsub__(self, other: object) -> Affine:
        return Affine.of(other) + (-self)

    def __mul__(self, other: object) -> Affine:
        o = Affine.of(other)
        prod = self.mid * o.mid
        mid = prod
        am, bm = np.abs(self.mid), np.abs(o.mid)
        sa, sb = _gsum(self.gen), _gsum(o.gen)
        gen = _gadd(_gscale(self.gen, o.mid), _gscale(o.gen, self.mid))
        quad, diag_err = vertex_square_terms(self.gen, o.gen, _n_bits())
        if o is self and self.gen is not None:
            # a square: (g . e)^2 lies in [max(0, 2 D - S^2), S^2] (D: the bit diagonal)
            q_hi = up(sa * sa, 2)
            d_lo = 0.0 if quad is None else quad[1]
            q_lo = np.maximum(2 * d_lo - q_hi, 0.0) * (1 - 2 * U)
            mid = mid + 0.5 * (q_lo + q_hi)
            quad_rest = up(0.5 * (q_hi - q_lo), 2) + 2 * U * q_hi
        elif quad is not None:
            mid = mid + quad[0]
            quad_rest = np.maximum(up(sa * sb, 2) - quad[1], 0.0)
        else:
            quad_rest = sa * sb
        rest = quad_rest + am * o.rad + self.rad * (bm + sb + o.rad) + sa * o.rad
        err = U * (np.abs(prod) + np.abs(mid)) + 2 * U * (am * sb + bm * sa) + diag_err
        out = Affine(mid, gen, up(rest + err, 8))
        return _fresh(out) if self.gen is not None and o.gen is not None else out

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Affine:
        return self * Affine.of(other).reciprocal()

    def __rtruediv__(self, other: object) -> Affine:
        return Affine.of(other) * self.reciprocal()

    def reciprocal(self) -> Affine:
        """1/x where the set is bounded away from 0 (else radius inf)."""
        t = self.spread
        with np.errstate(all="ignore"):
            gap = (np.abs(self.mid) - t) * (1 - U)  # <= |x| on the whole set
            mid = 1.0 / self.mid
            d2 = mid * mid * (1 + 4 * U)  # >= 1 / m^2
            gen = _gscale(self.gen, -(mid * mid))
            rest = d2 * self.rad + t * t * d2 / (gap * (1 - U)) + U * np.abs(mid)
            rest = rest + 3 * U * _gsum(gen)
            rad = np.where(gap > 0, up(rest, 8), np.inf)
        if gen is None:
            return Affine(mid, gen, rad)
        return _fresh(_best_of_split(self, Affine(mid, gen, rad), relax_reciprocal))

    def sum(self, axis: int) -> Affine:
        n = self.mid.shape[axis]
        mid = self.mid.sum(axis=axis)
        gen = self._g(lambda g: g.sum(axis=_gaxis(axis)))
        err = np.abs(self.mid).sum(axis=axis)
        if self.gen is not None:
            err = err + np.abs(self.gen).sum(axis=_gaxis(axis)).sum(axis=0)
        g = 0 if self.gen is None else self.gen.shape[0]
        return Affine(mid, gen, up(self.rad.sum(axis=axis) + n * U * err, n + g))


class AffineContext(MidRadContext):
    """Affine arithmetic over the free bits (module doc); the rest as MidRadContext."""

    name = "affine"

    def __init__(self, max_symbols: int = MAX_SYMBOLS) -> None:
        self.n_symbols = 0
        self.n_bits = 0  # symbols 0..n_bits-1 are free bits: +-1 at every string
        self.max_symbols = max_symbols

    @contextmanager
    def active(self) -> Iterator[AffineContext]:
        _ACTIVE.append(self)
        try:
            yield self
        finally:
            _ACTIVE.pop()

    def fresh(self, x: Affine) -> Affine:
        """The same set with ``rad`` moved into new noise symbols, one per element of the
        non-batch axes (the batch axis 0 holds independent sub-cubes): d = rad e_new exactly,
        so later linear maps keep the cancellations of these errors too."""
        b = x.shape[0] if x.mid.ndim else 0
        m = int(np.prod(x.shape[1:], dtype=np.int64))
        if x.gen is None or b == 0 or self.n_symbols + m > self.max_symbols:
            return x  # past the cap the errors stay in rad: looser, as rigorous
        new = np.zeros((m, b, m))
        new[np.arange(m), :, np.arange(m)] = x.rad.reshape(b, m).T
        base = self.n_symbols
        self.n_symbols += m
        gen = np.concatenate([_pad(x.gen, base), new.reshape(m, *x.shape)])
        return Affine(x.mid, gen, np.zeros_like(x.rad))

    def embed(self, emb: MidRad, tokens: np.ndarray, free: np.ndarray | None) -> Affine:
        """Token rows (B, S, E); free position k gets generator k (G = N)."""
        rows = Affine.of(emb[tokens])
        if free is None or not np.any(free):
            return rows
        b, n = free.shape
        lo, hi = emb[0], emb[1]
        mid = 0.5 * lo.mid + 0.5 * hi.mid
        half = 0.5 * hi.mid - 0.5 * lo.mid
        # |row_t - (mid +/- half)| <= r_t + rounding of mid and half (one each, plus subnormal)
        slack = np.maximum(lo.rad, hi.rad) + U * (np.abs(mid) + np.abs(half))
        slack = up(slack, 3)
        self.n_symbols = max(self.n_symbols, n)
        self.n_bits = max(self.n_bits, n)
        gen = np.zeros((n, *rows.mid.shape))
        out_mid, out_rad = rows.mid.copy(), rows.rad.copy()
        for k in range(n):
            sel = np.flatnonzero(free[:, k])
            gen[k, sel, k] = half
            out_mid[sel, k] = mid
            out_rad[sel, k] = slack
        return Affine(out_mid, gen, out_rad)

    def ln_bound(self, z: MidRad, eps: float) -> MidRad:
        """|z_i| = |c_i| / sqrt(var + eps) <= sqrt(d var / (var + eps)) <= sqrt(d) (the annotated
        form: |c_i| / (std_unbiased + eps) <= |c_i| sqrt(d - 1) / |c| <= (d - 1) /
        sqrt(d)), and for eps > 0 z is always defined (var >= 0): with eps > 0 an
        element whose enclosure is not finite (inf or NaN after an overflow) becomes the
        ball [-sqrt(d), sqrt(d)]. Finite enclosures keep their generators (the bit
        ranking reads them); at eps = 0 a non-finite enclosure stays (z may be undefined
        there)."""
        z = Affine.of(z)
        if z.gen is None or eps == 0.0:
            return z
        bound = math.sqrt(z.shape[-1]) * (1 + 2 * U)  # >= sqrt(d): one rounding
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(z.spread) & np.isfinite(z.mid))
        if not np.any(bad):
            return z
        gen = np.where(bad[None], 0.0, z.gen)
        return Affine(np.where(bad, 0.0, z.mid), gen, np.where(bad, bound, z.rad))

    def matmul(self, x: MidRad, w: MidRad) -> Affine:
        """x @ w: generators x_g @ w_m + x_m @ w_g; remainder S_x @ S_w + r_x @ (|w_m| + S_w +
        r_w) + (|x_m| + S_x) @ r_w; rounding n U |x_m| @ |w_m| (midpoint) and
        (n + 1) U (S_x @ |w_m| + |x_m| @ S_w) (generators)."""
        x, w = Affine.of(x), Affine.of(w)
        if x.gen is None and w.gen is None:
            res = super().matmul(x, w)
            return Affine(res.mid, None, res.rad)
        n = x.shape[-1]
        ax, aw = np.abs(x.mid), np.abs(w.mid)
        mid = x.mid @ w.mid
        gen = _gadd(
            None if x.gen is None else x.gen @ w.mid, None if w.gen is None else x.mid @ w.gen
        )
        left = x.rad + n * U * ax  # @ |w_m|
        right = ax + x.rad  # @ r_w
        rest = 0.0
        if x.gen is not None:
            sx = _gsum(x.gen)
            left = left + (n + 1) * U * sx
            right = right + sx
        if w.gen is not None:
            sw = _gsum(w.gen)
            lw = x.rad + (n + 1) * U * ax
            rest = lw @ sw
            if x.gen is not None:
                quad, diag_err = vertex_square_terms(x.gen, w.gen, _n_bits(), matmul=True)
                if quad is None:
                    rest = rest + sx @ sw
                else:  # the bit symbols' diagonal is a constant at the vertices
                    mid = mid + quad[0]
                    rest = rest + np.maximum(up(sx @ sw, n + 2) - quad[1], 0.0) + diag_err
                    rest = rest + U * np.abs(mid)
        rest = rest + left @ aw
        if np.any(w.rad):
            rest = rest + right @ w.rad
        g = sum(0 if a.gen is None else a.gen.shape[0] for a in (x, w))
        return Affine(mid, gen, up(rest, 2 * n + g + 8))

    def sum(self, x: MidRad, axis: int) -> MidRad:
        return x.sum(axis)

    def readout(self, y: MidRad, w: MidRad, bias: MidRad, normed: tuple | None) -> Affine:
        """The narrower of y @ w + bias and, after a layer norm, z (c @ (gain w)) + (bias_LN @
        w + bias): one product of two scalars instead of one per coordinate of y."""
        plain = Affine.of(super().readout(y, w, bias, None))
        if normed is None:
            return plain
        c, z, ln_affine = normed
        if ln_affine is not None:  # gain c z + beta: gain into w, beta @ w into the bias
            bias = self.matmul(ln_affine[1][None, :], w)[0, 0] + bias
            w = ln_affine[0][:, None] * w
        return _narrower(plain, Affine.of(self.matmul(c, w)[:, 0] * z + bias))

    def attend(self, s: MidRad, v: MidRad) -> Affine:
        """(ex @ v) / sum_j ex_j with ex = exp(s): with one bit per key position, ex_j v_j is
        exact at the vertices (``vertex_square_terms``), so only the division leaves a
        remainder. 1 / den is also linearised over den's range from the scores' intervals,
        sum_j e^(s_j) (the affine form of den may reach 0 where den cannot), and the output is
        met with the hull [min_j v_j, max_j v_j] that a convex combination of values lies in."""
        s, v = Affine.of(s), Affine.of(v)
        ex = self.exp(s)
        den = Affine.of(self.sum(ex, -1))
        inv = den.reciprocal()
        if den.gen is not None:
            lo, hi = exp_sum_range(s.mid, s.spread, den.mid, den.spread)
            ranged = linearise_in_range(den.mid, den.gen, den.rad, lo, hi, relax_reciprocal)
            inv = _narrower(inv, self.fresh(Affine(*ranged)))
        out = self.matmul(ex, v) * inv[..., None]
        mid, rad = (np.broadcast_to(a, out.shape) for a in values_hull(v.mid, v.spread))
        return _narrower(out, Affine(mid, None, rad))

    @staticmethod
    def _as_ball(op: Any, x: Affine) -> Affine:
        """``op`` of MidRadContext on an operand with no noise symbols, as an Affine ball."""
        res = op(x)
        return Affine(res.mid, None, res.rad)

    def exp(self, x: MidRad) -> Affine:
        """e^m (1 + t) + e^m (d + rho), |d| <= r, |rho| <= T^2 e^T / 2 (module doc)."""
        x = Affine.of(x)
        if x.gen is None:
            return self._as_ball(super().exp, x)
        t = x.spread
        with np.errstate(all="ignore"):
            mid = np.exp(x.mid)
            big = mid * (1 + EXP_ULPS * U) + TINY  # >= e^m
            gen = x.gen * mid
            s = _gsum(x.gen)
            rho = t * t * 0.5 * (np.exp(t) * (1 + EXP_ULPS * U) + TINY)
            rest = EXP_ULPS * U * mid + TINY + ((EXP_ULPS + 1) * U * big + TINY) * s
            rest = rest + big * (x.rad + rho)
            rad = np.where(np.isfinite(rest), up(rest, 8), np.inf)
        return self.fresh(_best_of_split(x, Affine(mid, gen, rad), relax_exp))

    def rsqrt(self, x: MidRad) -> Affine:
        """m^(-1/2) - t m^(-3/2) / 2 + R, |R| <= 3 T^2 gap^(-5/2) / 8 on x >= gap > 0; radius
        inf where the set is not bounded away from 0."""
        x = Affine.of(x)
        if x.gen is None:
            return self._as_ball(super().rsqrt, x)
        t = x.spread
        with np.errstate(all="ignore"):
            gap = (x.mid - t) * (1 - U)  # <= every value of the set
            mid = 1.0 / np.sqrt(x.mid)
            cube = mid * mid * mid * (1 + 8 * U)  # >= m^(-3/2)
            gen = x.gen * (-0.5 * mid * mid * mid)
            curv = 0.375 * t * t * (1 + 8 * U) / (gap * gap * np.sqrt(gap) * (1 - 4 * U))
            rest = 4 * U * np.abs(mid) + 6 * U * _gsum(gen) + 0.5 * cube * x.rad + curv
            rad = np.where(gap > 0, up(rest, 8), np.inf)
        return self.fresh(_best_of_split(x, Affine(mid, gen, rad), relax_rsqrt))

    def sqrt_nonneg(self, x: MidRad) -> Affine:
        """sqrt of a quantity known >= 0 (the annotated std): ``affine_split.relax_sqrt`` over
        ``nonneg_range`` (which holds every value x takes; the form may reach below 0)."""
        x = Affine.of(x)
        if x.gen is None:
            return self._as_ball(super().sqrt_nonneg, x)
        lo, hi = nonneg_range(x.mid, x.spread)
        return self.fresh(Affine(*linearise_in_range(x.mid, x.gen, x.rad, lo, hi, relax_sqrt)))

    def relu(self, x: MidRad) -> Affine:
        """Identity on lo >= 0, 0 on hi <= 0, else lam x + c (module doc)."""
        x = Affine.of(x)
        if x.gen is None:
            return self._as_ball(super().relu, x)
        with np.errstate(all="ignore"):
            # the relaxation over [mid - T, mid + T]: relu(mid + t) in mid' + lam t +- rho,
            # rho = 0 exactly where it is the identity (lam = 1) or 0 (lam = 0)
            mid, lam, rho = relax_relu(x.mid, x.spread)
            gen = x.gen * lam
            rest = rho + lam * x.rad + U * _gsum(gen)
            rad = np.where(rho == 0, lam * x.rad, up(rest, 8))
        return self.fresh(_best_of_split(x, Affine(mid, gen, rad), relax_relu))

    def concat(self, parts: Sequence[MidRad], axis: int) -> MidRad:
        aff = [Affine.of(p) for p in parts]
        gens = [a.gen for a in aff if a.gen is not None]
        if not gens:
            return super().concat(parts, axis)
        g = max(x.shape[0] for x in gens)
        full = [_pad(a.gen, g) if a.gen is not None else np.zeros((g, *a.shape)) for a in aff]
        return Affine(
            np.concatenate([a.mid for a in aff], axis=axis),
            np.concatenate(full, axis=_gaxis(axis)),
            np.concatenate([a.rad for a in aff], axis=axis),
        )

    def stack(self, parts: Sequence[MidRad], axis: int) -> MidRad:
        raise NotImplementedError("AffineContext.stack")

    def broadcast(self, x: MidRad, shape: tuple[int, ...]) -> MidRad:
        a = Affine.of(x)
        g = a._g(lambda g: np.broadcast_to(g, (g.shape[0], *shape)))
        return Affine(np.broadcast_to(a.mid, shape), g, np.broadcast_to(a.rad, shape))
