"""The double-double tier: T(x) with about 106-bit midpoints and rigorous radii, for the strings
the float64 kernels leave open (``verify.model.certified.truth_table``), before arb.

The kernel is ``verify.model.double_double.dd_kernel.certified_T_dd``; its arithmetic and error
bounds are in ``verify.model.double_double.dd_arith``. This module builds its inputs: the embeddings
of every (token, position) enclosed with arb (exact for learned positions, the sinusoidal table to
~2^-120) and rounded to DD with a radius covering the rounding, 1/sqrt(d_head) likewise, and the
weight bundles of the per-string kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from flint import arb

from verify._threads import one_blas_thread
from verify.model.arithmetic.contexts import arb_precision, sinusoidal_arb
from verify.model.arithmetic.matrix_norms import (
    finite_or_inf,
    l2_upper,
    spectral_norm_upper,
    spectral_norms_upper,
)
from verify.model.arithmetic.rounding import ETA, U
from verify.model.per_string.per_string_pass import kernel_scalars, layer_weights_t, norm_affine
from verify.model.plain.forward import check_bits
from verify.model.spec.params import Params
from verify.model.stages.bundles import (
    DoubleDoubleTables,
    LayerWeightsT,
    NormAffine,
    Scalars,
    f64,
)

_CHUNK = 1 << 14
_PREC = 192  # bits of the arb enclosures rounded to DD


@dataclass(frozen=True)
class DoubleDoubleInputs:
    """Everything the double-double kernel needs for one (params, N)."""

    n_bits: int
    scalars: Scalars
    tables: DoubleDoubleTables
    layers: LayerWeightsT
    norms: NormAffine
    matrix_norms: np.ndarray  # (L, 3, 3 heads + 3): ``layer_norms``
    readout_norms: np.ndarray  # (3,): the same bounds for the readout (weight, weight, bias)


def _to_dd(x: arb) -> tuple[float, float, float]:
    """(hi, lo, rad) with |x - hi - lo| <= rad for every point of the ball x (at _PREC bits)."""
    mid = x.mid()
    hi = float(mid)
    if not (x.is_finite() and math.isfinite(hi)):  # beyond float64 (or no number): vacuous
        return (hi if math.isfinite(hi) else 0.0), 0.0, math.inf
    lo = float(mid - arb(hi))
    err = (x - arb(hi) - arb(lo)).abs_upper()  # exact arithmetic on the ball, then an upper bound
    rad = float(err)
    return hi, lo, float(finite_or_inf(rad * (1 + 4 * U) + ETA))


def _dd_array(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hi, lo, rad = (np.empty(values.shape) for _ in range(3))
    for idx in np.ndindex(values.shape):
        hi[idx], lo[idx], rad[idx] = _to_dd(values[idx])
    return hi, lo, rad


def layer_norms(params: Params, first: int = 0) -> np.ndarray:
    """(L, 3, 3 H + 3): per layer, for in_proj's query blocks (one per head), key blocks, value
    blocks, then out_proj, linear1, linear2: upper bounds of the matrix's spectral norm (row 0)
    and Frobenius norm (row 1) and of its bias's 2-norm (row 2). Layers before ``first`` are
    not computed (inf)."""
    cfg = params.config
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    out = np.full((cfg.n_layers, 3, 3 * h + 3), np.inf)
    blocks: list[tuple[int, int, np.ndarray, np.ndarray]] = []  # (layer, column, W, bias)
    for layer in range(first, cfg.n_layers):
        pre = f"layers.{layer}."
        w_in = f64(params[pre + "self_attn.in_proj_weight"])
        b_in = f64(params[pre + "self_attn.in_proj_bias"])
        for blk in range(3):
            for hd in range(h):
                r0 = blk * d + hd * dh
                blocks.append((layer, blk * h + hd, w_in[r0 : r0 + dh], b_in[r0 : r0 + dh]))
        for c, name in enumerate(("self_attn.out_proj", "linear1", "linear2")):
            w, bias = f64(params[pre + name + ".weight"]), f64(params[pre + name + ".bias"])
            blocks.append((layer, 3 * h + c, w, bias))
    spectral = spectral_norms_upper([w for _, _, w, _ in blocks])
    for (layer, c, w, bias), norm in zip(blocks, spectral, strict=True):
        out[layer, :, c] = norm, l2_upper(w), l2_upper(bias)
    return finite_or_inf(out)


def prepare_dd(params: Params, n_bits: int) -> DoubleDoubleInputs:
    """The double-double kernel's inputs for strings of n_bits."""
    cfg = params.config
    n = cfg.check_n_bits(n_bits)
    s = cfg.seq_len(n)
    with arb_precision(_PREC):
        tok = np.vectorize(arb, otypes=[object])(params["token_embedding"])  # (3, e)
        if cfg.pos_encoding == "learned":
            pos = np.vectorize(arb, otypes=[object])(params["pos_embedding"][:s])
        elif cfg.pos_encoding == "sinusoidal":
            pos = sinusoidal_arb(s, cfg.d_embed)
        else:
            pos = np.vectorize(arb, otypes=[object])(np.zeros((s, cfg.d_embed)))
        tok_b = np.broadcast_to(tok[:, None, :], (3, s, cfg.d_embed))
        pos_b = np.broadcast_to(pos[None, :, :], (3, s, cfg.d_embed))
        if cfg.embedding == "add":
            y0 = tok_b + pos_b
        else:
            y0 = np.concatenate([tok_b, pos_b], axis=2)
        y0h, y0l, y0r = _dd_array(y0)
        ch, cl, cr = _to_dd(arb(cfg.d_head).rsqrt())
    w = f64(params["readout.weight"])
    tables = DoubleDoubleTables(
        y0_hi=f64(y0h), y0_lo=f64(y0l), y0_rad=f64(y0r), readout_t=f64(w[:, None]),
        readout_t_abs=f64(np.abs(w)[:, None]), readout_bias=f64([float(params["readout.bias"])]),
        inv_sqrt_dh_hi=ch, inv_sqrt_dh_lo=cl, inv_sqrt_dh_rad=cr,
    )  # fmt: skip
    gains, biases = norm_affine(params)
    w_bias = tables.readout_bias
    return DoubleDoubleInputs(
        n_bits=n, scalars=kernel_scalars(params), tables=tables, layers=layer_weights_t(params),
        norms=NormAffine(f64(gains), f64(biases)), matrix_norms=layer_norms(params),
        readout_norms=f64([spectral_norm_upper(w[None, :]), l2_upper(w), l2_upper(w_bias)]),
    )  # fmt: skip


@one_blas_thread
def dd_T(
    params: Params,
    bits: object,
    *,
    bounds: bool = True,
    inputs: DoubleDoubleInputs | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(T, radius) for each string of ``bits`` by the double-double kernel: radius bounds
    |T_exact - T| rigorously with ``bounds`` (else 0). NaN T or infinite/NaN radius: not
    settled."""
    from verify.model.double_double.dd_kernel import certified_T_dd  # compiles on first use

    arr = check_bits(bits)
    if inputs is None or inputs.n_bits != arr.shape[1]:
        inputs = prepare_dd(params, arr.shape[1])
    t = np.empty(arr.shape[0])
    r = np.empty(arr.shape[0])
    for start in range(0, arr.shape[0], _CHUNK):
        stop = min(arr.shape[0], start + _CHUNK)
        with np.errstate(all="ignore"):
            certified_T_dd(
                np.ascontiguousarray(arr[start:stop]), inputs.scalars, inputs.tables,
                inputs.layers, inputs.norms, inputs.matrix_norms, inputs.readout_norms, bounds,
                t[start:stop], r[start:stop],
            )  # fmt: skip
    return t, r
