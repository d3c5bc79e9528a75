"""T(x) with a rigorous radius for all 2^N strings at once: tables and orchestration of the
exhaustive kernel (``verify.model.exhaustive.exhaustive_kernel``).

Layer 0's attention at query position i (token t_i), head h, is a ratio of two sums over the
positions j, num = sum_j e_ij V_j and den = sum_j e_ij, whose terms depend only on (t_j, j)
(tables of ``verify.model.per_string.per_string_pass.prepare``, with radii). The kernel splits each
sum into the low positions j < k (k = min(N, 6); tabulated here for all 2^k low parts, the query
token folded in for i < k) and the high positions (summed once per block of 2^k strings).

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

from verify._threads import numba_threads_for, one_blas_thread
from verify.errors import ValidationError
from verify.model.arithmetic.contexts import MidRad, MidRadContext
from verify.model.arithmetic.matrix_norms import finite_or_inf, l2_upper, spectral_norm_upper
from verify.model.arithmetic.rounding import U, sum_upper
from verify.model.double_double.dd_pass import layer_norms
from verify.model.exhaustive import exhaustive_kernel as kernel
from verify.model.per_string.per_string_pass import (
    FastTables,
    ModelWeights,
    model_weights,
    norm_affine,
    prepare,
)
from verify.model.spec.params import Params
from verify.model.stages.bundles import (
    BD_MAX,
    BD_RAD,
    BS,
    HB_BK,
    HB_BQ,
    HB_BV,
    HB_COLS,
    HB_WKT,
    HB_WQ,
    HB_WV,
    LB_A_MAX,
    LB_COLS,
    LB_E_DEN,
    LB_E_G,
    LB_E_NUM,
    LB_G_MAX,
    LO_BITS,
    NB_B1,
    NB_B2,
    NB_COLS,
    NB_LN1_BIAS,
    NB_LN1_GAIN,
    NB_LN2_BIAS,
    NB_LN2_GAIN,
    NB_W1,
    NB_W2,
    OB_B,
    OB_COLS,
    OB_W,
    SLOTS,
    WN_SPEC,
    Diagnostics,
    ExhaustiveLayer0,
    LayerWeights,
    LayerWeightsT,
    NormAffine,
    Readout,
    WeightBounds,
    f64,
)
from verify.model.stages.tables import low_sums

_BLOCKS_PER_CALL = 1 << 14  # 2^20 strings per kernel call (one parallel launch)
# below this many blocks a call runs on one thread: waking the other thread costs up to a
# scheduler time slice (4-8 ms measured for the one-block probe when another process holds
# the other core, against 0.03 ms on one thread)
_MIN_PARALLEL_BLOCKS = 64


def _nan_to_inf(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), np.inf, x)


@dataclass(frozen=True)
class ExhaustiveTables:
    """Everything the exhaustive kernel needs for one (params, N)."""

    n_bits: int
    lo_bits: int
    layer0: ExhaustiveLayer0
    layers: LayerWeights
    norms: NormAffine
    readout: Readout
    bounds: WeightBounds
    per_string: FastTables  # the per-string kernel's tables (its layer-0 tables are shared)
    all_positions: bool = False  # layer 0's low sums at every position (diagnostics at L = 1)


def _sum_bounds(
    sce_m: np.ndarray, sce_r: np.ndarray, val_m: np.ndarray, val_r: np.ndarray, s: int
) -> tuple[np.ndarray, np.ndarray]:
    """For values val (t, j, h, w) weighted by e = sce (slot, i, t_j, j, h): the bound
    E = R + gamma_{s+2} M of |sum_j e_j val_j (exact) - its float64 value|, any order and
    split, per (slot, i, h); and max_j,t |val| + r."""
    vm = np.abs(val_m).max(axis=3)[None, None]  # (1, 1, t_j, j, h)
    vr = val_r.max(axis=3)[None, None]
    r_sum = sum_upper((sce_r * vm + (sce_m + sce_r) * vr).max(axis=2).sum(axis=2), s)
    m_sum = sum_upper((sce_m * vm).max(axis=2).sum(axis=2), s)
    err = sum_upper(r_sum + (s + 2) * U * m_sum, 3)  # (slots, s, h)
    vmax = sum_upper((vm + vr)[0, 0].max(), 2)  # invalid (t_j, j) have e = 0 but count here: safe
    return err, vmax


def _layer0_tables(
    params: Params, n: int, per_string: FastTables, all_positions: bool = False
) -> ExhaustiveLayer0:
    """The exhaustive kernel's layer-0 tables and their bounds (see the module doc and
    ``verify.model.stages.bundles.ExhaustiveLayer0``); ``all_positions``: the low sums of
    every query position even when L = 1 (the diagnostics run it at every position)."""
    cfg = params.config
    s = cfg.seq_len(n)
    d = cfg.d_model
    k = min(n, LO_BITS)
    t0 = per_string.layer0
    y0m, y0r = t0.y0_mid, t0.y0_rad.max(axis=2)
    valid = np.zeros((3, s), dtype=bool)  # key tokens a position admits
    valid[:2, :n] = True
    if cfg.eos:
        valid[2, s - 1] = True
    vkey = valid[None, None, :, :, None]
    sce_full = np.where(vkey, t0.exp_scores_mid, 0.0)  # (t_i, i, t_j, j, h)
    sce_r = np.where(vkey, t0.exp_scores_rad, 0.0)
    ctx = MidRadContext()
    vo = MidRad(t0.values_out_mid, t0.values_out_rad)  # (t, j, h, d)
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
        y0b = MidRad(y0m, t0.y0_rad) + ctx.param(params["layers.0.self_attn.out_proj.bias"])
        g0 = apply_m(y0b)  # (t, i, f)
        c0 = ctx.matmul(bias[None, :], w1t)[0] + ctx.param(params["layers.0.linear1.bias"])
        # query slots: slot 1 is token 1; slot 0 is token 0, or eos at the eos position
        slot_tok = np.zeros((SLOTS, s), dtype=np.int64)
        slot_tok[1] = 1
        if cfg.eos:
            slot_tok[0, s - 1] = 2
        vo_m, mv_m = f64(vo.mid), f64(mv.mid)
        sce_full = f64(sce_full)
        lo_tab = np.zeros((s, SLOTS, cfg.n_heads, d + 1 + mv_m.shape[3], BS))
        # one layer: the kernel reads layer 0 at the readout position only (without
        # diagnostics); the rows of the other positions are not written
        first = s - 1 if cfg.n_layers == 1 and not all_positions else 0
        low_sums(sce_full, vo_m, mv_m, slot_tok, k, first, lo_tab)
        sce_m = sce_full[slot_tok, np.arange(s)]  # (slot, i, t_j, j, h)
        sce_r = sce_r[slot_tok, np.arange(s)]
        e_num, a_max = _sum_bounds(sce_m, sce_r, vo.mid, vo.rad, s)
        e_g, g_max = _sum_bounds(sce_m, sce_r, mv.mid, mv.rad, s)
        r_den = sum_upper(sce_r.max(axis=2).sum(axis=2), s)
        m_den = sum_upper(sce_m.max(axis=2).sum(axis=2), s)
        e_den = sum_upper(r_den + (s + 1) * U * m_den, 3)
        bound = np.empty(e_num.shape + (LB_COLS,))  # (slot, s, h, LB_COLS)
        bound[..., LB_E_NUM] = e_num
        bound[..., LB_E_DEN] = e_den
        bound[..., LB_A_MAX] = a_max
        bound[..., LB_E_G] = e_g
        bound[..., LB_G_MAX] = g_max
        bound = f64(_nan_to_inf(bound).transpose(1, 0, 2, 3))  # (s, slot, h, LB_COLS)
        for i in range(k):  # the query token varies with lo: slot 0 covers both tokens
            bound[i, 0] = np.maximum(bound[i, 0], bound[i, 1])
        g0_bound = np.empty(g0.mid.shape[:2] + (2,))
        g0_bound[..., BD_MAX] = sum_upper(np.abs(g0.mid).max(axis=2) + g0.rad.max(axis=2), 2)
        g0_bound[..., BD_RAD] = g0.rad.max(axis=2)
        c0_bound = np.empty(2)
        c0_bound[BD_MAX] = sum_upper(np.abs(c0.mid).max() + c0.rad.max(), 2)
        c0_bound[BD_RAD] = c0.rad.max()
    return ExhaustiveLayer0(
        y0_mid=f64(y0m), y0_rad=f64(_nan_to_inf(y0r)), exp_scores=sce_full, values_out=vo_m,
        mlp_values=mv_m, g0=f64(g0.mid), g0_bound=f64(_nan_to_inf(g0_bound)), c0=f64(c0.mid),
        c0_bound=f64(_nan_to_inf(c0_bound)), lo_sums=lo_tab, lo_bound=bound,
    )  # fmt: skip


def _weights(params: Params, lt: LayerWeightsT) -> tuple[LayerWeights, WeightBounds]:
    """The kernel's weights (the transposed stacks ``lt`` of the per-string tables) and their
    infinity norms (rounded up) for the scalar radii."""
    cfg = params.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    lw = LayerWeights(
        in_wt=lt.in_t, in_b=lt.in_bias, out_wt=lt.out_t, out_b=lt.out_bias, lin1_wt=lt.lin1_t,
        lin1_b=lt.lin1_bias, lin2_wt=lt.lin2_t, lin2_b=lt.lin2_bias,
        keys_w=np.ascontiguousarray(lt.in_t[:, :, d : 2 * d].transpose(0, 2, 1)),
        zero_d=np.zeros(d),
    )  # fmt: skip

    def weight(wt: np.ndarray, lay: int) -> np.ndarray:  # W of one layer, C-contiguous (as
        # stored: numpy's row sums below take the same order, so the norms are unchanged)
        return np.ascontiguousarray(wt[lay].T)

    gains, biases = norm_affine(params)

    def rows(w: np.ndarray) -> float:  # max absolute row sum (+inf beyond float64)
        with np.errstate(over="ignore"):
            return float(sum_upper(np.abs(w).sum(axis=1).max(), w.shape[1]))

    head = np.zeros((cfg.n_layers, h, HB_COLS))
    out = np.zeros((cfg.n_layers, OB_COLS))
    layer = np.zeros((cfg.n_layers + 1, NB_COLS))
    for lay in range(cfg.n_layers):
        w_in, b_in = weight(lw.in_wt, lay), lw.in_b[lay]
        for hd in range(h):
            q, kk, v = (slice(p * d + hd * dh, p * d + (hd + 1) * dh) for p in range(3))
            hn = head[lay, hd]
            hn[HB_WQ], hn[HB_BQ] = rows(w_in[q]), np.abs(b_in[q]).max()
            hn[HB_WKT], hn[HB_BK] = rows(w_in[kk].T), sum_upper(np.abs(b_in[kk]).sum(), dh)
            hn[HB_WV], hn[HB_BV] = rows(w_in[v]), np.abs(b_in[v]).max()
        out[lay, OB_W], out[lay, OB_B] = rows(weight(lw.out_wt, lay)), np.abs(lw.out_b[lay]).max()
        g = np.abs(gains[2 * lay : 2 * lay + 2]).max(axis=1)
        b = np.abs(biases).max(axis=1)
        nm = layer[lay]
        nm[NB_W1], nm[NB_B1] = rows(weight(lw.lin1_wt, lay)), np.abs(lw.lin1_b[lay]).max()
        nm[NB_W2], nm[NB_B2] = rows(weight(lw.lin2_wt, lay)), np.abs(lw.lin2_b[lay]).max()
        nm[NB_LN1_GAIN], nm[NB_LN1_BIAS] = g[0], b[2 * lay]
        nm[NB_LN2_GAIN], nm[NB_LN2_BIAS] = g[1], b[2 * lay + 1]
    # row L: the final norm (pre-LN) in the LN2 slots
    layer[cfg.n_layers, NB_LN2_GAIN] = np.abs(gains[-1]).max()
    layer[cfg.n_layers, NB_LN2_BIAS] = np.abs(biases[-1]).max()
    w = f64(params["readout.weight"])
    # the 2-norm rules' norms: layers 1..L-1, and layer 0's W_2 when L >= 2 (its output carries
    # a 2-norm from there; the rest of layer 0 is assembled from tables with scalar radii)
    l2 = layer_norms(params, first=1)
    if cfg.n_layers > 1:
        l2[0, WN_SPEC, 3 * h + 2] = spectral_norm_upper(weight(lw.lin2_wt, 0))
    # every bound checked where it is produced: one that is not a finite number is +inf (a
    # vacuous bound: the radii it enters are not finite and the bits uncertain), never NaN
    with np.errstate(over="ignore"):
        w_abs_sum = sum_upper(np.abs(w).sum(), d)
    bounds = WeightBounds(
        head=finite_or_inf(head), out=finite_or_inf(out), layer=finite_or_inf(layer),
        readout_abs_sum=float(finite_or_inf(w_abs_sum)),
        out_bias0_max=float(finite_or_inf(np.abs(lw.out_b[0]).max())),
        l2=finite_or_inf(l2), readout_l2=l2_upper(w),
    )  # fmt: skip
    return lw, bounds


@dataclass(frozen=True)
class ExhaustiveWeights:
    """The N-independent part of :class:`ExhaustiveTables`: the per-string kernel's weights,
    the exhaustive kernel's weights and their norms (one per params, shared across N)."""

    per_string: ModelWeights
    layers: LayerWeights
    bounds: WeightBounds


