"""Orchestration of the Numba fast path (``verify.model.kernels``): build the first layer's
(bit, position) tables with rigorous radii, stack the per-layer arrays, call the kernel."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify.model.arith import MidRadContext
from verify.model.forward import check_bits
from verify.model.kernels import certified_T
from verify.model.params import Params
from verify.model.reference import layer_norm_ctx

_CHUNK = 1 << 16


@dataclass(frozen=True)
class FastTables:
    """Everything the kernel needs for one (params, N)."""

    n_bits: int
    args: tuple
    layer0: dict[str, np.ndarray]  # midpoints and radii of the tables above, by name


def _norm_names(params: Params) -> list[str]:
    cfg = params.config
    names = [f"layers.{layer}.norm{k}" for layer in range(cfg.n_layers) for k in (1, 2)]
    return names + (["final_norm"] if cfg.norm_first else [])


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


def prepare(params: Params, n_bits: int) -> FastTables:
    """Tabulate layer 0 over (token, position) in MidRad arithmetic and stack the layers."""
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
            x, _ = layer_norm_ctx(ctx, y0, cfg.ln_eps, affine)
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

    def stack(fmt: str, transpose: bool) -> tuple[np.ndarray, np.ndarray]:
        arrs = [params[fmt.format(layer)] for layer in range(cfg.n_layers)]
        m = np.ascontiguousarray(np.stack([a.T if transpose else a for a in arrs]))
        return m, np.abs(m)

    wint_s, awint_s = stack("layers.{}.self_attn.in_proj_weight", True)
    binv, _ = stack("layers.{}.self_attn.in_proj_bias", False)
    wot_s, awot_s = stack("layers.{}.self_attn.out_proj.weight", True)
    bov, _ = stack("layers.{}.self_attn.out_proj.bias", False)
    w1t, aw1t = stack("layers.{}.linear1.weight", True)
    b1v, _ = stack("layers.{}.linear1.bias", False)
    w2t, aw2t = stack("layers.{}.linear2.weight", True)
    b2v, _ = stack("layers.{}.linear2.bias", False)
    gains, biases = norm_affine(params)
    w = np.ascontiguousarray(params["readout.weight"])
    scal = np.array([cfg.ln_eps, float(params["readout.bias"])])
    c = ctx.rsqrt_int(dh)
    inv = np.array([float(c.mid), float(c.rad)])

    def cc(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.float64)

    args = (
        cfg.eos, cfg.norm_first, h,
        cc(y0.mid), cc(y0.rad), cc(sce_m), cc(sce_r), cc(vo.mid), cc(vo.rad),
        wint_s, awint_s, cc(binv), wot_s, awot_s, cc(bov), w1t, aw1t, cc(b1v), w2t, aw2t,
        cc(b2v), cc(gains), cc(biases), w, np.abs(w), scal, inv,
    )  # fmt: skip
    layer0 = {
        "y0_mid": args[3], "y0_rad": args[4], "exp_scores_mid": args[5],
        "exp_scores_rad": args[6], "values_out_mid": args[7], "values_out_rad": args[8],
    }  # fmt: skip
    return FastTables(n_bits=n, args=args, layer0=layer0)


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
        with np.errstate(all="ignore"):
            certified_T(
                np.ascontiguousarray(arr[start:stop]), *tables.args[:3], *tables.args[3:],
                bounds, t[start:stop], r[start:stop],
            )  # fmt: skip
    return t, r
