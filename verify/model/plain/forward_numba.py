"""The arguments of the Numba forward pass with diagnostics (``plain.diagnostics``), and its
call: ``forward(params, bits, diagnostics, engine="numba")`` goes through :func:`forward_numba`.
"""

from __future__ import annotations

import numpy as np

from verify._threads import blas_on_one_thread
from verify.model.plain.diagnostics import PlainModel, PlainScalars, forward_diagnostics
from verify.model.plain.forward_numpy import position_table
from verify.model.spec.ln_forms import require_torch_form
from verify.model.spec.params import Params


def _stack(arrays: dict[str, np.ndarray], n_layers: int, name: str, transpose: bool) -> np.ndarray:
    """Layer l's array ``layers.l.name`` (transposed when asked) for every l, stacked."""
    rows = [arrays[f"layers.{layer}.{name}"] for layer in range(n_layers)]
    return np.ascontiguousarray(np.stack([r.T if transpose else r for r in rows]), dtype=float)


def plain_model(
    params: Params, seq_len: int, layer0_table: bool = True
) -> tuple[PlainModel, PlainScalars]:
    """The kernel's bundles for strings of ``seq_len`` positions (eos included);
    ``layer0_table``: layer 0's projections from a (token, position) table (the same numbers)."""
    cfg = params.config
    arrays = dict(params)
    tok = np.asarray(arrays["token_embedding"], dtype=float)
    pos = position_table(cfg, arrays, seq_len)
    y0 = np.zeros((3, seq_len, cfg.d_model))
    for t in range(tok.shape[0]):  # the same float64 operations as dense.embed
        row = np.broadcast_to(tok[t][None], pos.shape)
        y0[t] = row + pos if cfg.embedding == "add" else np.concatenate([row, pos], axis=1)
    names = [f"layers.{layer}.norm{i}" for layer in range(cfg.n_layers) for i in (1, 2)]
    if cfg.final_norm:
        names.append("final_norm")
    k, d = len(names), cfg.d_model
    if cfg.ln_affine:
        gains = np.stack([arrays[nm + ".weight"] for nm in names]).astype(float)
        biases = np.stack([arrays[nm + ".bias"] for nm in names]).astype(float)
    else:
        gains, biases = np.ones((k, d)), np.zeros((k, d))
    n_layers = cfg.n_layers
    model = PlainModel(
        y0=y0,
        in_wt=_stack(arrays, n_layers, "self_attn.in_proj_weight", True),
        in_b=_stack(arrays, n_layers, "self_attn.in_proj_bias", False),
        out_wt=_stack(arrays, n_layers, "self_attn.out_proj.weight", True),
        out_b=_stack(arrays, n_layers, "self_attn.out_proj.bias", False),
        lin1_wt=_stack(arrays, n_layers, "linear1.weight", True),
        lin1_b=_stack(arrays, n_layers, "linear1.bias", False),
        lin2_wt=_stack(arrays, n_layers, "linear2.weight", True),
        lin2_b=_stack(arrays, n_layers, "linear2.bias", False),
        gains=np.ascontiguousarray(gains),
        biases=np.ascontiguousarray(biases),
        readout=np.ascontiguousarray(arrays["readout.weight"], dtype=float),
    )
    scalars = PlainScalars(
        eos=bool(cfg.eos),
        norm_first=bool(cfg.norm_first),
        final_norm=bool(cfg.final_norm),
        affine=bool(cfg.ln_affine),
        n_heads=int(cfg.n_heads),
        eps=float(cfg.ln_eps),
        omega=float(arrays["readout.bias"]),
        layer0_table=bool(layer0_table),
    )
    return model, scalars


def forward_numba(
    params: Params, bits: np.ndarray, layer0_table: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T (B,), layer-norm input variances (B, K, S), readout vectors (B, D)) of the validated
    (B, N) uint8 strings ``bits``, by the Numba kernel (BLAS on one thread meanwhile);
    ``layer0_table`` False computes layer 0's projections in every block (a cross-check: the
    same numbers)."""
    require_torch_form(params.config, "the Numba forward kernel")
    cfg = params.config
    b, n = bits.shape
    s = cfg.seq_len(n)
    model, scalars = plain_model(params, s, layer0_table)
    t = np.empty(b)
    var = np.empty((b, cfg.n_norms, s))
    y_r = np.empty((b, cfg.d_model))
    with blas_on_one_thread():
        forward_diagnostics(np.ascontiguousarray(bits, dtype=np.uint8), model, scalars, t, var, y_r)
    return t, var, y_r
