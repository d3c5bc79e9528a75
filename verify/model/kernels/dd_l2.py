"""Double-double stages with one 2-norm radius per vector (per string and position): the data
error is propagated through norms and Lipschitz constants, the rounding error of each stage is
bounded componentwise at the exact midpoint (the stage kernels of ``dd_dense``, ``dd_norm``
called with zero input radii) and enters as the 2-norm of those bounds.

Why: componentwise radii propagate through |W| (a sum of |w| r per row, ~sqrt(D) times the
spectral norm of a random matrix) and through the layer norm's interval variance (each norm
costs 2.5-3x); the losses compound to 2e4x per layer at D = 32 and 1e5x at D = 64. With a
2-norm radius rho (|x_exact - x_mid|_2 <= rho) a matrix costs its spectral norm |W|_2 (bounded
rigorously beforehand, ``double_double.spectral_norm_upper``), a layer norm its Lipschitz
constant on the ball, relu 1, the residual addition the sum of the two radii.

Every function here bounds |f(x_exact) - computed| <= |f(x_exact) - f(x_mid)| + |f(x_mid) -
computed|: the first term by the propagation rule named in its doc, the second by the stage
kernel's rigorous componentwise rounding bound r (2-norm <= ``l2_rows`` of r).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from verify._numba import kernel
from verify.model.kernels.bundles import A1, A2, A3, f8, i8
from verify.model.kernels.dd import DD_MUL, UU, dd_mul, fma, two_sum
from verify.model.kernels.dd_norm import softmax_dd
from verify.model.rounding import ETA, U

SQ_SLACK = 1e-300  # added to sums of squares: covers squares that underflow (n 2^-1074 each)


@kernel(types.void(A2, i8, i8, A1))
def l2_rows(r, r0, r1, out):  # pragma: no cover - jitted
    """out[b] >= sqrt(sum_{r0 <= i < r1} r[i, b]^2) for non-negative r."""
    nb = r.shape[1]
    for b in range(nb):
        out[b] = 0.0
    for i in range(r0, r1):
        for b in range(nb):
            out[b] += r[i, b] * r[i, b]
    for b in range(nb):
        out[b] = math.sqrt(out[b] * (1 + (r1 - r0 + 3) * U) + SQ_SLACK) * (1 + 2 * U)


@kernel(types.void(A2, A2, A1, f8, f8, A1))
def layer_norm_lipschitz(vh, vl, rho, eps, gmax, out):  # pragma: no cover - jitted
    """out[b] >= the 2-norm Lipschitz constant of v -> gain (v - mean) / sqrt(var + eps) on the
    ball |v - v_m|_2 <= rho[b], v_m = vh + vl (column b); inf if it may reach var + eps = 0.

    With P the centring projection and h(t) = (t^2 / d + eps)^-1/2, the map is gain * F(P v)
    with F(x) = x h(|x|); F's Jacobian has eigenvalues h(t) (across x) and eps (t^2/d +
    eps)^-3/2 in [0, h(t)] (along x), so its norm is h(|x|), decreasing in |x|. On the
    segment from v_m to v, |P v| >= |P v_m| - rho =: t_min, so the constant is max |gain|
    h(t_min) (|P| = 1). A lower bound of |P v_m|: with m the float64 mean of vh, a_i =
    fl(vh_i - m), c_i = fl(a_i + vl_i) and x_i = v_m,i - m exactly, |c_i - x_i| <= U (|a_i| +
    |c_i|) =: e_i; |x|_2 >= |c|_2 - sum e, |sum x| <= |sum c| + sum e, |P v_m|^2 = |P x|^2 =
    |x|^2 - (sum x)^2 / d; the float64 sum of c is within d u sum |c| of sum c (cancellation:
    a bound relative to sum |c|, not to |sum c|)."""
    d = vh.shape[0]
    nb = vh.shape[1]
    for b in range(nb):
        s = 0.0
        for i in range(d):
            s += vh[i, b]
        m = s / d
        ss = 0.0
        se = 0.0
        sc = 0.0
        for i in range(d):
            a = vh[i, b] - m
            c = a + vl[i, b]
            ss += c * c
            se += abs(a) + abs(c)
            sc += c
        e1 = se * U * (1 + (2 * d + 4) * U)
        nc = math.sqrt(max(ss * (1 - (d + 3) * U) - SQ_SLACK, 0.0)) * (1 - 2 * U)
        nx = (nc - e1) * (1 - U)
        t = 0.0
        if nx > 0:
            sx = (abs(sc) + (d + 2) * U * se + e1) * (1 + 2 * U)
            p2 = (nx * nx * (1 - U) - sx * sx / d * (1 + 3 * U)) * (1 - U)
            if p2 > 0:
                t = math.sqrt(p2) * (1 - 2 * U)
                t = (t - rho[b]) * (1 - U)
        if not t > 0:  # also NaN
            t = 0.0
        den = (t * t / d * (1 - 3 * U) + eps) * (1 - U)
        if den > 0:
            out[b] = gmax / (math.sqrt(den) * (1 - 2 * U)) * (1 + 2 * U)
        else:
            out[b] = np.inf


@kernel(types.void(A3, A3, A3, i8, i8, f8, f8, f8, A2, A2, A1, A2, A2, A2))
def attention_l2(
    qh, ql, rq, i, n_heads, cmh, cml, cr, ath, atl, rat, ph, pl, pr
):  # pragma: no cover - jitted
    """Concatenated head outputs at query position i (before out_proj) and rat[b] >= their
    2-norm error, from the queries, keys and values q* (s, 3d, nb) with
    2-norm radii rq (s, 3 n_heads, nb): per position, the query block of each head, then the
    key blocks, then the value blocks.

    Scores c q.k: |(q + dq).(k + dk) - q.k| <= |q| |dk| + |dq| |k| + |dq| |dk| (Cauchy-Schwarz;
    |q| from |high| + |low|), plus the dot product's rounding (m + 3)^2 UU sum |q| |k| (TwoProd
    of the high parts and TwoSum accumulate exactly, the cross terms go to a float64
    accumulator; |.| = |high| + |low|); the factor c = 1/sqrt(d_h) (DD cmh + cml, radius cr):
    |c' a' - c a~| <= cr (|a~| + r_a) + |c| r_a + DD_MUL |c a~|; the score radii go through
    ``softmax_dd``. Head output sum_j p_j v_j: |sum p'_j v'_j - computed| <= |sum p_j v_j -
    computed| + |sum (p'_j - p_j) v_j| + |sum p'_j (v'_j - v_j)|; the first two componentwise
    (rounding and sum_j r_p,j |v_j,e|), the third <= sum_j (|p_j| + r_p,j) rho_v,j."""
    s = qh.shape[0]
    d = qh.shape[1] // 3
    nb = qh.shape[2]
    dh = d // n_heads
    acm = abs(cmh) + abs(cml)
    g_dot = (dh + 3) * (dh + 3) * UU
    g_av = (s + 3) * (s + 3) * UU
    acc_h = np.empty(nb)
    acc_l = np.empty(nb)
    mag = np.empty(nb)
    rad = np.empty(nb)
    nq = np.empty(nb)
    nk = np.empty(nb)
    tot = np.zeros(nb)
    for hd in range(n_heads):
        c0 = hd * dh
        for b in range(nb):
            nq[b] = 0.0
        for e in range(dh):
            for b in range(nb):
                aa = abs(qh[i, c0 + e, b]) + abs(ql[i, c0 + e, b])
                nq[b] += aa * aa
        for b in range(nb):
            nq[b] = math.sqrt(nq[b] * (1 + (dh + 4) * U)) * (1 + 2 * U)
        for j in range(s):
            for b in range(nb):
                acc_h[b] = 0.0
                acc_l[b] = 0.0
                mag[b] = 0.0
                nk[b] = 0.0
            for e in range(dh):
                qhe = qh[i, c0 + e]
                qle = ql[i, c0 + e]
                khe = qh[j, d + c0 + e]
                kle = ql[j, d + c0 + e]
                for b in range(nb):
                    ah = qhe[b]
                    al = qle[b]
                    bh = khe[b]
                    bl = kle[b]
                    p = ah * bh
                    err = fma(ah, bh, -p)
                    sh = acc_h[b]
                    t = sh + p
                    bb = t - sh
                    acc_l[b] += (((sh - (t - bb)) + (p - bb)) + err) + fma(ah, bl, al * bh)
                    acc_h[b] = t
                    aa = abs(ah) + abs(al)
                    ab = abs(bh) + abs(bl)
                    mag[b] += aa * ab
                    nk[b] += ab * ab
            for b in range(nb):
                sh, sl = two_sum(acc_h[b], acc_l[b])
                sch, scl = dd_mul(sh, sl, cmh, cml)
                ph[j, b] = sch
                pl[j, b] = scl
                nkb = math.sqrt(nk[b] * (1 + (dh + 4) * U)) * (1 + 2 * U)
                rqi = rq[i, hd, b]
                rkj = rq[j, n_heads + hd, b]
                racc = (g_dot * mag[b] + nq[b] * rkj + rqi * nkb + rqi * rkj) * (
                    1 + (2 * dh + 12) * U
                ) + ETA
                asc = abs(sch) + abs(scl)
                pr[j, b] = ((abs(sh) + abs(sl)) * cr + racc * (acm + cr) + DD_MUL * asc) * (
                    1 + 4 * U
                ) + ETA
        softmax_dd(ph, pl, pr, True)
        for b in range(nb):
            nq[b] = 0.0  # now: the sum of squares of the componentwise bounds
            nk[b] = 0.0  # now: sum_j (|p_j| + r_p,j) rho_v,j
        for j in range(s):
            for b in range(nb):
                nk[b] += (abs(ph[j, b]) + abs(pl[j, b]) + pr[j, b]) * rq[j, 2 * n_heads + hd, b]
        for e in range(dh):
            for b in range(nb):
                acc_h[b] = 0.0
                acc_l[b] = 0.0
                mag[b] = 0.0
                rad[b] = 0.0
            for j in range(s):
                vhe = qh[j, 2 * d + c0 + e]
                vle = ql[j, 2 * d + c0 + e]
                for b in range(nb):
                    ah = ph[j, b]
                    al = pl[j, b]
                    bh = vhe[b]
                    bl = vle[b]
                    p = ah * bh
                    err = fma(ah, bh, -p)
                    sh = acc_h[b]
                    t = sh + p
                    bb = t - sh
                    acc_l[b] += (((sh - (t - bb)) + (p - bb)) + err) + fma(ah, bl, al * bh)
                    acc_h[b] = t
                    ab = abs(bh) + abs(bl)
                    mag[b] += (abs(ah) + abs(al)) * ab
                    rad[b] += pr[j, b] * ab
            for b in range(nb):
                sh, sl = two_sum(acc_h[b], acc_l[b])
                ath[c0 + e, b] = sh
                atl[c0 + e, b] = sl
                comp = (rad[b] + g_av * mag[b]) * (1 + (2 * s + 6) * U) + ETA
                nq[b] += comp * comp
        for b in range(nb):
            rh = math.sqrt(nq[b] * (1 + (dh + 3) * U) + SQ_SLACK) * (1 + 2 * U)
            rh = (rh + nk[b] * (1 + (s + 3) * U)) * (1 + U)
            tot[b] += rh * rh
    for b in range(nb):
        rat[b] = math.sqrt(tot[b] * (1 + (n_heads + 3) * U) + SQ_SLACK) * (1 + 2 * U)


@kernel(types.void(A2, A2, A1))
def abs_l2(xh, xl, out):  # pragma: no cover - jitted
    """out[b] >= the 2-norm of column b of |xh| + |xl| (an upper bound of |x_mid|_2)."""
    n = xh.shape[0]
    nb = xh.shape[1]
    for b in range(nb):
        out[b] = 0.0
    for i in range(n):
        for b in range(nb):
            a = abs(xh[i, b]) + abs(xl[i, b])
            out[b] += a * a
    for b in range(nb):
        out[b] = math.sqrt(out[b] * (1 + (n + 4) * U) + SQ_SLACK) * (1 + 2 * U)


@kernel(types.void(A1, A1, i8, i8, f8, f8, f8, A1))
def matvec_radius(rho, na, n, rows, spec, fro, bnorm, out):  # pragma: no cover - jitted
    """out[b] >= spec rho[b] + the 2-norm over ``rows`` output rows of ``matvec_dd``'s rounding
    error (computed without its componentwise bounds): per row it is <= (n + 2)^2 UU (|b_j| +
    sum_k |w_jk| a_k) (1 + (2n + 5) U) + ETA with a = |xh| + |xl| (n inputs), so over the rows
    <= (n + 2)^2 UU (|b|_2 + |W|_F |a|_2) (1 + (2n + 7) U) + rows ETA, since
    | |W| a |_2 <= | |W| |_F |a|_2 = |W|_F |a|_2 (spec >= |W|_2, fro >= |W|_F and bnorm >= |b|_2
    of the rows; na[b] >= |a|_2)."""
    g = (n + 2) * (n + 2) * UU * (1 + U)
    for b in range(out.shape[0]):
        rr = g * (bnorm + fro * na[b]) * (1 + (2 * n + 9) * U) + rows * ETA
        out[b] = (spec * rho[b] + rr) * (1 + 2 * U)
