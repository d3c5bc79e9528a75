"""The kernels' arguments, named: NamedTuple bundles of arrays and scalars, their Numba types
for the explicit signatures, and the column layouts of the bound arrays.

Numba passes a NamedTuple of arrays to a kernel as a struct of array views (no copy); the
explicit signatures use ``types.BaseTuple.from_types`` with the bundle class, which gives the
same type ``numba.typeof`` gives a bundle instance (a ``NamedUniTuple`` when every field has the
same type, else a ``NamedTuple``). The builders (``verify.model.per_string.per_string_pass``,
``verify.model.exhaustive.exhaustive_pass``) fill the bundles with C-contiguous, writable float64
arrays, Python bools, ints and floats, so a call matches its signature exactly.

Shapes use s = sequence length (N, plus 1 with eos), d = d_model, f = d_ff, H = heads,
L = layers, K = number of layer norms (2 L, plus the final norm when pre-LN), t = token
(0, 1, 2 = eos).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types
from numba.core.types import BaseTuple

f8 = types.float64
i8 = types.int64
b1 = types.boolean
A1 = types.Array(f8, 1, "C")
A2 = types.Array(f8, 2, "C")
A3 = types.Array(f8, 3, "C")
A4 = types.Array(f8, 4, "C")
A5 = types.Array(f8, 5, "C")
I2 = types.Array(i8, 2, "C")
U2 = types.Array(types.uint8, 2, "C")

# the exhaustive kernel's blocks: BS = 2^LO_BITS strings that share their high bits (string
# index = lo + BS hi); the scalar-radius kernels loop over BS columns, a compile-time constant
LO_BITS = 6
BS = 1 << LO_BITS


class Scalars(NamedTuple):
    """The model's scalars, shared by both drivers."""

    eos: bool
    norm_first: bool
    final_norm: bool  # a final layer norm before the readout (pre-LN's default)
    n_heads: int
    eps: float  # layer-norm epsilon
    omega: float  # readout bias
    inv_sqrt_dh: float  # float64 midpoint of 1 / sqrt(d_head)
    inv_sqrt_dh_rad: float  # a bound of its error
    ln_annotated: bool  # the layer-norm form (``verify.model.spec.ln_forms``): True "annotated"


class NormAffine(NamedTuple):
    """Layer-norm gains and biases, one row per norm in kernel order (layer 0's norm1, norm2,
    layer 1's, ..., then pre-LN's final norm), shape (K, d); ones and zeros without affine."""

    gains: np.ndarray
    biases: np.ndarray


class Readout(NamedTuple):
    """The readout weight w (d,) and |w|."""

    weight: np.ndarray
    weight_abs: np.ndarray


class Layer0Tables(NamedTuple):
    """Layer 0 over (token, position), midpoints with componentwise radii (``fast.prepare``)."""

    y0_mid: np.ndarray  # (3, s, d) the embeddings (pre-LN: as they enter the residual stream)
    y0_rad: np.ndarray  # (3, s, d)
    exp_scores_mid: np.ndarray  # (3, s, 3, s, H) exp(q_i . k_j / sqrt(d_h) - shift_{t_i, i, h})
    exp_scores_rad: np.ndarray  # (3, s, 3, s, H)
    values_out_mid: np.ndarray  # (3, s, H, d) each head's values through its out_proj block
    values_out_rad: np.ndarray  # (3, s, H, d)


class LayerWeightsT(NamedTuple):
    """Per-layer weights of the per-string kernel, stacked over layers, each matrix transposed
    (W^T, so that a matrix-vector product walks rows of W^T) with its absolute values."""

    in_t: np.ndarray  # (L, d, 3d) in_proj_weight^T
    in_t_abs: np.ndarray  # (L, d, 3d)
    in_bias: np.ndarray  # (L, 3d)
    out_t: np.ndarray  # (L, d, d) out_proj.weight^T
    out_t_abs: np.ndarray  # (L, d, d)
    out_bias: np.ndarray  # (L, d)
    lin1_t: np.ndarray  # (L, d, f) linear1.weight^T
    lin1_t_abs: np.ndarray  # (L, d, f)
    lin1_bias: np.ndarray  # (L, f)
    lin2_t: np.ndarray  # (L, f, d) linear2.weight^T
    lin2_t_abs: np.ndarray  # (L, f, d)
    lin2_bias: np.ndarray  # (L, d)


