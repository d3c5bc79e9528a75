"""Vertex-exact linearisation of a nonlinear step in the affine arithmetic of sub-cubes.

The first G_b noise symbols of a sub-cube pass are its free bits: a string of the sub-cube is
a vertex e_k in {-1, 1} of them (the other symbols, remainders moved into fresh symbols, range
over [-1, 1]). Only the vertices matter, so a function of one bit symbol is exactly linear in
it there: g(e) = (g(1) + g(-1)) / 2 + e (g(1) - g(-1)) / 2 for e = +-1, however nonlinear g is
between. :func:`split_dominant` uses this on the bit symbol with the largest generator: for
x = m + a e_k + w (w the rest, |w| <= W), at e_k = s the step is linearised around
c_s = m + s a by a relaxation f(c_s + w) in alpha_s + beta_s w +- rho_s (|w| <= W), and

    f(x) = A + B e_k + C w + D e_k w +- max rho_s,   A, B = (alpha_+ +- alpha_-) / 2,
                                                       C, D = (beta_+ +- beta_-) / 2,

with |D e_k w| <= |D| W (a remainder). A single free bit (W = rounding only) is then exact,
where the midpoint Taylor form of ``verify.model.subcube.affine`` pays the curvature over the whole
gap between the two token rows (a variance between two strings' variances, a score between
two scores). The relaxations below are rigorous in float64 (round to nearest, the constants of
``verify.model.arithmetic.rounding``): |f(c + w) - alpha - beta w| <= rho for every real |w| <= W.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from verify.model.arithmetic.rounding import EXP_ULPS, TINY, U, up

Relaxation = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _chord(
    c: np.ndarray,
    w: np.ndarray,
    f: Callable[[np.ndarray], np.ndarray],
    df: Callable[[np.ndarray], np.ndarray],
    df_inv: Callable[[np.ndarray], np.ndarray],
    kappa: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chord relaxation of a convex f on [lo, hi] = [c - W, c + W] (min-range
    linearisation): slope lam = (f(hi) - f(lo)) / (hi - lo) (any float slope is valid; this one
    is near-optimal), g(x) = f(x) - lam x has its maximum at an endpoint (convexity) and is at
    least the tangent at x_t = (f')^(-1)(lam) (clipped to [lo, hi]) minus lam x, whose minimum
    is at an endpoint too. So f(c + t) = lam c + lam t + [g_min, g_max]. f and f' are computed
    with relative error <= kappa U; every product and sum gets a rounding slack."""
    lo = np.nextafter(c - w, -np.inf)
    hi = np.nextafter(c + w, np.inf)
    flo, fhi = f(lo), f(hi)
    width = hi - lo
    lam = np.where(width > 0, (fhi - flo) / np.where(width > 0, width, 1.0), df(c))
    xt = np.clip(df_inv(lam), lo, hi)
    xt = np.where(np.isnan(xt), c, xt)
    ft, dft = f(xt), df(xt)
    g_max = np.maximum(flo - lam * lo, fhi - lam * hi)
    g_min = np.minimum(ft + dft * (lo - xt) - lam * lo, ft + dft * (hi - xt) - lam * hi)
    alpha = lam * c + 0.5 * (g_max + g_min)
    mag = np.abs(flo) + np.abs(fhi) + np.abs(ft) + np.abs(alpha)
    mag = mag + (np.abs(dft) + np.abs(lam)) * (np.abs(lo) + np.abs(hi) + np.abs(xt))
    mag = mag + np.abs(lam * c) + np.abs(g_max) + np.abs(g_min)
    rho = 0.5 * (g_max - g_min) + 4 * (kappa + 4) * U * mag + TINY
    return alpha, lam, np.where(np.isfinite(rho) & np.isfinite(alpha), up(rho, 8), np.inf)


