"""T(x) with a rigorous radius for all 2^N strings at once: tables and orchestration of the
exhaustive kernel (``verify.model.exhaustive_kernels``).

Layer 0's attention at query position i (token t_i), head h, is a ratio of two sums over the
positions j, num = sum_j e_ij V_j and den = sum_j e_ij, whose terms depend only on (t_j, j)
(tables of ``verify.model.fast.prepare``, with radii). The kernel splits each sum into the low
positions j < k (k = min(N, 6); tabulated here for all 2^k low parts, the query token folded in
for i < k) and the high positions (summed once per block of 2^k strings).

Bounds that hold for every string (``lo_bound``), per (i, t_i, h), with sums over all
positions j and maxima over the tokens t_j a position admits:

- E_num = R_num + gamma_{s+2} M_num bounds |num_exact - num_float64| componentwise, where
  R_num = sum_j max_t (r(e) max|V| + (e + r(e)) max r(V)) covers the radii of the tables and
  M_num = sum_j max_t e max|V| the rounding of the sums (any order, any split);
- E_den = R_den + gamma_{s+1} M_den likewise for den;
- A_max = max_{j, t} (max|V| + max r(V)) bounds |A_h| (A_h is a convex combination of the V_j).

The kernel turns them into the radius of A_h = num / den per string: with den_low = den -
E_den > 0, |A_exact - A_float64| <= (E_num + A_1 E_den) / den_low + 3 U A_1, A_1 a bound of
|A_float64|. The weights' infinity norms for the scalar radii are computed here and rounded up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify.errors import ValidationError
from verify.model import exhaustive_kernels as kernels
from verify.model.arith import ETA, MidRad, MidRadContext, U
from verify.model.exhaustive_kernels import BS, LO_BITS
from verify.model.fast import FastTables, norm_affine, prepare
from verify.model.params import Params

_BLOCKS_PER_CALL = 1024  # 2^16 strings per kernel call


def _up(x: np.ndarray | float, n_terms: int) -> np.ndarray:
    """An upper bound of a nonnegative sum of n_terms float64 terms computed in float64."""
    return np.asarray(x, dtype=np.float64) * (1.0 + 2 * (n_terms + 2) * U) + ETA


def _nan_to_inf(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), np.inf, x)


@dataclass(frozen=True)
class ExhaustiveTables:
    """Everything the exhaustive kernel needs for one (params, N)."""

    n_bits: int
    lo_bits: int
    args: tuple
    per_string: FastTables  # the per-string kernel's tables (its layer-0 tables are shared)


def _sum_bounds(
    sce_m: np.ndarray, sce_r: np.ndarray, val_m: np.ndarray, val_r: np.ndarray, s: int
) -> tuple[np.ndarray, np.ndarray]:
    """For values val (t, j, h, w) weighted by e = sce (slot, i, t_j, j, h): the bound
    E = R + gamma_{s+2} M of |sum_j e_j val_j (exact) - its float64 value|, any order and
    split, per (slot, i, h); and max_j,t |val| + r."""
    vm = np.abs(val_m).max(axis=3)[None, None]  # (1, 1, t_j, j, h)
    vr = val_r.max(axis=3)[None, None]
    r_sum = _up((sce_r * vm + (sce_m + sce_r) * vr).max(axis=2).sum(axis=2), s)
    m_sum = _up((sce_m * vm).max(axis=2).sum(axis=2), s)
    err = _up(r_sum + (s + 2) * U * m_sum, 3)  # (slots, s, h)
    vmax = _up((vm + vr)[0, 0].max(), 2)  # invalid (t_j, j) have e = 0 but count here: safe
    return err, vmax


def _layer0_tables(params: Params, n: int, per_string: FastTables) -> tuple[np.ndarray, ...]:
    """The layer-0 arrays of the kernel's signature, y0m .. lo_bound (see the module doc and
    ``verify.model.exhaustive_kernels.exhaustive_T``)."""
    cfg = params.config
    s = cfg.seq_len(n)
    d = cfg.d_model
    k = min(n, LO_BITS)
    t0 = per_string.layer0
    y0m, y0r = t0["y0_mid"], t0["y0_rad"].max(axis=2)
    valid = np.zeros((3, s), dtype=bool)  # key tokens a position admits
    valid[:2, :n] = True
    if cfg.eos:
        valid[2, s - 1] = True
    vkey = valid[None, None, :, :, None]
    sce_full = np.where(vkey, t0["exp_scores_mid"], 0.0)  # (t_i, i, t_j, j, h)
    sce_r = np.where(vkey, t0["exp_scores_rad"], 0.0)
    ctx = MidRadContext()
    vo = MidRad(t0["values_out_mid"], t0["values_out_rad"])  # (t, j, h, d)
    # M x = W_1 (gain * (x - mean x)) for the norm in front of layer 0's MLP
    norm = "layers.0.norm2" if cfg.norm_first else "layers.0.norm1"
    gain = ctx.param(params[norm + ".weight"] if cfg.ln_affine else np.ones(d))
    bias = ctx.param(params[norm + ".bias"] if cfg.ln_affine else np.zeros(d))
    w1t = ctx.param(np.ascontiguousarray(params["layers.0.linear1.weight"].T))

    def apply_m(x: MidRad) -> MidRad:
        centred = x - (x.sum(axis=-1) / d)[..., None]
        return ctx.matmul(centred * gain, w1t)

    with np.errstate(all="ignore"):
        mv = apply_m(vo)  # (t, j, h, f)
        y0b = MidRad(y0m, t0["y0_rad"]) + ctx.param(params["layers.0.self_attn.out_proj.bias"])
        g0 = apply_m(y0b)  # (t, i, f)
        c0 = ctx.matmul(bias[None, :], w1t)[0] + ctx.param(params["layers.0.linear1.bias"])
        # query slots: slot 1 is token 1; slot 0 is token 0, or eos at the eos position
        slot_tok = np.zeros((2, s), dtype=np.int64)
        slot_tok[1] = 1
        if cfg.eos:
            slot_tok[0, s - 1] = 2
        vo_m, mv_m = np.ascontiguousarray(vo.mid), np.ascontiguousarray(mv.mid)
        lo_tab = np.empty((s, 2, cfg.n_heads, d + 1 + mv_m.shape[3], BS))
        kernels.low_sums(sce_full, vo_m, mv_m, slot_tok, k, lo_tab)
        sce_m = sce_full[slot_tok, np.arange(s)]  # (slot, i, t_j, j, h)
        sce_r = sce_r[slot_tok, np.arange(s)]
        e_num, a_max = _sum_bounds(sce_m, sce_r, vo.mid, vo.rad, s)
        e_g, g_max = _sum_bounds(sce_m, sce_r, mv.mid, mv.rad, s)
        r_den = _up(sce_r.max(axis=2).sum(axis=2), s)
        m_den = _up(sce_m.max(axis=2).sum(axis=2), s)
        e_den = _up(r_den + (s + 1) * U * m_den, 3)
        shape = e_num.shape
        bound = np.stack(
            [e_num, e_den, np.broadcast_to(a_max, shape), e_g, np.broadcast_to(g_max, shape)],
            axis=-1,
        )
        bound = np.ascontiguousarray(_nan_to_inf(bound).transpose(1, 0, 2, 3))  # (s, 2, h, 5)
        for i in range(k):
            bound[i, 0] = np.maximum(bound[i, 0], bound[i, 1])
        g0_bound = np.stack(
            [_up(np.abs(g0.mid).max(axis=2) + g0.rad.max(axis=2), 2), g0.rad.max(axis=2)], axis=-1
        )
        c0_bound = np.array([_up(np.abs(c0.mid).max() + c0.rad.max(), 2), c0.rad.max()])
    cc = np.ascontiguousarray
    return (
        cc(y0m), cc(_nan_to_inf(y0r)), cc(sce_full), vo_m, mv_m, cc(g0.mid),
        cc(_nan_to_inf(g0_bound)), cc(c0.mid), cc(_nan_to_inf(c0_bound)), lo_tab, cc(bound),
    )  # fmt: skip


def _weights(params: Params) -> tuple[np.ndarray, ...]:
    """Stacked weights and their infinity norms (rounded up) for the scalar radii."""
    cfg = params.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head

    def stack(fmt: str) -> np.ndarray:
        arrays = [params[fmt.format(lay)] for lay in range(cfg.n_layers)]
        return np.ascontiguousarray(np.stack(arrays), dtype=np.float64)

    w_in = stack("layers.{}.self_attn.in_proj_weight")
    b_in = stack("layers.{}.self_attn.in_proj_bias")
    w_out = stack("layers.{}.self_attn.out_proj.weight")
    b_out = stack("layers.{}.self_attn.out_proj.bias")
    w1, b1v = stack("layers.{}.linear1.weight"), stack("layers.{}.linear1.bias")
    w2, b2v = stack("layers.{}.linear2.weight"), stack("layers.{}.linear2.bias")
    gains, biases = norm_affine(params)

    def rows(w: np.ndarray) -> float:  # max absolute row sum
        return float(_up(np.abs(w).sum(axis=1).max(), w.shape[1]))

    head_norms = np.zeros((cfg.n_layers, h, 6))
    out_norms = np.zeros((cfg.n_layers, 2))
    norms = np.zeros((cfg.n_layers + 1, 8))
    for lay in range(cfg.n_layers):
        for hd in range(h):
            q, kk, v = (slice(p * d + hd * dh, p * d + (hd + 1) * dh) for p in range(3))
            head_norms[lay, hd] = [
                rows(w_in[lay, q]), np.abs(b_in[lay, q]).max(),
                rows(w_in[lay, kk].T), _up(np.abs(b_in[lay, kk]).sum(), dh),
                rows(w_in[lay, v]), np.abs(b_in[lay, v]).max(),
            ]  # fmt: skip
        out_norms[lay] = [rows(w_out[lay]), np.abs(b_out[lay]).max()]
        g, b = np.abs(gains[2 * lay : 2 * lay + 2]).max(axis=1), np.abs(biases).max(axis=1)
        norms[lay] = [
            rows(w1[lay]), np.abs(b1v[lay]).max(), rows(w2[lay]), np.abs(b2v[lay]).max(),
            g[0], b[2 * lay], g[1], b[2 * lay + 1],
        ]  # fmt: skip
    norms[cfg.n_layers, 6:] = [np.abs(gains[-1]).max(), np.abs(biases[-1]).max()]
    w = np.ascontiguousarray(params["readout.weight"], dtype=np.float64)
    c = MidRadContext().rsqrt_int(dh)
    scal = np.array([
        cfg.ln_eps, float(params["readout.bias"]), float(c.mid), float(c.rad),
        float(_up(np.abs(w).sum(), d)), float(np.abs(b_out[0]).max()),
    ])  # fmt: skip
    cc = np.ascontiguousarray
    return (
        w_in, b_in, w_out, b_out, w1, b1v, w2, b2v, cc(head_norms), cc(out_norms), cc(norms),
        cc(gains, dtype=np.float64), cc(biases, dtype=np.float64), w, scal,
    )  # fmt: skip


def prepare_exhaustive(params: Params, n_bits: int) -> ExhaustiveTables:
    """The layer-0 tables and weight norms of the exhaustive kernel for strings of n_bits."""
    cfg = params.config
    n = cfg.check_n_bits(n_bits)
    head = (n, cfg.eos, cfg.norm_first, cfg.n_heads, min(n, LO_BITS))
    per_string = prepare(params, n)
    layer0 = _layer0_tables(params, n, per_string)
    return ExhaustiveTables(
        n_bits=n, lo_bits=min(n, LO_BITS), args=(head, layer0, _weights(params)),
        per_string=per_string,
    )  # fmt: skip


def exhaustive_T(
    params: Params,
    n_bits: int,
    *,
    bounds: bool = True,
    tables: ExhaustiveTables | None = None,
    start: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(T, radius) of the strings with index in [start, stop) (default: all 2^n_bits; both
    multiples of 2^min(n_bits, 6)), index sum_n x_n 2^(n-1). With ``bounds`` the radius bounds
    |T_exact - T| rigorously (NaN T or infinite radius: not settled), else it is 0."""
    if tables is None or tables.n_bits != n_bits:
        tables = prepare_exhaustive(params, n_bits)
    head, layer0, weights = tables.args
    step = 1 << tables.lo_bits
    total = 1 << tables.n_bits
    stop = total if stop is None else stop
    for name, value, low in (("start", start, 0), ("stop", stop, start)):
        if value % step or not low <= value <= total:
            raise ValidationError(name, f"a multiple of {step} in [{low}, {total}]", value)
    t = np.empty(stop - start)
    r = np.empty_like(t)
    first, blk = start // step, start // step
    with np.errstate(all="ignore"):
        while blk < stop // step:
            blk1 = min(stop // step, blk + _BLOCKS_PER_CALL)
            out = slice((blk - first) * step, (blk1 - first) * step)
            kernels.exhaustive_T(*head, blk, blk1, *layer0, *weights, bounds, t[out], r[out])
            blk = blk1
    return t, r
