"""An independent numpy implementation of the exhaustive kernel's layer-0 table rules and of its
one-layer (L = 1) radius (``verify.model.exhaustive.exhaustive_pass`` and
``exhaustive.exhaustive_kernel.exhaustive_T``), written from the rules' documented formulas, for
tests that compare the kernel's radius with it.

Layer 0 at query position i (token t_i), head h, is A_h = num / den with num = sum_j e_ij V_j,
den = sum_j e_ij, G_h = sum_j e_ij M V_j (M = W_1 diag(gain) P, the MLP behind the norm). The
rules implemented here, per (t_i, i, h), sums over the positions j, maxima over the key tokens a
position admits (only those: the kernel's maximum over all three tokens is never smaller):

- E_num = S_3(S_s(R_num) + (s + 2) U S_s(M_num)), R_num = sum_j max_t (r(e)|V|max + (e +
  r(e)) r(V)max), M_num = sum_j max_t e |V|max; S_n(x) = x (1 + 2 (n + 2) U) + ETA (a sum of n
  non-negative terms rounded up); E_den, E_G likewise (s + 1 for den); A_max = S_2(max_{j,t,h}
  |V|max + r(V)max) (one bound for all heads, and over all three tokens at every position, as
  the kernel takes it: |A_h| <= max_j |V_j| needs only the valid ones), G_max likewise;
- at a query position i < min(n, 6) the kernel's tables hold one bound row for both query
  tokens (the bit varies within a block of 2^min(n, 6) strings): the maximum of the two;
- per string: low = (den - E_den)(1 - U), A_1 = (A_max (den + E_den) + E_num) / den (1 + 3U),
  the quotient's radius ((E_num + A_1 E_den) / low + 3 U A_1)(1 + 4U) (inf if low <= 0);
  r_A = (sum_h rA_h + (H + 2) U (max|b_o| + sum_h A_1,h))(1 + (2H + 5)U) + ETA;
- the MLP's hidden pre-activation u = z (g0 + sum_h G_h / den_h) + c0: r_b = (r(g0) + sum_h
  rG_h + (H + 2) U (g0max + sum_h G_1,h))(1 + (2H + 5)U) + ETA, b_max = (g0max + sum_h
  G_1,h)(1 + (H + 3)U), r_u = (r_z (b_max + r_b) + z r_b + r(c0) + 2U (z b_max + c0max))(1 +
  4U) + ETA; g0max = S_2(max|g0| + max r(g0)), c0max likewise;
- the scalar (infinity-norm) rules after it: matvec (||W||_inf (r_x + g max|x|) + g max|b|)(1
  + (2n + 5)U) + ETA, g = (n + 2)U; residual (r_y + r_a + U max|y + a|)(1 + 2U); the scalar
  layer norm (``stages.layer_norm.layer_norm_scalar``); the readout (|w|_1 r + (d + 2) U
  (|w|_1 max|y| + |omega|))(1 + (d + 5)U) + ETA.

The tables' entries (e, V with their radii: ``fast.prepare``, checked by the per-string tests)
are inputs; M V, M (y0 + b_o) and W_1 bias + b_1 with their radii come from the generic numpy
MidRad arithmetic (``verify.model.arithmetic.contexts``, not the kernel's rules). Midpoints are
recomputed in numpy (other summation orders than the kernel's: radii differ by ~1e-15 relative; the
layer norm's moments are sequential sums like the kernel's, so near-cancelling variances agree).
Constants are pinned here, not imported.
"""

from __future__ import annotations

import _per_string_reference as psr
import numpy as np

from verify.model.arithmetic.contexts import MidRad, MidRadContext
from verify.model.per_string.per_string_pass import norm_affine, prepare
from verify.model.spec.params import Params

U = 2.0**-52
ETA = 1e-300
REL = 1e-10  # midpoints in other orders: radii differ by ~1e-15, every tested term is >> this
DROP: frozenset[str] = frozenset()  # terms left out (tests measure what each term weighs)


def _k(term: str) -> float:
    return 0.0 if term in DROP else 1.0


def sum_up(x, n: int):
    """S_n(x): a sum of n non-negative float64 terms rounded up."""
    return np.asarray(x, dtype=np.float64) * (1.0 + 2 * (n + 2) * U) + ETA


def _valid(n: int, s: int, eos: bool) -> np.ndarray:
    v = np.zeros((3, s), dtype=bool)
    v[:2, :n] = True
    if eos:
        v[2, s - 1] = True
    return v