def exhaustive_weights(params: Params) -> ExhaustiveWeights:
    """The weights and (rounded-up) norms of ``params`` that every N shares."""
    mw = model_weights(params)
    layers, bounds = _weights(params, mw.layers)
    return ExhaustiveWeights(per_string=mw, layers=layers, bounds=bounds)


def prepare_exhaustive(
    params: Params,
    n_bits: int,
    weights: ExhaustiveWeights | None = None,
    all_positions: bool = False,
) -> ExhaustiveTables:
    """The layer-0 tables and weight norms of the exhaustive kernel for strings of n_bits.
    ``weights``: ``exhaustive_weights(params)`` computed once for several N (of these very
    params, unchanged since; the same numbers as computing it here). ``all_positions``: tables
    for the diagnostics too (:func:`exhaustive_T`'s ``diagnostics``; the same numbers where
    both have them)."""
    cfg = params.config
    n = cfg.check_n_bits(n_bits)
    w = exhaustive_weights(params) if weights is None else weights
    per_string = prepare(params, n, w.per_string)
    return ExhaustiveTables(
        n_bits=n, lo_bits=min(n, LO_BITS),
        layer0=_layer0_tables(params, n, per_string, all_positions),
        layers=w.layers, norms=w.per_string.norms, readout=w.per_string.readout, bounds=w.bounds,
        per_string=per_string, all_positions=all_positions,
    )  # fmt: skip