class LayerWeights(NamedTuple):
    """Per-layer weights of the exhaustive kernel, stacked over layers, each matrix transposed
    (W^T, the arrays of ``LayerWeightsT``): the register-blocked products (``stages.simd``)
    read the weights of one input for consecutive output rows side by side."""

    in_wt: np.ndarray  # (L, d, 3d) in_proj_weight^T
    in_b: np.ndarray  # (L, 3d)
    out_wt: np.ndarray  # (L, d, d) out_proj.weight^T
    out_b: np.ndarray  # (L, d)
    lin1_wt: np.ndarray  # (L, d, f) linear1.weight^T
    lin1_b: np.ndarray  # (L, f)
    lin2_wt: np.ndarray  # (L, f, d) linear2.weight^T
    lin2_b: np.ndarray  # (L, d)
    keys_w: np.ndarray  # (L, d, d) W_k, the keys' rows of in_proj_weight (not transposed)
    zero_d: np.ndarray  # (d,) zeros: the bias of W_k,h^T q (``stages.attention``)


# columns of WeightBounds.head[layer, h, :]: infinity norms (max absolute row sums, rounded up)
HB_WQ, HB_BQ, HB_WKT, HB_BK, HB_WV, HB_BV = range(6)  # ||W_q,h||, max|b_q,h|, ||W_k,h^T||,
HB_COLS = 6  # ||b_k,h||_1, ||W_v,h||, max|b_v,h|
# columns of WeightBounds.out[layer, :]
OB_W, OB_B = range(2)  # ||W_o||, max|b_o|
OB_COLS = 2
# columns of WeightBounds.layer[layer, :]; row L holds the final norm (pre-LN) in the LN2 slots
NB_W1, NB_B1, NB_W2, NB_B2 = range(4)  # ||W_1||, max|b_1|, ||W_2||, max|b_2|
NB_LN1_GAIN, NB_LN1_BIAS, NB_LN2_GAIN, NB_LN2_BIAS = range(4, 8)  # max|gain|, max|bias|
NB_COLS = 8
# rows of ``double_double.layer_norms``: upper bounds of the spectral norm, the Frobenius norm
# and the bias's 2-norm; its columns: in_proj's query blocks (one per head), key blocks,
# value blocks, then out_proj, linear1, linear2
WN_SPEC, WN_FRO, WN_BIAS = range(3)


class WeightBounds(NamedTuple):
    """Norms of the weights for the exhaustive kernel's radii (all rounded up)."""

    head: np.ndarray  # (L, H, HB_COLS)
    out: np.ndarray  # (L, OB_COLS)
    layer: np.ndarray  # (L + 1, NB_COLS)
    readout_abs_sum: float  # sum |w|
    out_bias0_max: float  # max |b_o| of layer 0
    l2: np.ndarray  # (L, 3, 3H + 3) ``double_double.layer_norms`` (rows WN_*; inf in layer 0)
    readout_l2: float  # |w|_2


# columns of ExhaustiveLayer0.lo_bound[i, slot, h, :]: bounds valid for every string
LB_E_NUM, LB_E_DEN, LB_A_MAX, LB_E_G, LB_G_MAX = range(5)
LB_COLS = 5
# columns of ExhaustiveLayer0.g0_bound[t, i, :] and of c0_bound[:]
BD_MAX, BD_RAD = range(2)  # max |value| + max radius, max radius
# query-token slots of the low tables: slot 1 is token 1; slot 0 is token 0 (eos at the eos
# position)
SLOTS = 2


