"""An independent numpy implementation of the 2-norm radius rules (issue 41): the double-double
tier (``double_double.dd_kernel``, ``double_double.dd_l2``) and the exhaustive kernel's layers
1..L-1 with its layer-0 to 2-norm transition (``exhaustive.exhaustive_kernel``, ``stages.position``,
``stages.stage_l2``, ``stages.attention.attention_row_l2``), written from the rules' documented
formulas (the docstrings of those functions), for tests that assert ``kernel >= reference (1 -
REL)`` on constructions where each term weighs.

- The matrices' 2-norms: the rigorous upper bounds the kernels are given
  (``matrix_norms.spectral_norm_upper``, inputs of the rules, checked here >= numpy's SVD
  value), computed here from the matrix each rule must use (not taken from the kernel's
  tables); |x|_2 of vectors from numpy.
- The layer norm's Lipschitz constant on the ball |v' - v|_2 <= rho: max|gain| / sqrt(t^2 / d +
  eps), t = max(|P v|_2 - rho, 0) (P: centring), from numpy's |P v|_2.
- Double-double tier (``dd_radius``): the propagated terms only (every rounding term of that
  tier is ~1e-31 relative: constructions give the embeddings a radius far above it), with
  float64 midpoints from a float64 forward pass written here (the DD midpoints differ by ~1e-16
  relative, far below REL). ``dd_attention`` is ``attention_l2``'s whole rule, rounding
  included, for its stage tests.
- Exhaustive kernel (``exhaustive_radius``): layer 0 at every position from
  ``tests/_exhaustive_reference.py`` (its scalar radii: the residual stream's and the hidden
  pre-activation's r_u), then the transition rho = |W_2|_2 sqrt(f) r_u + sqrt(d) r0(W_2) +
  sqrt(d) r_h, and every stage after it: a stage costs Lip rho + sqrt(n) r0, r0 the scalar
  rule's rounding at zero input radius (``_exhaustive_reference``'s scalar rules).

Constants are pinned here, not imported: a mutated kernel module does not move the reference.
"""

from __future__ import annotations

import math

import _exhaustive_reference as xref
import _per_string_reference as psr
import numpy as np

from verify.model.arithmetic.matrix_norms import spectral_norm_upper
from verify.model.per_string.per_string_pass import kernel_scalars, norm_affine
from verify.model.spec.params import Params

U = 2.0**-52
UU = 2.0**-104
ETA = 1e-300
EXP_DD = 2.0**-80
REL = 1e-9  # other summation orders and float64 midpoints: far below every term tested


def matvec_radius_dd(rho: float, a: np.ndarray, w: np.ndarray, b: np.ndarray) -> float:
    """``dd_l2.matvec_radius``: |W|_2 rho + (n + 2)^2 UU (|b|_2 + |W|_F |a|_2), n = W's
    columns, a = |x_high| + |x_low| (numpy's norms)."""
    n = w.shape[1]
    return spec(w) * rho + (n + 2) ** 2 * UU * (norm(b) + norm(w) * norm(a))


def spec(w: np.ndarray) -> float:
    """The rigorous upper bound of |W|_2 the kernels are given (``spectral_norm_upper``, an
    input of the rules, tested against exact norms in ``tests/test_model_double_double.py`` and
    ``tests/test_radius_dd_glue.py``), here checked >= numpy's SVD value: with the same bound on
    both sides every other term of a rule weighs above REL (with SVD values the bound's
    n^(1/64) slack, ~1e-3, hid terms below it)."""
    w = np.atleast_2d(np.asarray(w, dtype=np.float64))
    if not w.size:
        return 0.0
    bound = spectral_norm_upper(w)
    assert bound >= float(np.linalg.norm(w, 2)) * (1 - 1e-12), (bound, w)
    return bound


def norm(x: np.ndarray) -> float:
    return float(np.linalg.norm(x))


def lipschitz(v: np.ndarray, rho: float, eps: float, gmax: float) -> float:
    """max|gain| / sqrt(t^2 / d + eps), t = max(|P v| - rho, 0); the annotated form (eps a
    ``psr.AnnotatedEps``): max|gain| / (t / sqrt(d - 1) + eps) (docs/model.md: the Jacobian of
    x / (|x| / sqrt(d - 1) + eps) has norm 1 / (|x| / sqrt(d - 1) + eps)); inf where 1/0."""
    d = v.shape[0]
    t = max(norm(v - v.mean()) - rho, 0.0)
    if isinstance(eps, psr.AnnotatedEps):
        den = t / math.sqrt(d - 1) + eps
        return gmax / den if den > 0 else math.inf
    den = t * t / d + eps
    return gmax / math.sqrt(den) if den > 0 else math.inf


