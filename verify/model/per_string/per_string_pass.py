"""Orchestration of the per-string Numba kernel (``verify.model.per_string.per_string_kernel``):
build the first layer's (bit, position) tables with rigorous radii, stack the per-layer arrays into
the kernel's named bundles (``verify.model.stages.bundles``), call the kernel."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify._threads import numba_threads_for, one_blas_thread
from verify.model.arithmetic.contexts import MidRadContext
from verify.model.generic.reference import layer_norm_ctx
from verify.model.per_string.per_string_kernel import certified_T
from verify.model.plain.forward import check_bits
from verify.model.spec.params import Params
from verify.model.stages.bundles import (
    Layer0Tables,
    LayerWeightsT,
    NormAffine,
    Readout,
    Scalars,
    f64,
)

_CHUNK = 1 << 16
# below this many strings a call runs on one thread (verify._threads.numba_threads_for): a few
# microseconds per string against up to 8 ms for waking the other thread on a busy machine
# (measured: Cor 3.4's check, 360 calls of 2-17 strings, 1.9 s in the kernel on 2 threads with
# both cores busy, 0.01 s on one)
MIN_PARALLEL_STRINGS = 256


@dataclass(frozen=True)
class FastTables:
    """Everything the kernel needs for one (params, N)."""

    n_bits: int
    scalars: Scalars
    layer0: Layer0Tables
    layers: LayerWeightsT
    norms: NormAffine
    readout: Readout


def _norm_names(params: Params) -> list[str]:
    cfg = params.config
    names = [f"layers.{layer}.norm{k}" for layer in range(cfg.n_layers) for k in (1, 2)]
    return names + (["final_norm"] if cfg.final_norm else [])


def norm_affine(params: Params) -> tuple[np.ndarray, np.ndarray]:
    """(gains, biases), one row per layer norm in kernel order (ones and zeros without
    ``ln_affine``)."""
    cfg = params.config
    names = _norm_names(params)
    if cfg.ln_affine:
        return (
            np.stack([params[nm + ".weight"] for nm in names]),
            np.stack([params[nm + ".bias"] for nm in names]),
        )
    return np.ones((len(names), cfg.d_model)), np.zeros((len(names), cfg.d_model))


def layer_weights_t(params: Params) -> LayerWeightsT:
    """The per-layer weights stacked over layers, matrices transposed, with |W^T|."""
    cfg = params.config

    def stack(fmt: str, transpose: bool = False) -> np.ndarray:
        arrs = [params[fmt.format(layer)] for layer in range(cfg.n_layers)]
        return f64(np.stack([a.T if transpose else a for a in arrs]))

    w_in = stack("layers.{}.self_attn.in_proj_weight", True)
    w_out = stack("layers.{}.self_attn.out_proj.weight", True)
    w1, w2 = stack("layers.{}.linear1.weight", True), stack("layers.{}.linear2.weight", True)
    return LayerWeightsT(
        in_t=w_in, in_t_abs=np.abs(w_in), in_bias=stack("layers.{}.self_attn.in_proj_bias"),
        out_t=w_out, out_t_abs=np.abs(w_out), out_bias=stack("layers.{}.self_attn.out_proj.bias"),
        lin1_t=w1, lin1_t_abs=np.abs(w1), lin1_bias=stack("layers.{}.linear1.bias"),
        lin2_t=w2, lin2_t_abs=np.abs(w2), lin2_bias=stack("layers.{}.linear2.bias"),
    )  # fmt: skip


def kernel_scalars(params: Params) -> Scalars:
    """The model's scalars for the kernels (1/sqrt(d_head) as a float64 ball)."""
    cfg = params.config
    c = MidRadContext().rsqrt_int(cfg.d_head)
    return Scalars(
        eos=bool(cfg.eos), norm_first=bool(cfg.norm_first), final_norm=bool(cfg.final_norm),
        n_heads=int(cfg.n_heads),
        eps=float(cfg.ln_eps), omega=float(params["readout.bias"]), inv_sqrt_dh=float(c.mid),
        inv_sqrt_dh_rad=float(c.rad), ln_annotated=cfg.ln_form == "annotated",
    )  # fmt: skip


@dataclass(frozen=True)
class ModelWeights:
    """The N-independent part of :class:`FastTables` (one per params, shared across N)."""

    scalars: Scalars
    layers: LayerWeightsT
    norms: NormAffine
    readout: Readout


def model_weights(params: Params) -> ModelWeights:
    """The kernel's scalars, stacked layers, norm affines and readout of ``params``."""
    gains, biases = norm_affine(params)
    w = f64(params["readout.weight"])
    return ModelWeights(
        scalars=kernel_scalars(params), layers=layer_weights_t(params),
        norms=NormAffine(f64(gains), f64(biases)), readout=Readout(w, np.abs(w)),
    )  # fmt: skip