def _mlp_balls(params: Params, t0) -> tuple[MidRad, MidRad, MidRad]:
    """M V (t, j, h, f), M (y0 + b_o) (t, i, f) and W_1 bias + b_1 as generic MidRad balls."""
    cfg = params.config
    d = cfg.d_model
    ctx = MidRadContext()
    norm = "layers.0.norm2" if cfg.norm_first else "layers.0.norm1"
    gain = ctx.param(params[norm + ".weight"] if cfg.ln_affine else np.ones(d))
    bias = ctx.param(params[norm + ".bias"] if cfg.ln_affine else np.zeros(d))
    w1t = ctx.param(np.ascontiguousarray(params["layers.0.linear1.weight"].T))

    def m(x: MidRad) -> MidRad:
        return ctx.matmul((x - (x.sum(axis=-1) / d)[..., None]) * gain, w1t)

    with np.errstate(all="ignore"):
        mv = m(MidRad(t0.values_out_mid, t0.values_out_rad))
        y0b = MidRad(t0.y0_mid, t0.y0_rad) + ctx.param(params["layers.0.self_attn.out_proj.bias"])
        c0 = ctx.matmul(bias[None, :], w1t)[0] + ctx.param(params["layers.0.linear1.bias"])
        return mv, m(y0b), c0


def layer0_bounds(params: Params, n: int) -> dict[str, np.ndarray]:
    """E_num, E_den, A_max, E_G, G_max per (t_i, i, h) (module doc); g0max, g0rad per (t, i);
    c0max, c0rad; and the midpoints of the tables (e, V, M V, g0, c0) the per-string pass uses."""
    cfg = params.config
    s = cfg.seq_len(n)
    t0 = prepare(params, n).layer0
    valid = _valid(n, s, cfg.eos)
    mv, g0, c0 = _mlp_balls(params, t0)
    e_m, e_r = t0.exp_scores_mid, t0.exp_scores_rad  # (t_i, i, t_j, j, h)
    out = {k: np.zeros((3, s, cfg.n_heads)) for k in ("e_num", "e_den", "a_max", "e_g", "g_max")}
    for name_e, name_m, vm_all, vr_all in (
        ("e_num", "a_max", t0.values_out_mid, t0.values_out_rad),
        ("e_g", "g_max", mv.mid, mv.rad),
    ):
        vmax = np.abs(vm_all).max(axis=3)  # (t, j, h)
        vrad = vr_all.max(axis=3)
        out[name_m][:] = sum_up((vmax + vrad).max(), 2)  # one bound: all tokens and heads
        for ti in range(3):
            for i in range(s):
                r_sum = np.zeros(cfg.n_heads)
                m_sum = np.zeros(cfg.n_heads)
                for j in range(s):
                    ts = [t for t in range(3) if valid[t, j]]
                    em, er = e_m[ti, i][ts, j], e_r[ti, i][ts, j]  # (tokens, h)
                    r_sum += _k(name_e + "_R") * (er * vmax[ts, j] + (em + er) * vrad[ts, j]).max(
                        axis=0
                    )
                    m_sum += (em * vmax[ts, j]).max(axis=0)
                m_sum = _k(name_e + "_M") * sum_up(m_sum, s)
                out[name_e][ti, i] = sum_up(sum_up(r_sum, s) + (s + 2) * U * m_sum, 3)
    for ti in range(3):
        for i in range(s):
            r_den = np.zeros(cfg.n_heads)
            m_den = np.zeros(cfg.n_heads)
            for j in range(s):
                ts = [t for t in range(3) if valid[t, j]]
                r_den += _k("e_den_R") * e_r[ti, i][ts, j].max(axis=0)
                m_den += e_m[ti, i][ts, j].max(axis=0)
            m_den = _k("e_den_M") * sum_up(m_den, s)
            out["e_den"][ti, i] = sum_up(sum_up(r_den, s) + (s + 1) * U * m_den, 3)
    for k in ("e_num", "e_den", "a_max", "e_g", "g_max"):
        out[k] = np.concatenate([out[k], out[k][:2].max(axis=0)[None]])  # index 3: t_i in {0, 1}
    out["g0max"] = sum_up(np.abs(g0.mid).max(axis=2) + g0.rad.max(axis=2), 2)
    out["g0rad"] = g0.rad.max(axis=2)
    out["c0max"] = float(sum_up(np.abs(c0.mid).max() + c0.rad.max(), 2))
    out["c0rad"] = float(c0.rad.max())
    out["tables"] = (t0, valid, mv.mid, g0.mid, c0.mid)
    return out


