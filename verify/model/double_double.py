"""The double-double tier: T(x) with about 106-bit midpoints and rigorous radii, for the strings
the float64 kernels leave open (``verify.model.truth_table``), before arb.

The kernel is ``verify.model.kernels.per_string_dd.certified_T_dd``; its arithmetic and error
bounds are in ``verify.model.kernels.dd``. This module builds its inputs: the embeddings of
every (token, position) enclosed with arb (exact for learned positions, the sinusoidal table to
~2^-120) and rounded to DD with a radius covering the rounding, 1/sqrt(d_head) likewise, and the
weight bundles of the per-string kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb

from verify.model.arith import arb_precision, sinusoidal_arb
from verify.model.fast import kernel_scalars, layer_weights_t, norm_affine
from verify.model.forward import check_bits
from verify.model.kernels.bundles import (
    DoubleDoubleTables,
    LayerWeightsT,
    NormAffine,
    Scalars,
    f64,
)
from verify.model.params import Params
from verify.model.rounding import ETA, U

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


def _to_dd(x: arb) -> tuple[float, float, float]:
    """(hi, lo, rad) with |x - hi - lo| <= rad for every point of the ball x (at _PREC bits)."""
    mid = x.mid()
    hi = float(mid)
    lo = float(mid - arb(hi))
    err = (x - arb(hi) - arb(lo)).abs_upper()  # exact arithmetic on the ball, then an upper bound
    rad = float(err)
    return hi, lo, rad * (1 + 4 * U) + ETA


def _dd_array(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hi, lo, rad = (np.empty(values.shape) for _ in range(3))
    for idx in np.ndindex(values.shape):
        hi[idx], lo[idx], rad[idx] = _to_dd(values[idx])
    return hi, lo, rad


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
    return DoubleDoubleInputs(
        n_bits=n, scalars=kernel_scalars(params), tables=tables, layers=layer_weights_t(params),
        norms=NormAffine(f64(gains), f64(biases)),
    )  # fmt: skip


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
    from verify.model.kernels.per_string_dd import certified_T_dd  # compiles on first use

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
                inputs.layers, inputs.norms, bounds, t[start:stop], r[start:stop],
            )  # fmt: skip
    return t, r