def prepare(params: Params, n_bits: int, weights: ModelWeights | None = None) -> FastTables:
    """Tabulate layer 0 over (token, position) in MidRad arithmetic and stack the layers.
    ``weights``: ``model_weights(params)`` computed once for several N (it must be of these
    very params, unchanged since)."""
    cfg = params.config
    n = cfg.check_n_bits(n_bits)
    s = cfg.seq_len(n)
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    ctx = MidRadContext()
    with np.errstate(all="ignore"):
        tok = ctx.param(params["token_embedding"])  # (3, e)
        if cfg.pos_encoding == "learned":
            pos = ctx.param(params["pos_embedding"][:s])
        elif cfg.pos_encoding == "sinusoidal":
            pos = ctx.sinusoidal(s, cfg.d_embed)
        else:
            pos = ctx.const(np.zeros((s, cfg.d_embed)))
        shape = (3, s, cfg.d_embed)
        tok_b = ctx.broadcast(tok[:, None, :], shape)
        pos_b = ctx.broadcast(pos[None, :, :], shape)
        y0 = tok_b + pos_b if cfg.embedding == "add" else ctx.concat([tok_b, pos_b], axis=2)
        x = y0
        if cfg.norm_first:
            affine = None
            if cfg.ln_affine:
                affine = (
                    ctx.param(params["layers.0.norm1.weight"]),
                    ctx.param(params["layers.0.norm1.bias"]),
                )
            x, _ = layer_norm_ctx(ctx, y0, cfg.ln_eps, affine, form=cfg.ln_form)
        wint = ctx.param(np.ascontiguousarray(params["layers.0.self_attn.in_proj_weight"].T))
        bint = ctx.param(params["layers.0.self_attn.in_proj_bias"])
        qkv = ctx.matmul(x, wint) + bint  # (3, s, 3d)
        q = qkv[..., :d].reshape(3 * s, h, dh).transpose(1, 0, 2)  # (h, 3s, dh)
        k = qkv[..., d : 2 * d].reshape(3 * s, h, dh).transpose(1, 0, 2)
        v = qkv[..., 2 * d :].reshape(3, s, h, dh)
        sc = ctx.matmul(q, k.transpose(0, 2, 1)) * ctx.rsqrt_int(dh)  # (h, 3s, 3s)
        sc = sc.reshape(h, 3, s, 3, s).transpose(1, 2, 3, 4, 0)  # (ti, i, tj, j, h)
        valid = np.zeros((3, s), dtype=bool)
        valid[:2, :n] = True
        if cfg.eos:
            valid[2, s - 1] = True
        vmask = valid[None, None, :, :, None]
        shift = np.where(vmask, sc.mid, -np.inf).max(axis=(2, 3), keepdims=True)
        shift = np.where(np.isfinite(shift), shift, 0.0)
        sce = ctx.exp(sc - shift)
        sce_m = np.where(vmask, sce.mid, np.nan)
        sce_r = np.where(vmask, sce.rad, np.nan)
        wot = ctx.param(np.ascontiguousarray(params["layers.0.self_attn.out_proj.weight"].T))
        vo_parts = [ctx.matmul(v[:, :, hd, :], wot[hd * dh : (hd + 1) * dh, :]) for hd in range(h)]
        vo = ctx.stack(vo_parts, axis=2)  # (3, s, h, d)

    layer0 = Layer0Tables(
        y0_mid=f64(y0.mid), y0_rad=f64(y0.rad), exp_scores_mid=f64(sce_m),
        exp_scores_rad=f64(sce_r), values_out_mid=f64(vo.mid), values_out_rad=f64(vo.rad),
    )  # fmt: skip
    mw = model_weights(params) if weights is None else weights
    return FastTables(
        n_bits=n, scalars=mw.scalars, layer0=layer0, layers=mw.layers, norms=mw.norms,
        readout=mw.readout,
    )  # fmt: skip


@one_blas_thread
def fast_T(
    params: Params, bits: object, *, bounds: bool = True, tables: FastTables | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(T, radius) for each string of ``bits`` by the Numba kernel; radius is a rigorous bound
    on |T_exact - T| with ``bounds`` (else zeros). NaN T or infinite/NaN radius: not settled."""
    arr = check_bits(bits)
    if tables is None or tables.n_bits != arr.shape[1]:
        tables = prepare(params, arr.shape[1])
    b = arr.shape[0]
    t = np.empty(b)
    r = np.empty(b)
    for start in range(0, b, _CHUNK):
        stop = min(b, start + _CHUNK)
        with np.errstate(all="ignore"), numba_threads_for(stop - start, MIN_PARALLEL_STRINGS):
            certified_T(
                np.ascontiguousarray(arr[start:stop]), tables.scalars, tables.layer0,
                tables.layers, tables.norms, tables.readout, bounds, t[start:stop], r[start:stop],
            )  # fmt: skip
    return t, r
