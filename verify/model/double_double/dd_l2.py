"""Double-double stages with one 2-norm radius per vector (per string and position): the data
error is propagated through norms and Lipschitz constants, the rounding error of each stage is
bounded componentwise at the exact midpoint (the stage kernels of ``dd_dense``, ``dd_norm``
called with zero input radii) and enters as the 2-norm of those bounds.

Why: componentwise radii propagate through |W| (a sum of |w| r per row, ~sqrt(D) times the
spectral norm of a random matrix) and through the layer norm's interval variance (each norm
costs 2.5-3x); the losses compound to 2e4x per layer at D = 32 and 1e5x at D = 64. With a
2-norm radius rho (|x_exact - x_mid|_2 <= rho) a matrix costs its spectral norm |W|_2 (bounded
rigorously beforehand, ``matrix_norms.spectral_norm_upper``), a layer norm its Lipschitz
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
from verify.model.arithmetic.rounding import ETA, TINY, U
from verify.model.double_double.dd_arith import (
    DD_ADD,
    DD_MUL,
    EXP_DD,
    UU,
    dd_add_d,
    dd_dot_step,
    dd_exp,
    dd_mul,
    two_sum,
)
from verify.model.double_double.dd_dense import inverse_dd
from verify.model.stages.bundles import A1, A2, A3, b1, f8, i8
from verify.model.stages.l2_bounds import SQ_SLACK, l2_from_squares, lipschitz_from_sums
from verify.model.stages.softmax import expm1_upper


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


@kernel(types.void(A2, A2, A1, f8, b1, f8, A1))
def layer_norm_lipschitz(vh, vl, rho, eps, annotated, gmax, out):  # pragma: no cover - jitted
    """out[b] >= the 2-norm Lipschitz constant of v -> gain (v - mean) z + bias (z of the form,
    ``layer_norm.ln_coefficient``) on the ball |v - v_m|_2 <= rho[b], v_m = vh + vl (column
    b); inf if it may reach a zero denominator.

    With P the centring projection and h(t) = (t^2 / d + eps)^-1/2, the map is gain * F(P v)
    with F(x) = x h(|x|); F's Jacobian has eigenvalues h(t) (across x) and eps (t^2/d +
    eps)^-3/2 in [0, h(t)] (along x), so its norm is h(|x|), decreasing in |x|. On the
    segment from v_m to v, |P v| >= |P v_m| - rho =: t_min, so the constant is max |gain|
    h(t_min) (|P| = 1). A lower bound of |P v_m|: with m the float64 mean of vh, a_i =
    fl(vh_i - m), c_i = fl(a_i + vl_i) and x_i = v_m,i - m exactly, |c_i - x_i| <= U (|a_i| +
    |c_i|) =: e_i; |x|_2 >= |c|_2 - sum e, |sum x| <= |sum c| + sum e, |P v_m|^2 = |P x|^2 =
    |x|^2 - (sum x)^2 / d; the float64 sum of c is within d u sum |c| of sum c (cancellation:
    a bound relative to sum |c|, not to |sum c|).

    The annotated form: F(x) = x / (k |x| + eps), k = 1 / sqrt(d - 1) (|P v| / sqrt(d - 1) is
    the unbiased std), with Jacobian (I - k |x| / (k |x| + eps) xh xh^T) / (k |x| + eps), xh
    = x / |x|: eigenvalues 1 / (k |x| + eps) across x and eps / (k |x| + eps)^2 <= that along
    x, so its norm is 1 / (k |x| + eps), decreasing in |x|, and the constant is max |gain| /
    (t_min / sqrt(d - 1) + eps) (at eps = 0 and t_min = 0: inf)."""
    d = vh.shape[0]
    nb = vh.shape[1]
    mean = np.zeros(nb)  # the sums run over i for all strings at once (strings innermost:
    sum_c2 = np.zeros(nb)  # vectorised), in the same order as one string at a time
    sum_ac = np.zeros(nb)
    sum_c = np.zeros(nb)
    for i in range(d):
        for b in range(nb):
            mean[b] += vh[i, b]
    for b in range(nb):
        mean[b] = mean[b] / d
    for i in range(d):
        for b in range(nb):
            a = vh[i, b] - mean[b]
            c = a + vl[i, b]
            sum_c2[b] += c * c
            sum_ac[b] += abs(a) + abs(c)
            sum_c[b] += c
    for b in range(nb):
        out[b] = lipschitz_from_sums(
            sum_c2[b], sum_ac[b], sum_c[b], rho[b], d, eps, annotated, gmax
        )


@kernel(types.void(A2, A2, A2, A2, A2))
def softmax_l2(ph, pl, sig, pr, p0):  # pragma: no cover - jitted
    """In place, per string (column): p_j = exp(a_j - mx) / sum_k exp(a_k - mx) for the DD
    scores a with radii sig (kept); mx = the float64 maximum of the high parts, an exact
    constant (softmax is invariant under it). Each exp(a_j - mx) gets the radius
    exp(d)(expm1(sig_j + DD_ADD |d|) + EXP_DD), the normaliser the compensated sum of those
    (error (S + 2)^2 UU), and p_j = e_j / t the quotient rule with the a posteriori bound of
    ``inverse_dd``. Two radii: pr[j] >= |p_j(a') - p_j| for every a' with |a'_k - a_k| <=
    sig_k (the enclosure), and p0[j] >= |p_j(a) - p_j| (the rounding at the midpoint: the
    same rule with sig = 0)."""
    s = ph.shape[0]
    nb = ph.shape[1]
    g_sum = (s + 2) * (s + 2) * UU
    for b in range(nb):
        mx = -np.inf
        for j in range(s):
            if ph[j, b] > mx:
                mx = ph[j, b]
        if not np.isfinite(mx):
            mx = 0.0
        th = 0.0
        tl = 0.0
        rtot = 0.0
        rtot0 = 0.0
        for j in range(s):
            dh, dl = dd_add_d(ph[j, b], pl[j, b], -mx)
            eh, el = dd_exp(dh, dl)
            ph[j, b] = eh
            pl[j, b] = el
            sm = th + eh
            bb = sm - th
            tl += ((th - (sm - bb)) + (eh - bb)) + el
            th = sm
            r_add = DD_ADD * (abs(dh) + abs(dl))
            bigv = (eh * (1 + U) + TINY) * (1 + 2 * EXP_DD) * (1 + U)  # >= exp(d)
            em = expm1_upper((sig[j, b] + r_add) * (1 + 2 * U))
            em0 = expm1_upper(r_add * (1 + 2 * U))
            re = (bigv * (em + EXP_DD) + TINY) * (1 + 4 * U) + ETA
            re0 = (bigv * (em0 + EXP_DD) + TINY) * (1 + 4 * U) + ETA
            pr[j, b] = re
            p0[j, b] = re0
            rtot += re
            rtot0 += re0
        th, tl = two_sum(th, tl)
        qh, ql, qerr = inverse_dd(th, tl)
        rtot = (rtot + g_sum * (th + abs(tl))) * (1 + (s + 4) * U)
        rtot0 = (rtot0 + g_sum * (th + abs(tl))) * (1 + (s + 4) * U)
        gap = ((th - rtot) * (1 - U) - abs(tl)) * (1 - U)
        gap0 = ((th - rtot0) * (1 - U) - abs(tl)) * (1 - U)
        for j in range(s):
            eh = ph[j, b]
            el = pl[j, b]
            p_h, p_l = dd_mul(eh, el, qh, ql)
            ph[j, b] = p_h
            pl[j, b] = p_l
            ap = abs(p_h) + abs(p_l)
            ae = (eh + abs(el)) * qerr + DD_MUL * ap
            if gap > 0 and qerr < math.inf:
                pr[j, b] = ((pr[j, b] + ap * (1 + U) * rtot) / gap + ae) * (1 + 4 * U)
            else:
                pr[j, b] = np.inf
            if gap0 > 0 and qerr < math.inf:
                p0[j, b] = ((p0[j, b] + ap * (1 + U) * rtot0) / gap0 + ae) * (1 + 4 * U)
            else:
                p0[j, b] = np.inf


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
    |c' a' - c a~| <= cr (|a~| + r_a) + |c| r_a + DD_MUL |c a~|: score radii sig_j.

    Head output: with p' the exact weights at the exact scores, p(a) those at the score
    midpoints a, p~ the computed ones (``softmax_l2``: |p(a'') - p~| <= r_p for every a'' in
    the score box, |p(a) - p~| <= r0), v the value midpoints and v' the exact values,
    sum p'_j v'_j - computed = (sum p~_j v_j - computed) + sum (p(a) - p~)_j v_j
    + sum (p' - p(a))_j v_j + sum p'_j (v'_j - v_j). Componentwise (per value coordinate e):
    the first is the dot product's rounding, the second <= sum r0_j |v_j|; the third is
    int_0^1 J(xi_t) (a' - a) dt . v with J = diag(p) - p p^T, and since the exact weights sum
    to 1, (J(xi) da) . v = sum_j p_j(xi) da_j (v_j - vbar(xi)) with vbar(xi) = sum_k p_k(xi)
    v_k; for any float a_e, |v_j - vbar(xi)| <= |v_j - a_e| + |a_e - vbar(xi)| and |a_e -
    vbar(xi)| <= |a_e - computed| + rounding + sum_k r_p,k |v_k|, so it is <= sum_j (|p~_j| +
    r_p,j) sig_j (|v_j - a_e| + A_e) (a_e = the computed output's high part). The fourth, in
    2-norm, <= sum_j (|p~_j| + r_p,j) rho_v,j."""
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
    wsum = np.empty(nb)
    sig = np.empty((s, nb))
    p0 = np.empty((s, nb))
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
                    acc_h[b], acc_l[b] = dd_dot_step(acc_h[b], acc_l[b], ah, al, bh, bl)
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
                sig[j, b] = ((abs(sh) + abs(sl)) * cr + racc * (acm + cr) + DD_MUL * asc) * (
                    1 + 4 * U
                ) + ETA
        softmax_l2(ph, pl, sig, pr, p0)
        for b in range(nb):
            nq[b] = 0.0  # now: the sum of squares of the componentwise bounds
            nk[b] = 0.0  # now: sum_j (|p_j| + r_p,j) rho_v,j
            wsum[b] = 0.0
        for j in range(s):
            for b in range(nb):
                pw = abs(ph[j, b]) + abs(pl[j, b]) + pr[j, b]
                nk[b] += pw * rq[j, 2 * n_heads + hd, b]
                sig[j, b] = pw * sig[j, b]  # now: the weight w_j = (|p_j| + r_p,j) sig_j
                wsum[b] += sig[j, b]
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
                    acc_h[b], acc_l[b] = dd_dot_step(acc_h[b], acc_l[b], ah, al, bh, bl)
                    ab = abs(bh) + abs(bl)
                    mag[b] += (abs(ah) + abs(al)) * ab
                    rad[b] += pr[j, b] * ab
            for b in range(nb):
                sh, sl = two_sum(acc_h[b], acc_l[b])
                ath[c0 + e, b] = sh
                atl[c0 + e, b] = sl
                rnd = g_av * mag[b] * (1 + (2 * s + 6) * U) + ETA  # the dot product's rounding
                # A_e >= |a_e - vbar(xi)|: the low part, the rounding, sum_k r_p,k |v_k|
                acc_h[b] = (abs(sl) + rnd + rad[b] * (1 + (s + 3) * U)) * (1 + 2 * U)
                acc_l[b] = 0.0  # now: sum_j w_j |v_j - a_e| + sum_j r0_j |v_j|
            for j in range(s):
                vhe = qh[j, 2 * d + c0 + e]
                vle = ql[j, 2 * d + c0 + e]
                for b in range(nb):
                    dv = abs(vhe[b] - ath[c0 + e, b]) * (1 + U) + abs(vle[b])
                    acc_l[b] += sig[j, b] * dv + p0[j, b] * (abs(vhe[b]) + abs(vle[b]))
            for b in range(nb):
                t1 = acc_l[b] * (1 + (3 * s + 6) * U) + wsum[b] * (1 + (s + 3) * U) * acc_h[b]
                comp = (t1 + g_av * mag[b] * (1 + (2 * s + 6) * U)) * (1 + 3 * U) + ETA
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
        out[b] = l2_from_squares(out[b], n)


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