def ln_scalar(v, rv, gain, bias, eps):
    """The scalar layer-norm rule on one string (v: (d,)): (out, r, z, r_z). r_mean = (r_v + (d
    + 1) U sum|v| / d + 2U |mean|)(1 + (d + 4)U), r_c = (r_v + r_mean + U max|c|)(1 + 3U), acc =
    2 r_c sum|c| + d r_c^2, r_z (``rsqrt_radius``), r = max|c| r_z + r_c (z + r_z) + U max|c| z,
    o = max|c| z gmax, out radius (r gmax + U o + U (o + bmax))(1 + 8U) + ETA."""
    d = v.shape[0]
    mean = 0.0
    for x in v:
        mean += x
    mean /= d
    c = v - mean
    ss = 0.0
    for x in c:
        ss += x * x
    var = ss / d
    z = psr.coefficient(ss, var, eps, d)  # the form of eps (``psr.form_eps``)
    cmax = np.abs(c).max()
    gmax, bmax = np.abs(gain).max(), np.abs(bias).max()
    rmean = (rv + (d + 1) * U * np.abs(v).sum() / d + 2 * U * abs(mean)) * (1 + (d + 4) * U)
    rc = (rv + rmean + U * cmax) * (1 + 3 * U)
    acc = 2 * rc * np.abs(c).sum() + d * rc * rc
    rz = float(psr.coefficient_radius(ss, np.array([var]), eps, np.array([acc]), d, z)[0])
    r = cmax * rz + rc * (z + rz) + U * cmax * z
    o = cmax * z * gmax
    return c * z * gain + bias, (r * gmax + U * o + U * (o + bmax)) * (1 + 8 * U) + ETA, z, rz


def add_scalar(y, ry, a, ra):
    out = y + a
    return out, (ry + ra + U * np.abs(out).max()) * (1 + 2 * U)


def matvec_scalar_radius(w, b, x, rx):
    """(||W||_inf (r_x + g max|x|) + g max|b|)(1 + (2n + 5)U) + ETA, ||W||_inf rounded up."""
    n = w.shape[1]
    g = (n + 2) * U
    wn = sum_up(np.abs(w).sum(axis=1).max(), n)
    return (wn * (rx + g * np.abs(x).max()) + g * np.abs(b).max()) * (1 + (2 * n + 5) * U) + ETA


def quotient_radius(e, e_den, a1, low):
    if low <= 0:
        return np.inf
    return ((e + _k("quot_den") * a1 * e_den) / low + _k("quot_round") * 3 * U * a1) * (1 + 4 * U)


