"""An independent numpy implementation of the per-string kernel's radius rules
(``verify.model.per_string.per_string_kernel.certified_T`` and the stages it calls), written from
the rules' documented formulas, for tests that compare the kernel's radius with it.

Arrays are (features, strings) like the kernel's. The midpoints are computed by the kernel's
operations in the kernel's order (the matrix-vector products in groups of four, every other
sum sequential, exp from libm through ``math.exp``), so they agree with the kernel's bit for
bit and the two radii differ only by the order in which the radius sums are rounded (a
relative 1e-15). Every rule is one function here: a test asserts ``kernel >= reference (1 -
REL)``, so a kernel that lost a term or a constant factor is seen wherever that term is not
negligible, which is what the constructions of ``tests/test_radius_rules.py`` arrange.

The constants are pinned here, not imported: a mutated ``verify.model.arithmetic.rounding`` or
kernel module does not move the reference.

Both layer-norm forms (``verify.model.spec.ln_forms``): an ``eps`` of type :class:`AnnotatedEps`
(``form_eps``) selects the annotated form a (v - mean) / (std_unbiased + eps) + b in every rule
that takes eps, so the rules' signatures (and their callers here and in
``tests/_exhaustive_reference.py``, ``tests/_l2_reference.py``) serve both forms.
"""

from __future__ import annotations

import math

import numpy as np

U = 2.0**-52  # twice the unit roundoff of binary64 (verify.model.arithmetic.rounding)
ETA = 1e-300
EXP_ULPS = 8.0
TINY = 1e-322
REL = 1e-12  # the radii's own rounding in a different order: far below every term tested
TRACE: list | None = None  # when a list: (layer, pre-activation, its radius) of each MLP

_exp = np.frompyfunc(math.exp, 1, 1)


def exp(x: np.ndarray) -> np.ndarray:
    """libm's exp elementwise (the function the kernels call), not numpy's."""
    return _exp(x).astype(np.float64)


def matvec(x, rx, wt, bias, c0, c1):
    """y_j = b_j + sum_k W_jk x_k for j in [c0, c1); r_y = |W| (r_x + g |x|) + g |b|,
    g = (n + 2) U, inflated by (1 + (2n + 5) U) + ETA."""
    n = x.shape[0]
    n4 = n - n % 4
    g = (n + 2) * U
    out = np.empty((c1 - c0, x.shape[1]))
    for j, c in enumerate(range(c0, c1)):
        o = np.full(x.shape[1], bias[c])
        for k in range(0, n4, 4):
            o = o + ((wt[k, c] * x[k] + wt[k + 1, c] * x[k + 1]) + (
                wt[k + 2, c] * x[k + 2] + wt[k + 3, c] * x[k + 3]))  # fmt: skip
        for k in range(n4, n):
            o = o + wt[k, c] * x[k]
        out[j] = o
    sc = rx + g * np.abs(x)
    rout = (np.abs(wt[:, c0:c1]).T @ sc + g * np.abs(bias[c0:c1])[:, None]) * (
        1 + (2 * n + 5) * U
    ) + ETA
    return out, rout


def add(y, ry, a, ra):
    """s = y + a; r = (r_y + r_a + U |s|)(1 + 2U)."""
    s = y + a
    return s, (ry + ra + U * np.abs(s)) * (1 + 2 * U)


def relu(x, rx):
    """relu is 1-Lipschitz; a ball wholly <= 0 has radius 0."""
    return np.maximum(x, 0.0), np.where(x + rx <= 0.0, 0.0, rx)


class AnnotatedEps(float):
    """The eps of an annotated-form layer norm (LN = a (v - mean) / (std_unbiased + eps) + b):
    a float that carries its form through the rules' eps arguments."""


def form_eps(eps: float, annotated: bool) -> float:
    """eps as the rules take it: an :class:`AnnotatedEps` for the annotated form."""
    return AnnotatedEps(eps) if annotated else float(eps)


def coefficient(ss, var, eps, d):
    """z: 1 / sqrt(var + eps) (torch), or 1 / (sqrt(ss / (d - 1)) + eps) (annotated)."""
    with np.errstate(all="ignore"):
        if isinstance(eps, AnnotatedEps):
            return 1.0 / (np.sqrt(ss / (d - 1)) + float(eps))
        return 1.0 / np.sqrt(var + eps)