class ExhaustiveLayer0(NamedTuple):
    """Layer-0 tables of the exhaustive kernel (``verify.model.exhaustive.exhaustive_pass``; its
    module doc derives the bounds). M = W_1 diag(gain) P (P centres; the norm in front of the
    MLP)."""

    y0_mid: np.ndarray  # (3, s, d) embeddings (pre-LN: as they enter the residual stream)
    y0_rad: np.ndarray  # (3, s) max radius over components
    exp_scores: np.ndarray  # (3, s, 3, s, H) exp(q k / sqrt(d_h) - shift), 0 where invalid
    values_out: np.ndarray  # (3, s, H, d) values through out_proj
    mlp_values: np.ndarray  # (3, s, H, f) M values_out
    g0: np.ndarray  # (3, s, f) M (y0 + b_o)
    g0_bound: np.ndarray  # (3, s, 2) [BD_MAX, BD_RAD]
    c0: np.ndarray  # (f,) W_1 bias + b_1
    c0_bound: np.ndarray  # (2,) [BD_MAX, BD_RAD]
    lo_sums: np.ndarray  # (s, SLOTS, H, d + 1 + f, BS) low-position sums of e V, e, e M V
    lo_bound: np.ndarray  # (s, SLOTS, H, LB_COLS)


class Diagnostics(NamedTuple):
    """What the exhaustive kernel also writes when ``on`` (``verify.model.certified.onepass``): the
    float64 midpoints of the certified pass, not certified themselves. Without ``on`` the
    arrays are not read (empty ones will do)."""

    on: bool
    var: np.ndarray  # (strings, K, s) the population variance of each norm's input, per position
    y_readout: np.ndarray  # (strings, d) the vector read out (after pre-LN's final norm)
    embed_var: np.ndarray  # (3, s) the variance of y0_mid[t, i] (pre-LN: layer 0's norm1 input)


class DoubleDoubleTables(NamedTuple):
    """What the double-double kernel needs besides ``Scalars``, ``LayerWeightsT`` and
    ``NormAffine``: the exact embeddings as DD (hi + lo) with radii, the readout as a one-row
    matrix-vector product, and 1/sqrt(d_head) as a DD with radius."""

    y0_hi: np.ndarray  # (3, s, d) embeddings (token + position, or concatenated)
    y0_lo: np.ndarray  # (3, s, d)
    y0_rad: np.ndarray  # (3, s, d)
    readout_t: np.ndarray  # (d, 1) readout weight as a column of W^T
    readout_t_abs: np.ndarray  # (d, 1)
    readout_bias: np.ndarray  # (1,)
    inv_sqrt_dh_hi: float
    inv_sqrt_dh_lo: float
    inv_sqrt_dh_rad: float


def bundle_type(cls: type, *field_types: types.Type) -> types.Type:
    """The Numba type of a ``cls`` instance whose fields have these types."""
    assert len(field_types) == len(cls._fields), cls
    return BaseTuple.from_types(field_types, cls)


SCALARS = bundle_type(Scalars, b1, b1, b1, i8, f8, f8, f8, f8, b1)
NORM_AFFINE = bundle_type(NormAffine, A2, A2)
READOUT = bundle_type(Readout, A1, A1)
LAYER0_TABLES = bundle_type(Layer0Tables, A3, A3, A5, A5, A4, A4)
LAYER_WEIGHTS_T = bundle_type(LayerWeightsT, A3, A3, A2, A3, A3, A2, A3, A3, A2, A3, A3, A2)
LAYER_WEIGHTS = bundle_type(LayerWeights, A3, A2, A3, A2, A3, A2, A3, A2, A3, A1)
WEIGHT_BOUNDS = bundle_type(WeightBounds, A3, A2, A2, f8, f8, A3, f8)
DOUBLE_DOUBLE_TABLES = bundle_type(DoubleDoubleTables, A3, A3, A3, A2, A2, A1, f8, f8, f8)
DIAGNOSTICS = bundle_type(Diagnostics, b1, A3, A2, A2)
EXHAUSTIVE_LAYER0 = bundle_type(ExhaustiveLayer0, A3, A2, A5, A4, A4, A3, A3, A1, A1, A5, A4)


def f64(a: object) -> np.ndarray:
    """``a`` as a C-contiguous, writable float64 array, copied only when it is not one already
    (Numba types a read-only array differently from the signatures' arrays)."""
    return np.require(a, dtype=np.float64, requirements=["C", "W"])