def layer0_position(params: Params, bd: dict, toks: list[int], i: int, n: int) -> dict:
    """Layer 0 at query position i of one string (tokens toks) by the rules of the module doc:
    the attention output's radius r_A, the residual stream h that feeds the MLP (post-LN: LN1(y
    + A); pre-LN: y + A) with its scalar radius, z and r_z of the MLP's norm, the hidden
    pre-activation's radius r_u and the hidden layer relu(u) (midpoints)."""
    cfg = params.config
    t0, valid, mv_mid, g0_mid, c0_mid = bd["tables"]
    s, nh = cfg.seq_len(n), cfg.n_heads
    gains, biases = norm_affine(params)
    eps = psr.form_eps(cfg.ln_eps, cfg.ln_form == "annotated")
    out_b = params["layers.0.self_attn.out_proj.bias"]
    tq = toks[i]
    slot = 3 if i < min(n, 6) else tq  # the query bit varies within a block of strings
    am = out_b.astype(np.float64).copy()
    gsum = g0_mid[tq, i].copy()
    ra = rg = a1s = g1s = 0.0
    for h in range(nh):
        e = np.array([t0.exp_scores_mid[tq, i, toks[j], j, h] for j in range(s)])
        den = e.sum()
        num = sum(e[j] * t0.values_out_mid[toks[j], j, h] for j in range(s))
        gnum = sum(e[j] * mv_mid[toks[j], j, h] for j in range(s))
        am = am + num / den
        gsum = gsum + gnum / den
        e_num, e_den, a_max, e_g, g_max = (
            bd[k][slot, i, h] for k in ("e_num", "e_den", "a_max", "e_g", "g_max")
        )
        low = (den - _k("low_e_den") * e_den) * (1 - U)
        a1 = (a_max * (den + e_den) + _k("a1_e") * e_num) / den * (1 + 3 * U)
        g1 = (g_max * (den + e_den) + _k("a1_e") * e_g) / den * (1 + 3 * U)
        ra += quotient_radius(e_num, e_den, a1, low)
        rg += quotient_radius(e_g, e_den, g1, low)
        a1s += a1
        g1s += g1
    ar = (ra + _k("attn_round") * (nh + 2) * U * (np.abs(out_b).max() + a1s)) * (
        1 + (2 * nh + 5) * U
    ) + ETA
    y, yr = t0.y0_mid[tq, i], t0.y0_rad[tq, i].max()
    if cfg.norm_first:  # h = y + A; LN2 of h feeds the MLP
        hm, hr = add_scalar(y, yr, am, ar)
        _, _, z, rz = ln_scalar(hm, hr, gains[1], biases[1], eps)
    else:  # h = LN1(y + A)
        dm, dr = add_scalar(am, ar, y, yr)
        hm, hr, z, rz = ln_scalar(dm, dr, gains[0], biases[0], eps)
    g0max, g0rad = bd["g0max"][tq, i], bd["g0rad"][tq, i]
    r_b = (_k("g0rad") * g0rad + _k("rg") * rg + _k("b_round") * (nh + 2) * U * (g0max + g1s)) * (
        1 + (2 * nh + 5) * U
    ) + ETA
    bmax = (g0max + g1s) * (1 + (nh + 3) * U)
    ru = (
        _k("u_rz") * rz * (bmax + r_b) + _k("u_z_rb") * z * r_b + _k("c0rad") * bd["c0rad"]
        + _k("u_round") * 2 * U * (z * bmax + bd["c0max"])
    ) * (1 + 4 * U) + ETA  # fmt: skip
    hid = np.maximum(z * gsum + c0_mid, 0.0)
    return {"a_rad": ar, "h": hm, "h_rad": hr, "z": z, "u_rad": ru, "hidden": hid}


def certified_T_L1(params: Params, n: int, bd: dict | None = None) -> tuple[np.ndarray, ...]:
    """(T, radius, r_A, r_u) of all 2^n strings of a one-layer model by the rules of the module
    doc (index sum_k x_k 2^(k-1), as ``exhaustive_T``)."""
    cfg = params.config
    assert cfg.n_layers == 1
    bd = layer0_bounds(params, n) if bd is None else bd
    s, d = cfg.seq_len(n), cfg.d_model
    i = s - 1  # layer 0 at the readout position only
    gains, biases = norm_affine(params)
    eps = psr.form_eps(cfg.ln_eps, cfg.ln_form == "annotated")
    w2, b2 = params["layers.0.linear2.weight"], params["layers.0.linear2.bias"]
    w = params["readout.weight"].reshape(-1)
    omega = float(params["readout.bias"].reshape(-1)[0])
    wsum = float(sum_up(np.abs(w).sum(), d))
    res = np.zeros((4, 1 << n))
    for idx in range(1 << n):
        toks = [(idx >> j) & 1 for j in range(n)] + ([2] if cfg.eos else [])
        p0 = layer0_position(params, bd, toks, i, n)
        hm, hr, hid, ar, ru = p0["h"], p0["h_rad"], p0["hidden"], p0["a_rad"], p0["u_rad"]
        x2 = w2 @ hid + b2
        rx2 = matvec_scalar_radius(w2, b2, hid, ru)
        ym, yr2 = add_scalar(hm, hr, x2, rx2) if cfg.norm_first else add_scalar(x2, rx2, hm, hr)
        if not cfg.norm_first:
            ym, yr2, _, _ = ln_scalar(ym, yr2, gains[1], biases[1], eps)
        if cfg.final_norm:
            ym, yr2, _, _ = ln_scalar(ym, yr2, gains[-1], biases[-1], eps)
        t = omega + float(w @ ym)
        rt = (wsum * yr2 + (d + 2) * U * (wsum * np.abs(ym).max() + abs(omega))) * (
            1 + (d + 5) * U
        ) + ETA
        res[:, idx] = (t, rt, ar, ru)
    return tuple(res)