def annotated_radius(ss, eps, acc, d, z):
    """|z_exact - z| for the annotated form, from its derivation (docs/model.md): q = ss / (d -
    1) within r_q = ((acc + (d + 2) U ss) / (d - 1) + 2 U q)(1 + (d + 4) U) + ETA; s =
    sqrt(q) within r_s = (min(r_q / ((sqrt(l_q) + s)(1 - 4U))(1 + U), sqrt(r_q)(1 + 2U)) + U
    s)(1 + U), l_q = max(q - r_q, 0)(1 - 2U); t = s + eps within r_t = (r_s + U t)(1 + 2U);
    with low = (t - r_t)(1 - U) > 0, r_z = r_t / (t low)(1 + 4U) + 2 U z, else inf."""
    eps = float(eps)
    with np.errstate(all="ignore"):
        q = ss / (d - 1)
        rq = ((acc + (d + 2) * U * ss) / (d - 1) + 2 * U * q) * (1 + (d + 4) * U) + ETA
        s = np.sqrt(q)
        lq = np.maximum(q - rq, 0.0) * (1 - 2 * U)
        den = (np.sqrt(lq) + s) * (1 - 4 * U)
        lin = np.where(den > 0, rq / den * (1 + U), np.inf)
        rs = (np.minimum(lin, np.sqrt(rq) * (1 + 2 * U)) + U * s) * (1 + U)
        t = s + eps
        rt = (rs + U * t) * (1 + 2 * U)
        low = (t - rt) * (1 - U)
        r = rt / (t * low) * (1 + 4 * U) + 2 * U * z
    return np.where(low > 0, r, np.inf)


def coefficient_radius(ss, var, eps, acc, d, z):
    """``annotated_radius`` or ``rsqrt_radius``, by the form of eps."""
    if isinstance(eps, AnnotatedEps):
        return annotated_radius(ss, eps, acc, d, z)
    return rsqrt_radius(var, eps, acc, d, z)


def rsqrt_radius(var, eps, acc, d, z):
    """|z_exact - z| for z = 1/sqrt(var + eps): r_var from acc / d and the rounding of var,
    r_sv = (r_var + U sv)(1 + 2U), low = (sv - r_sv)(1 - U) and r_sv / (2 low^{3/2}(1 - 4U))
    + 4 U z, or inf when low <= 0."""
    sv = var + eps
    rvar = ((acc + (d + 2) * U * var * d) / d + 2 * U * var) * (1 + (d + 4) * U) + ETA
    rsv = (rvar + U * sv) * (1 + 2 * U)
    low = (sv - rsv) * (1 - U)
    with np.errstate(all="ignore"):
        r = rsv / (2.0 * low * np.sqrt(low) * (1 - 4 * U)) + 4 * U * z
    return np.where(low > 0, r, np.inf)


def layer_norm(v, rv, gain, bias, eps):
    """LN over axis 0 (the form of eps: ``coefficient``) with the componentwise rule of
    ``stages.layer_norm.layer_norm``: r_mean, r_c = (r_v + r_mean + U|c|)(1 + 3U), acc = sum
    (2|c| r_c + r_c^2), r_z, then r = (|c| r_z + r_c (z + r_z) + U |c z|) |g| + U |c z g|, plus
    U |out|, (1 + 8U) + ETA."""
    d = v.shape[0]
    mean = np.zeros(v.shape[1])
    for i in range(d):
        mean = mean + v[i]
    mean = mean / d
    c = v - mean
    ss = np.zeros(v.shape[1])
    for i in range(d):
        ss = ss + c[i] * c[i]
    var = ss / d
    z = coefficient(ss, var, eps, d)
    rmean = ((rv.sum(0) + (d + 1) * U * np.abs(v).sum(0)) / d + 2 * U * np.abs(mean)) * (
        1 + (d + 4) * U
    )
    rc = (rv + rmean + U * np.abs(c)) * (1 + 3 * U)
    acc = (2 * np.abs(c) * rc + rc * rc).sum(0)
    rz = coefficient_radius(ss, var, eps, acc, d, z)
    with np.errstate(all="ignore"):
        cz = c * z
        o = cz * gain[:, None]
        o2 = o + bias[:, None]
        r = np.abs(c) * rz + rc * (z + rz) + U * np.abs(cz)
        r = r * np.abs(gain)[:, None] + U * np.abs(o)
        return o2, (r + U * np.abs(o2)) * (1 + 8 * U) + ETA