@one_blas_thread
def exhaustive_T(
    params: Params,
    n_bits: int,
    *,
    bounds: bool = True,
    tables: ExhaustiveTables | None = None,
    start: int = 0,
    stop: int | None = None,
    diagnostics: Diagnostics | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(T, radius) of the strings with index in [start, stop) (default: all 2^n_bits; both
    multiples of 2^min(n_bits, 6)), index sum_n x_n 2^(n-1). With ``bounds`` the radius bounds
    |T_exact - T| rigorously (NaN T or infinite radius: not settled), else it is 0.
    ``diagnostics``: arrays (:func:`diagnostics_arrays`, stop - start rows) that the kernel
    fills too, from the same pass (T and the radius are the same numbers with or without;
    ``tables`` then prepared with ``all_positions``)."""
    if tables is None or tables.n_bits != n_bits:
        tables = prepare_exhaustive(params, n_bits, all_positions=diagnostics is not None)
    step = 1 << tables.lo_bits
    total = 1 << tables.n_bits
    stop = total if stop is None else stop
    for name, value, low in (("start", start, 0), ("stop", stop, start)):
        if value % step or not low <= value <= total:
            raise ValidationError(name, f"a multiple of {step} in [{low}, {total}]", value)
    t = np.empty(stop - start)
    r = np.empty_like(t)
    dg = _NO_DIAGNOSTICS if diagnostics is None else diagnostics
    if dg.on and (dg.var.shape[0] != t.size or dg.y_readout.shape[0] != t.size):
        raise ValidationError("diagnostics", f"arrays of {t.size} rows", dg.var.shape[0])
    if dg.on and not tables.all_positions and params.config.n_layers == 1:
        raise ValidationError("tables", "prepared with all_positions", "readout-only tables")
    first, blk = start // step, start // step
    with numba_threads_for(stop // step - blk, _MIN_PARALLEL_BLOCKS):
        _run_blocks(tables, bounds, blk, stop // step, first, t, r, dg)
    return t, r


_NO_DIAGNOSTICS = Diagnostics(
    on=False, var=np.zeros((0, 0, 0)), y_readout=np.zeros((0, 0)), embed_var=np.zeros((0, 0))
)


def diagnostics_arrays(tables: ExhaustiveTables, n_norms: int, size: int) -> Diagnostics:
    """Empty diagnostics arrays for ``size`` strings (``stages.bundles.Diagnostics``), with
    the variances of layer 0's embeddings (pre-LN: its norm1's input) filled in, by the
    operations of the kernel's layer norms (sums in the order i = 0, 1, ...: cumsum's)."""
    y0 = tables.layer0.y0_mid  # (3, s, d)
    d = y0.shape[2]
    centred = y0 - (np.cumsum(y0, axis=2)[..., -1] / d)[..., None]
    embed_var = np.ascontiguousarray(np.cumsum(centred * centred, axis=2)[..., -1] / d)
    return Diagnostics(
        on=True, var=np.empty((size, n_norms, y0.shape[1])), y_readout=np.empty((size, d)),
        embed_var=embed_var,
    )  # fmt: skip


def _run_blocks(
    tb: ExhaustiveTables, bounds: bool, blk: int, end: int, first: int, t: np.ndarray,
    r: np.ndarray, dg: Diagnostics,
) -> None:  # fmt: skip
    """The kernel on blocks blk..end-1, written from block ``first`` on."""
    step = 1 << tb.lo_bits
    with np.errstate(all="ignore"):
        while blk < end:
            blk1 = min(end, blk + _BLOCKS_PER_CALL)
            out = slice((blk - first) * step, (blk1 - first) * step)
            part = dg._replace(var=dg.var[out], y_readout=dg.y_readout[out]) if dg.on else dg
            kernel.exhaustive_T(
                tb.n_bits, tb.lo_bits, blk, blk1, tb.per_string.scalars, tb.layer0, tb.layers,
                tb.norms, tb.readout, tb.bounds, bounds, t[out], r[out], part,
            )  # fmt: skip
            blk = blk1