def layer_norm(v: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    c = v - v.mean()
    if isinstance(eps, psr.AnnotatedEps):
        return c / (math.sqrt(float(np.sum(c * c)) / (c.shape[0] - 1)) + eps) * gain + bias
    return c / math.sqrt(float(np.mean(c * c)) + eps) * gain + bias


def embeddings(params: Params, toks: list[int]) -> np.ndarray:
    """y0 of each position (learned or no positions; add or concat)."""
    cfg = params.config
    s = len(toks)
    tok = params["token_embedding"][toks]
    if cfg.pos_encoding == "learned":
        pos = params["pos_embedding"][:s]
    elif cfg.pos_encoding == "none":
        pos = np.zeros((s, cfg.d_embed))
    else:  # pragma: no cover - constructions use learned positions
        raise ValueError("reference: learned or no positions only")
    return tok + pos if cfg.embedding == "add" else np.concatenate([tok, pos], axis=1)


def tokens(cfg, bits: np.ndarray) -> list[int]:
    return [int(b) for b in bits] + ([2] if cfg.eos else [])


def _blocks(params: Params, layer: int) -> dict[str, list]:
    cfg = params.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    pre = f"layers.{layer}."
    w_in, b_in = params[pre + "self_attn.in_proj_weight"], params[pre + "self_attn.in_proj_bias"]
    out = {}
    for k, name in enumerate(("q", "k", "v")):
        rows = [slice(k * d + hd * dh, k * d + (hd + 1) * dh) for hd in range(h)]
        out[name] = [(w_in[r], b_in[r]) for r in rows]
    for name, key in (("o", "self_attn.out_proj"), ("w1", "linear1"), ("w2", "linear2")):
        out[name] = [(params[pre + key + ".weight"], params[pre + key + ".bias"])]
    return out


# ---------------------------------------------------------------- double-double tier


def dd_softmax(a: np.ndarray, sig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, pr, p0) of ``softmax_l2`` for scores a with radii sig, propagated terms and the
    rounding terms at the DD level: e_j = exp(a_j - max), r_j = e_j (expm1(sig_j + DD_ADD |d_j|)
    + EXP_DD), rtot = sum r + (s + 2)^2 UU tot, gap = tot - rtot, pr_j = (r_j + p_j rtot) / gap
    + the quotient's rounding; p0 the same at sig = 0."""
    s = a.shape[0]
    dd_add = 2 * UU  # a lower bound of the kernel's DD_ADD (it is >= 2^-104)
    e = np.exp(a - a.max())
    tot = e.sum()
    p = e / tot
    out = []
    for sg in (sig, np.zeros_like(sig)):
        r = e * (np.expm1(sg + dd_add * np.abs(a - a.max())) + EXP_DD)
        rtot = r.sum() + (s + 2) ** 2 * UU * tot
        gap = tot - rtot
        out.append(np.where(gap > 0, (r + p * rtot) / gap, np.inf))
    return p, out[0], out[1]


def dd_attention(qkv: np.ndarray, rq: np.ndarray, i: int, n_heads: int, cm: float) -> float:
    """``attention_l2``'s radius at query i from queries/keys/values qkv (s, 3d) with 2-norm radii
    rq (s, 3 n_heads): per head, score radii sig_j = cm (|q| r_k + r_q |k| + r_q r_k + (d_h +
    3)^2 UU sum |q| |k|); the head output's componentwise bound comp_e = sum_j w_j |v_je - a_e|
    + sum_j p0_j |v_je| + wsum A_e + (s + 3)^2 UU sum p |v_e| (w_j = (p_j + pr_j) sig_j, A_e =
    sum_j pr_j |v_je| + rounding), the head's radius |comp|_2 + sum_j (p_j + pr_j) r_v,j, and
    the 2-norm over heads."""
    s = qkv.shape[0]
    d = qkv.shape[1] // 3
    dh = d // n_heads
    g_dot = (dh + 3) ** 2 * UU
    g_av = (s + 3) ** 2 * UU
    tot = 0.0
    for hd in range(n_heads):
        c0 = hd * dh
        q = qkv[i, c0 : c0 + dh]
        k = qkv[:, d + c0 : d + c0 + dh]
        v = qkv[:, 2 * d + c0 : 2 * d + c0 + dh]
        rqi, rk, rv = rq[i, hd], rq[:, n_heads + hd], rq[:, 2 * n_heads + hd]
        nq = norm(q)
        nk = np.linalg.norm(k, axis=1)
        mag = np.abs(k) @ np.abs(q)
        racc = g_dot * mag + nq * rk + rqi * nk + rqi * rk
        a = cm * (k @ q)
        sig = racc * cm
        p, pr, p0 = dd_softmax(a, sig)
        pw = p + pr
        w = pw * sig
        att = p @ v
        rnd = g_av * (p @ np.abs(v))
        big_a = rnd + pr @ np.abs(v)
        comp = w @ np.abs(v - att) + p0 @ np.abs(v) + w.sum() * big_a + rnd
        rh = norm(comp) + float(pw @ rv)
        tot += rh * rh
    return math.sqrt(tot)


def dd_radius(params: Params, bits: np.ndarray, y0_rad: np.ndarray) -> np.ndarray:
    """A lower bound of the double-double kernel's radius for each string (propagated terms:
    module doc). y0_rad (3, s, d): the embeddings' componentwise radii the kernel is given."""
    cfg = params.config
    gains, biases = norm_affine(params)
    gmax = np.abs(gains).max(axis=1)
    eps = psr.form_eps(cfg.ln_eps, cfg.ln_form == "annotated")
    cm = 1 / math.sqrt(cfg.d_head)
    h = cfg.n_heads
    w_r = params["readout.weight"].reshape(-1)
    out = np.empty(bits.shape[0])
    blocks = [_blocks(params, lay) for lay in range(cfg.n_layers)]
    for b, row in enumerate(bits):
        toks = tokens(cfg, row)
        s = len(toks)
        y = embeddings(params, toks).astype(np.float64)
        ry = np.array([norm(y0_rad[t, i]) for i, t in enumerate(toks)])
        for layer, bl in enumerate(blocks):
            k1 = 2 * layer
            last = layer == cfg.n_layers - 1
            if cfg.norm_first:
                x = np.stack([layer_norm(y[j], gains[k1], biases[k1], eps) for j in range(s)])
                rx = np.array([lipschitz(y[j], ry[j], eps, gmax[k1]) * ry[j] for j in range(s)])
            else:
                x, rx = y, ry
            qkv = np.concatenate(
                [np.concatenate([x @ w.T + bb for w, bb in bl[nm]], axis=1) for nm in "qkv"], axis=1
            )
            rq = np.stack([spec(w) * rx for nm in "qkv" for w, _ in bl[nm]], axis=1)
            ynew, rnew = y.copy(), ry.copy()
            (wo, bo), (w1, b1), (w2, b2) = bl["o"][0], bl["w1"][0], bl["w2"][0]
            s12 = spec(w1) * spec(w2)
            for i in range(s - 1 if last else 0, s):
                att = np.concatenate([_head(qkv, i, hd, h, cm) for hd in range(h)])
                a = wo @ att + bo
                ra = spec(wo) * dd_attention(qkv, rq, i, h, cm)
                if cfg.norm_first:
                    hh = y[i] + a
                    rh = ry[i] + ra
                    x2 = layer_norm(hh, gains[k1 + 1], biases[k1 + 1], eps)
                    rx2 = lipschitz(hh, rh, eps, gmax[k1 + 1]) * rh
                    ynew[i] = hh + w2 @ np.maximum(w1 @ x2 + b1, 0) + b2
                    rnew[i] = rh + s12 * rx2
                else:
                    d1 = y[i] + a
                    r1 = ry[i] + ra
                    hh = layer_norm(d1, gains[k1], biases[k1], eps)
                    rh = lipschitz(d1, r1, eps, gmax[k1]) * r1
                    d2 = hh + w2 @ np.maximum(w1 @ hh + b1, 0) + b2
                    r2 = rh + s12 * rh
                    ynew[i] = layer_norm(d2, gains[k1 + 1], biases[k1 + 1], eps)
                    rnew[i] = lipschitz(d2, r2, eps, gmax[k1 + 1]) * r2
            y, ry = ynew, rnew
        r = s - 1
        rr = ry[r]
        if cfg.final_norm:
            rr = lipschitz(y[r], rr, eps, gmax[-1]) * rr
        out[b] = norm(w_r) * rr
    return out


def _head(qkv: np.ndarray, i: int, hd: int, n_heads: int, cm: float) -> np.ndarray:
    d = qkv.shape[1] // 3
    dh = d // n_heads
    c0 = hd * dh
    a = cm * (qkv[:, d + c0 : d + c0 + dh] @ qkv[i, c0 : c0 + dh])
    p = np.exp(a - a.max())
    return (p / p.sum()) @ qkv[:, 2 * d + c0 : 2 * d + c0 + dh]


# ---------------------------------------------------------------- exhaustive kernel, L >= 2


def r0_matvec(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> float:
    """The scalar rule's rounding of W x + b at zero input radius."""
    return float(xref.matvec_scalar_radius(w, b, x, 0.0))


def matvec_l2(w: np.ndarray, b: np.ndarray, x: np.ndarray, rho: float) -> tuple[np.ndarray, float]:
    """``stage_l2.matvec_l2``: |W|_2 rho + sqrt(rows) r0."""
    return w @ x + b, spec(w) * rho + math.sqrt(w.shape[0]) * r0_matvec(w, b, x)


def layer_norm_l2(v, rho, gain, bias, eps) -> tuple[np.ndarray, float]:
    """``stage_l2.layer_norm_l2``: Lip rho + sqrt(d) r0 (r0: the scalar rule at zero radius)."""
    out, r0, _, _ = xref.ln_scalar(v, 0.0, gain, bias, eps)
    lip = lipschitz(v, rho, eps, float(np.abs(gain).max()))
    return out, lip * rho + math.sqrt(v.shape[0]) * r0


def add_l2(y, ry, a, ra) -> tuple[np.ndarray, float]:
    """A residual sum: ry + ra + sqrt(d) U max|y + a| (its rounding, componentwise)."""
    out = y + a
    return out, ry + ra + math.sqrt(out.shape[0]) * U * float(np.abs(out).max())


def attention_row_l2(params, layer, x, rho, i) -> tuple[np.ndarray, float]:
    """``attention_row_l2``'s rule (its docstring) at query i: per head the score radii
    sig_j = |a_j| cr + (rt0_j + rtd_j)(cm + cr) + U |a_j cm| (rt0: the scalar rounding of the
    score at zero input radius; rtd = |W_q|_2 rho_i |k'_j| + |W_k^T q|_2 rho_j), the softmax's
    radius over the score box (``_per_string_reference.scaled_softmax``) and at the midpoint
    (p0), e = sum_j (p_j + r_j) rho_j + p0_j |x_j| + g p_j |x_j| + sum_j (p_j + r_j) sig_j (|x_j
    - xbar| + A), the head's radius |W_v|_2 e + sqrt(d_h) r0(W_v xbar + b_v); the 2-norm over
    heads."""
    cfg = params.config
    sc = kernel_scalars(params)
    cm, cr = sc.inv_sqrt_dh, sc.inv_sqrt_dh_rad
    bl = _blocks(params, layer)
    s, d = x.shape
    dh = cfg.d_head
    xn = np.linalg.norm(x, axis=1)
    xm = np.abs(x).max(axis=1)
    att, tot = [], 0.0
    for hd in range(cfg.n_heads):
        (wq, bq), (wk, bk), (wv, bv) = bl["q"][hd], bl["k"][hd], bl["v"][hd]
        q = wq @ x[i] + bq
        rq = r0_matvec(wq, bq, x[i])
        u = wk.T @ q
        beta = float(bk @ q)
        base = rq + (dh + 2) * U * float(np.abs(q).max())
        ru = float(xref.sum_up(np.abs(wk.T).sum(axis=1).max(), dh)) * base
        rbeta = float(xref.sum_up(np.abs(bk).sum(), dh)) * base
        unorm = norm(u) + math.sqrt(d) * ru
        dq = spec(wq) * rho[i]
        a = x @ u + beta
        rt0 = ru * d * xm + rbeta + (d + 3) * U * (np.abs(u).sum() * xm + abs(beta))
        kj = spec(wk) * (xn + rho) + norm(bk)
        rtd = dq * kj + unorm * rho
        sig = np.abs(a) * cr + (rt0 + rtd) * (cm + cr) + U * np.abs(a * cm)
        p, pr = psr.scaled_softmax(a[:, None], sig[:, None], cm)
        _, p0 = psr.scaled_softmax(a[:, None], np.zeros((s, 1)), cm)
        p, pr, p0 = p[:, 0], pr[:, 0], p0[:, 0]
        xbar = p @ x
        gx = (s + 2) * U * p * xn
        e_sum = float((p + pr) @ rho + p0 @ xn + gx.sum())
        big_a = float(pr @ xn + gx.sum())
        dist = np.linalg.norm(x - xbar, axis=1)
        e_sum += float(((p + pr) * sig) @ (dist + big_a))
        att.append(wv @ xbar + bv)
        eh = spec(wv) * e_sum + math.sqrt(dh) * r0_matvec(wv, bv, xbar)
        tot += eh * eh
    return np.concatenate(att), math.sqrt(tot)


def finish_position_l2(params, layer, y, ry, att, ratt) -> tuple[np.ndarray, float]:
    """``position.finish_position_l2``: out_proj, the residual additions, the layer norms and the
    FFN by the stage rules above."""
    cfg = params.config
    gains, biases = norm_affine(params)
    eps = psr.form_eps(cfg.ln_eps, cfg.ln_form == "annotated")
    k1 = 2 * layer
    bl = _blocks(params, layer)
    (wo, bo), (w1, b1), (w2, b2) = bl["o"][0], bl["w1"][0], bl["w2"][0]
    a, ra = matvec_l2(wo, bo, att, ratt)

    def ffn(x, rx):
        hid, rh = matvec_l2(w1, b1, x, rx)
        return matvec_l2(w2, b2, np.maximum(hid, 0.0), rh)

    if cfg.norm_first:
        h, rh = add_l2(y, ry, a, ra)
        x2, rx2 = layer_norm_l2(h, rh, gains[k1 + 1], biases[k1 + 1], eps)
        f, rf = ffn(x2, rx2)
        return add_l2(h, rh, f, rf)
    d1, r1 = add_l2(a, ra, y, ry)
    h, rh = layer_norm_l2(d1, r1, gains[k1], biases[k1], eps)
    f, rf = ffn(h, rh)
    d2, r2 = add_l2(f, rf, h, rh)
    return layer_norm_l2(d2, r2, gains[k1 + 1], biases[k1 + 1], eps)


def exhaustive_radius(params: Params, n: int) -> np.ndarray:
    """A lower bound of the exhaustive kernel's radius (L >= 2) for all 2^n strings (index sum_k
    x_k 2^k, as ``exhaustive_T``)."""
    cfg = params.config
    assert cfg.n_layers >= 2
    bd = xref.layer0_bounds(params, n)
    gains, biases = norm_affine(params)
    eps = psr.form_eps(cfg.ln_eps, cfg.ln_form == "annotated")
    d, f = cfg.d_model, cfg.d_ff
    w2, b2 = params["layers.0.linear2.weight"], params["layers.0.linear2.bias"]
    w = params["readout.weight"].reshape(-1)
    omega = float(params["readout.bias"].reshape(-1)[0])
    out = np.empty(1 << n)
    for idx in range(1 << n):
        toks = [(idx >> j) & 1 for j in range(n)] + ([2] if cfg.eos else [])
        s = len(toks)
        y = np.empty((s, d))
        ry = np.empty(s)
        for i in range(s):
            p0 = xref.layer0_position(params, bd, toks, i, n)
            hm, hr, ru, hid = p0["h"], p0["h_rad"], p0["u_rad"], p0["hidden"]
            x2 = w2 @ hid + b2
            rho = spec(w2) * math.sqrt(f) * ru + math.sqrt(d) * r0_matvec(w2, b2, hid)
            rho += math.sqrt(d) * hr
            if cfg.norm_first:
                y[i], ry[i] = add_l2(hm, 0.0, x2, rho)
            else:
                dm, rd = add_l2(x2, rho, hm, 0.0)
                y[i], ry[i] = layer_norm_l2(dm, rd, gains[1], biases[1], eps)
        for layer in range(1, cfg.n_layers):
            k1 = 2 * layer
            last = layer == cfg.n_layers - 1
            if cfg.norm_first:
                pairs = [layer_norm_l2(y[j], ry[j], gains[k1], biases[k1], eps) for j in range(s)]
                x = np.stack([m for m, _ in pairs])
                rx = np.array([r for _, r in pairs])
            else:
                x, rx = y, ry
            ynew, rnew = y.copy(), ry.copy()
            for i in range(s - 1 if last else 0, s):
                att, ratt = attention_row_l2(params, layer, x, rx, i)
                ynew[i], rnew[i] = finish_position_l2(params, layer, y[i], ry[i], att, ratt)
            y, ry = ynew, rnew
        r = s - 1
        yr, rr = y[r], ry[r]
        if cfg.final_norm:
            yr, rr = layer_norm_l2(yr, rr, gains[-1], biases[-1], eps)
        wsum = float(np.abs(w).sum())
        out[idx] = norm(w) * rr + (d + 2) * U * (wsum * float(np.abs(yr).max()) + abs(omega))
    return out