def expm1_upper(x):
    """x / (1 - x)(1 + 4U) below 1/2, libm's expm1 (1 + EXP_ULPS U) above."""
    with np.errstate(all="ignore"):
        small = x / (1 - x) * (1 + 4 * U)
        return np.where(x < 0.5, small, np.expm1(x) * (1 + EXP_ULPS * U))


def exp_radius(bigv, rd):
    """bigv (expm1(rd) + EXP_ULPS U)(1 + 4U) + ETA, bigv >= exp(a)."""
    return bigv * (expm1_upper(rd) + EXP_ULPS * U) * (1 + 4 * U) + ETA


def normalise(e, re, tot, rtot):
    """p = e / tot with r_tot covering the sum's rounding and the quotient rule."""
    s = e.shape[0]
    rtot = (rtot + (s + 1) * U * tot) * (1 + (s + 4) * U)
    gap = (tot - rtot) * (1 - U)
    p = e / tot
    with np.errstate(all="ignore"):
        r = ((re + p * (1 + U) * rtot) / gap + U * p) * (1 + 4 * U)
    return p, np.where(gap > 0, r, np.inf)


def scaled_softmax(a, ra, cm):
    """softmax_j(cm a_j) shifted by the float64 maximum; ra: radii of the scaled scores."""
    sc = a * cm
    mx = np.max(np.where(np.isnan(sc), -np.inf, sc), axis=0)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    dv = sc - mx
    ev = exp(dv)
    rd = (ra + U * np.abs(dv)) * (1 + 2 * U)
    re = exp_radius(ev * (1 + EXP_ULPS * U) + TINY, rd)
    tot = np.zeros(a.shape[1])
    for j in range(a.shape[0]):
        tot = tot + ev[j]
    return normalise(ev, re, tot, re.sum(0))


def score_radius(t, rt, cm, cr):
    """A radius of fl(t cm) when t has radius rt and cm radius cr."""
    return (np.abs(t) * cr + rt * (cm + cr) + U * np.abs(t * cm)) * (1 + 4 * U) + ETA


def attention_at(qkv, rqkv, i, n_heads, cm, cr):
    """Head outputs at query i from the queries, keys, values of every position."""
    s, d3, nb = qkv.shape
    d = d3 // 3
    dh = d // n_heads
    att, ratt = np.empty((d, nb)), np.empty((d, nb))
    for hd in range(n_heads):
        c0 = hd * dh
        a = np.zeros((s, nb))
        for e in range(dh):
            a = a + qkv[i, c0 + e] * qkv[:, d + c0 + e]
        q, rq = qkv[i, c0 : c0 + dh, None], rqkv[i, c0 : c0 + dh, None]  # (dh, 1, nb)
        k = qkv[:, d + c0 : d + c0 + dh].transpose(1, 0, 2)  # (dh, s, nb)
        rk = rqkv[:, d + c0 : d + c0 + dh].transpose(1, 0, 2)
        racc = (np.abs(q) * rk + rq * (np.abs(k) + rk)).sum(0)
        racc = (racc + (dh + 2) * U * np.abs(q * k).sum(0)) * (1 + (dh + 4) * U) + ETA
        p, rp = scaled_softmax(a, score_radius(a, racc, cm, cr), cm)
        v = qkv[:, 2 * d + c0 : 2 * d + c0 + dh]  # (s, dh, nb)
        rv = rqkv[:, 2 * d + c0 : 2 * d + c0 + dh]
        acc = np.zeros((dh, nb))
        for j in range(s):
            acc = acc + p[j] * v[j]
        att[c0 : c0 + dh] = acc
        r = (p[:, None] * rv + rp[:, None] * (np.abs(v) + rv)).sum(0)
        r = r + (s + 2) * U * (p[:, None] * np.abs(v)).sum(0)
        ratt[c0 : c0 + dh] = r * (1 + (2 * s + 6) * U) + ETA
    return att, ratt