def relax_exp(c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """exp (convex everywhere) by its chord relaxation; f' = exp, (f')^(-1) = log."""
    with np.errstate(all="ignore"):
        return _chord(c, w, np.exp, np.exp, np.log, EXP_ULPS)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def relax_rsqrt(c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x^(-1/2), convex on x > 0, by its chord relaxation (f' = -x^(-3/2) / 2, (f')^(-1)(l) =
    (-2 l)^(-2/3)); radius inf where c - W <= 0."""
    with np.errstate(all="ignore"):
        alpha, lam, rho = _chord(
            c,
            w,
            _rsqrt,
            lambda x: -0.5 * _rsqrt(x) ** 3,
            lambda lam: (-2.0 * lam) ** (-2.0 / 3.0),
            8.0,
        )
        return alpha, lam, np.where((c - w) * (1 - U) > 0, rho, np.inf)


def relax_reciprocal(c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """1/x on [c - W, c + W] not containing 0, by the chord relaxation of 1/|x| (convex) and
    the odd symmetry 1/x = -1/(-x) for x < 0; radius inf where the interval reaches 0."""
    with np.errstate(all="ignore"):
        s = np.where(c < 0, -1.0, 1.0)
        alpha, lam, rho = _chord(
            s * c,
            w,
            lambda x: 1.0 / x,
            lambda x: -1.0 / (x * x),
            lambda lam: 1.0 / np.sqrt(-lam),
            4.0,
        )
        return s * alpha, lam, np.where((np.abs(c) - w) * (1 - U) > 0, rho, np.inf)


def nonneg_range(mid: np.ndarray, spread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] holding [mid - spread, mid + spread] (rounded outward) with lo clipped at 0: every
    value of a quantity known >= 0 whose form has this midpoint and spread."""
    with np.errstate(all="ignore"):
        slack = U * (np.abs(mid) + spread)
        return np.maximum((mid - spread) - slack, 0.0), (mid + spread) + slack


def relax_sqrt(c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sqrt on the values >= 0 of [c - W, c + W] (a quantity known >= 0: the annotated layer
    norm's unbiased variance), i.e. on [a, b] = [max(c - W, 0), c + W]: sqrt is concave, so
    with the chord slope lam = (sqrt b - sqrt a) / (b - a) > 0, h(x) = sqrt(x) - lam x is
    concave, its minimum on [a, b] is at an endpoint and its maximum over all x >= 0 is
    h(1 / (4 lam^2)) = 1 / (4 lam). So sqrt(c + t) = lam c + lam t + [h_min, 1 / (4 lam)];
    every product and sum gets a rounding slack. Radius inf when the slope is not finite and
    positive (b = 0, or a NaN)."""
    with np.errstate(all="ignore"):
        a = np.maximum(np.nextafter(c - w, -np.inf), 0.0)
        b = np.nextafter(c + w, np.inf)
        fa, fb = np.sqrt(a), np.sqrt(b)
        lam = (fb - fa) / (b - a)
        lam = np.where(b > a, lam, 0.5 / fb)
        h_min = np.minimum(fa - lam * a, fb - lam * b)
        h_max = 0.25 / lam
        alpha = lam * c + 0.5 * (h_max + h_min)
        mag = fa + fb + np.abs(lam) * (np.abs(a) + np.abs(b) + np.abs(c)) + np.abs(h_max)
        mag = mag + np.abs(h_min) + np.abs(alpha)
        rho = 0.5 * (h_max - h_min) + 8 * U * mag + TINY
        ok = np.isfinite(rho) & np.isfinite(alpha) & (lam > 0)
        return alpha, lam, np.where(ok, up(rho, 8), np.inf)


def relax_relu(c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """relu on [lo, hi] = [c - W, c + W]: the identity (lo >= 0), 0 (hi <= 0), else
    lam (c + t) + top / 2 +- top / 2 with lam = hi / (hi - lo) and 0 <= relu(x) - lam x <= top =
    max(-lam lo, hi (1 - lam)) for any lam in [0, 1]."""
    lo = np.nextafter(c - w, -np.inf)
    hi = np.nextafter(c + w, np.inf)
    pos, neg = lo >= 0, hi <= 0
    lam = np.clip(np.where(pos, 1.0, np.where(neg, 0.0, hi / (hi - lo))), 0.0, 1.0)
    top = np.maximum(-lam * lo, hi * (1 - lam)) * (1 + 4 * U) + 1e-300
    top = np.where(pos | neg, 0.0, top)
    lc = lam * c
    alpha = lc + 0.5 * top
    rho = np.where(pos | neg, 0.0, up(0.5 * top + 2 * U * (np.abs(lc) + np.abs(alpha)), 4))
    bad = np.isnan(hi - lo)
    return alpha, np.where(bad, np.nan, lam), np.where(bad, np.inf, rho)


def split_dominant(
    mid: np.ndarray, gen: np.ndarray, rad: np.ndarray, n_bits: int, relax: Relaxation
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mid, gen, rad) of f(x) by the split on each element's largest bit generator (module
    doc), valid at every vertex of the bit symbols 0..n_bits-1 and every value of the others.

    ``gen`` (G, *shape) with G >= 1 and 1 <= n_bits; the result's generators are C gen with
    the split symbol's replaced by B. Non-finite pieces give radius inf."""
    g = gen.shape[0]
    nb = min(n_bits, g)
    absg = np.abs(gen)
    k = np.argmax(absg[:nb], axis=0)  # the dominant bit symbol of each element
    a = np.take_along_axis(gen, k[None], axis=0)[0]
    total = up(absg.sum(axis=0), g)  # >= sum_k |g_k|
    w = up(np.maximum(total - np.abs(a), 0.0) + rad, 3)  # >= |w| (the rest, with rad)
    sides = []
    for s in (1.0, -1.0):
        c = mid + s * a
        ws = up(w + U * np.abs(c), 2)  # |m + s a - fl(m + s a)| <= U |c|
        sides.append((c, ws, *relax(c, ws)))
    (cp, wp, ap, bp, rp), (cm, wm, am, bm, rm) = sides
    big_a, big_b = 0.5 * (ap + am), 0.5 * (ap - am)
    big_c, big_d = 0.5 * (bp + bm), 0.5 * (bp - bm)
    out_gen = gen * big_c
    np.put_along_axis(out_gen, k[None], big_b[None], axis=0)
    wmax = np.maximum(wp, wm)
    ac, ad = np.abs(big_c), np.abs(big_d)
    rest = np.maximum(rp, rm) + ad * wmax + ac * (rad + U * np.maximum(np.abs(cp), np.abs(cm)))
    rest = rest + U * (np.abs(big_a) + np.abs(big_b)) + U * (ac + ad) * wmax
    rest = rest + 2 * U * ac * total  # rounding of the generators C g_j
    out_rad = np.where(np.isfinite(rest), up(rest, 12), np.inf)
    return big_a, out_gen, out_rad


def align_generators(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Generator arrays with their element axes aligned for broadcasting (symbol axis 0)."""
    nd = max(a.ndim, b.ndim)
    a = a.reshape(a.shape[0], *([1] * (nd - a.ndim)), *a.shape[1:])
    b = b.reshape(b.shape[0], *([1] * (nd - b.ndim)), *b.shape[1:])
    return a, b


def vertex_square_terms(
    ga: np.ndarray | None, gb: np.ndarray | None, nb: int, matmul: bool = False
) -> tuple[tuple[np.ndarray, np.ndarray] | None, float | np.ndarray]:
    """The bit symbols' diagonal of a product's quadratic term: sum_k ga_k gb_k e_k^2 with
    e_k^2 = 1 at every vertex (k < nb, the bit symbols), so it is a constant, not a remainder.
    Returns ((diag, a lower bound of sum_k |ga_k gb_k|), the rounding bound of diag), or (None, 0)
    when there is no bit symbol in both. ``matmul``: products summed over the last axis of
    ga and the second-to-last of gb, as in x @ w."""
    if ga is None or gb is None or nb == 0:
        return None, 0.0
    k = min(nb, ga.shape[0], gb.shape[0])
    if k == 0:
        return None, 0.0
    a, b = ga[:k], gb[:k]
    if matmul:
        n = a.shape[-1]
        diag = (a @ b).sum(axis=0)
        dabs = (np.abs(a) @ np.abs(b)).sum(axis=0)
    else:
        a, b = align_generators(a, b)
        n = 1
        diag = (a * b).sum(axis=0)
        dabs = np.abs(a * b).sum(axis=0)
    slack = (n * k + 4) * U
    return (diag, dabs * (1 - slack)), slack * dabs


def linearise_in_range(
    mid: np.ndarray,
    gen: np.ndarray,
    rad: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    relax: Relaxation,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mid, gen, rad) of f(x) for x = mid + gen . e + d whose true values are known to lie in
    [lo, hi] (narrower than the form's own range): the relaxation over [lo, hi] applied to the
    form, f(x) = alpha + beta (x - c) +- rho with c the middle of [lo, hi]. Valid wherever x is
    in [lo, hi], which is every value x takes."""
    c = 0.5 * (lo + hi)
    w = up(0.5 * (hi - lo) + U * np.abs(c), 2)  # [c - w, c + w] holds [lo, hi]
    alpha, beta, rho = relax(c, w)
    off = mid - c
    out_mid = alpha + beta * off
    ab = np.abs(beta)
    total = up(np.abs(gen).sum(axis=0), gen.shape[0])
    rest = rho + ab * (rad + 2 * U * np.abs(off)) + 2 * U * (np.abs(alpha) + np.abs(beta * off))
    rest = rest + 2 * U * ab * total
    out_rad = np.where(np.isfinite(rest), up(rest, 8), np.inf)
    return out_mid, gen * beta, out_rad


def exp_sum_range(
    s_mid: np.ndarray, s_spread: np.ndarray, den_mid: np.ndarray, den_spread: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] holding den = sum_j e^(s_j) (last axis) for every score s_j in [s_mid - s_spread,
    s_mid + s_spread], met with den's own affine range [den_mid -+ den_spread], outward rounded
    (the affine form may reach 0 where den cannot)."""
    n = s_mid.shape[-1]
    with np.errstate(all="ignore"):
        s_lo = np.nextafter(s_mid - s_spread, -np.inf)
        s_hi = np.nextafter(s_mid + s_spread, np.inf)
        lo = (np.exp(s_lo) * (1 - EXP_ULPS * U)).sum(-1) * (1 - (n + 2) * U)
        hi = up((np.exp(s_hi) * (1 + EXP_ULPS * U) + TINY).sum(-1), n)
        lo = np.maximum(lo, np.nextafter(den_mid - den_spread, -np.inf))
        hi = np.minimum(hi, np.nextafter(den_mid + den_spread, np.inf))
    return lo, hi


def values_hull(mid: np.ndarray, spread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mid, rad) of [min_j lo_j, max_j hi_j] over the key axis (-2) of values v (..., Skv, d_h)
    enclosed by mid -+ spread, keeping that axis with length 1: a convex combination of the
    values (a softmax row times V) lies in it."""
    with np.errstate(all="ignore"):
        lo = np.nextafter(mid - spread, -np.inf).min(axis=-2)[..., None, :]
        hi = np.nextafter(mid + spread, np.inf).max(axis=-2)[..., None, :]
        centre = 0.5 * (lo + hi)
        return centre, up(0.5 * (hi - lo), 2) + U * np.abs(centre)