def readout_attention(x, rx, wint, binv, n_heads, cm, cr):
    """Head outputs at the last position from the attention inputs x (s, d, nb): scores
    (W_k,h^T q_h) . x_j + q_h . b_k,h and W_v,h (sum_j p_j x_j) + b_v,h."""
    s, d, nb = x.shape
    dh = d // n_heads
    q, rq = matvec(x[s - 1], rx[s - 1], wint, binv, 0, d)
    att, ratt = np.empty((d, nb)), np.empty((d, nb))
    g = (dh + 2) * U
    for hd in range(n_heads):
        c0 = hd * dh
        beta = np.zeros(nb)
        u = np.zeros((d, nb))
        for e in range(dh):
            beta = beta + binv[d + c0 + e] * q[c0 + e]
            u = u + wint[:, d + c0 + e, None] * q[c0 + e]
        sq = rq[c0 : c0 + dh] + g * np.abs(q[c0 : c0 + dh])
        inflate = 1 + (2 * dh + 5) * U
        rbeta = np.abs(binv[d + c0 : d + c0 + dh]) @ sq * inflate + ETA
        ru = np.abs(wint[:, d + c0 : d + c0 + dh]) @ sq * inflate + ETA
        a = np.empty((s, nb))
        ra = np.empty((s, nb))
        for j in range(s):
            t = beta.copy()
            for k in range(d):
                t = t + u[k] * x[j, k]
            a[j] = t
            r = rbeta + (np.abs(u) * rx[j] + ru * (np.abs(x[j]) + rx[j])).sum(0)
            mag = np.abs(beta) + np.abs(u * x[j]).sum(0)
            rt = (r + (d + 3) * U * mag) * (1 + (2 * d + 6) * U) + ETA
            ra[j] = score_radius(t, rt, cm, cr)
        p, rp = scaled_softmax(a, ra, cm)
        xb = np.zeros((d, nb))
        for j in range(s):
            xb = xb + p[j] * x[j]
        xr = (p[:, None] * rx + rp[:, None] * (np.abs(x) + rx)).sum(0)
        xr = (xr + (s + 2) * U * (p[:, None] * np.abs(x)).sum(0)) * (1 + (2 * s + 6) * U) + ETA
        att[c0 : c0 + dh], ratt[c0 : c0 + dh] = matvec(
            xb, xr, wint, binv, 2 * d + c0, 2 * d + c0 + dh
        )
    return att, ratt


def layer0_attention(tok, i, n_heads, l0, out_bias):
    """Layer 0's attention output after out_proj from the (token, position) tables."""
    s, nb = tok.shape
    d = out_bias.shape[0]
    cols = np.arange(nb)
    am = np.repeat(out_bias[:, None], nb, axis=1)
    ar = np.zeros((d, nb))
    amag = np.repeat(np.abs(out_bias)[:, None], nb, axis=1)
    for hd in range(n_heads):
        e = np.stack([l0.exp_scores_mid[tok[i], i, tok[j], j, hd] for j in range(s)])
        re = np.stack([l0.exp_scores_rad[tok[i], i, tok[j], j, hd] for j in range(s)])
        tot = np.zeros(nb)
        for j in range(s):
            tot = tot + e[j]
        p, rp = normalise(e, re, tot, re.sum(0))
        for j in range(s):
            v = l0.values_out_mid[tok[j], j, hd].T  # (d, nb)
            rv = l0.values_out_rad[tok[j], j, hd].T
            am = am + p[j] * v
            ar = ar + p[j] * rv + rp[j] * (np.abs(v) + rv)
            amag = amag + p[j] * np.abs(v)
    del cols
    g = (s * n_heads + 2) * U
    return am, (ar + g * amag) * (1 + (2 * s * n_heads + 5) * U) + ETA


def mlp(layer, lw, x, rx):
    """W_2 relu(W_1 x + b_1) + b_2 (the pre-activation goes to TRACE when it is a list)."""
    h, rh = matvec(x, rx, lw.lin1_t[layer], lw.lin1_bias[layer], 0, lw.lin1_t.shape[2])
    if TRACE is not None:
        TRACE.append((layer, h, rh))
    h, rh = relu(h, rh)
    return matvec(h, rh, lw.lin2_t[layer], lw.lin2_bias[layer], 0, x.shape[0])


def finish_position(layer, sc, lw, ln, y, ry, a, ra):
    """The residual additions, layer norms and MLP at one position (post-LN or pre-LN)."""
    k1 = 2 * layer
    eps = form_eps(sc.eps, sc.ln_annotated)
    if sc.norm_first:
        y, ry = add(y, ry, a, ra)
        x, rx = layer_norm(y, ry, ln.gains[k1 + 1], ln.biases[k1 + 1], eps)
        return add(y, ry, *mlp(layer, lw, x, rx))
    a, ra = add(a, ra, y, ry)
    y, ry = layer_norm(a, ra, ln.gains[k1], ln.biases[k1], eps)
    t, rt = add(*mlp(layer, lw, y, ry), y, ry)
    return layer_norm(t, rt, ln.gains[k1 + 1], ln.biases[k1 + 1], eps)


def readout(w, omega, y, ry):
    """T = omega + w . y; r = (|w| . r_y + (d + 2) U (|omega| + sum |w_e y_e|))(1 + (d + 5)U)
    + ETA."""
    d = w.shape[0]
    t = np.full(y.shape[1], omega)
    for e in range(d):
        t = t + w[e] * y[e]
    mag = abs(omega) + np.abs(w[:, None] * y).sum(0)
    return t, (np.abs(w) @ ry + (d + 2) * U * mag) * (1 + (d + 5) * U) + ETA


def certified_T(tables, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, radius) of each row of ``bits`` by the per-string kernel's rules
    (``tables``: ``verify.model.per_string.per_string_pass.prepare``)."""
    sc, l0, lw, ln, ro = tables.scalars, tables.layer0, tables.layers, tables.norms, tables.readout
    nb, n = bits.shape
    s = n + 1 if sc.eos else n
    n_layers = lw.in_t.shape[0]
    tok = np.full((s, nb), 2, dtype=np.int64)
    tok[:n] = bits.T
    cols = np.arange(nb)
    ym = [None] * s
    yr = [None] * s
    for i in range(0 if n_layers > 1 else s - 1, s):
        a, ra = layer0_attention(tok, i, sc.n_heads, l0, lw.out_bias[0])
        y0, ry0 = l0.y0_mid[tok[i], i].T.copy(), l0.y0_rad[tok[i], i].T.copy()
        ym[i], yr[i] = finish_position(0, sc, lw, ln, y0, ry0, a, ra)
    del cols
    cm, cr = sc.inv_sqrt_dh, sc.inv_sqrt_dh_rad
    for layer in range(1, n_layers):
        wint, binv = lw.in_t[layer], lw.in_bias[layer]
        wot, bov = lw.out_t[layer], lw.out_bias[layer]
        k1 = 2 * layer
        x = np.stack(ym)
        rx = np.stack(yr)
        if sc.norm_first:
            eps = form_eps(sc.eps, sc.ln_annotated)
            pairs = [layer_norm(x[j], rx[j], ln.gains[k1], ln.biases[k1], eps) for j in range(s)]
            x, rx = np.stack([m for m, _ in pairs]), np.stack([r for _, r in pairs])
        if layer == n_layers - 1:
            att, ratt = readout_attention(x, rx, wint, binv, sc.n_heads, cm, cr)
            a, ra = matvec(att, ratt, wot, bov, 0, x.shape[1])
            ym[s - 1], yr[s - 1] = finish_position(layer, sc, lw, ln, ym[s - 1], yr[s - 1], a, ra)
            continue
        d = x.shape[1]
        pairs = [matvec(x[j], rx[j], wint, binv, 0, 3 * d) for j in range(s)]
        qkv, rqkv = np.stack([m for m, _ in pairs]), np.stack([r for _, r in pairs])
        for i in range(s):
            att, ratt = attention_at(qkv, rqkv, i, sc.n_heads, cm, cr)
            a, ra = matvec(att, ratt, wot, bov, 0, d)
            ym[i], yr[i] = finish_position(layer, sc, lw, ln, ym[i], yr[i], a, ra)
    y, ry = ym[s - 1], yr[s - 1]
    if sc.final_norm:
        k = ln.gains.shape[0] - 1
        y, ry = layer_norm(y, ry, ln.gains[k], ln.biases[k], form_eps(sc.eps, sc.ln_annotated))
    return readout(ro.weight, sc.omega, y, ry)
