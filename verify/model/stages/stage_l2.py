"""Float64 stages with one 2-norm radius per vector and string (the exhaustive kernel's layers
1..L-1): |x_exact - x|_2 <= rho for the exact input gives |f(x_exact) - computed|_2 <= Lip(f)
rho + sqrt(n) r0, with Lip the stage's Lipschitz constant (a spectral norm bounded with arb,
the layer norm's constant on the ball from ``dd_l2.layer_norm_lipschitz``) and r0 the stage's
own scalar rounding bound at the computed midpoint (the scalar rules of ``stages.dense`` and
``stages.layer_norm`` called with zero input radius; n outputs: |e|_2 <= sqrt(n) max|e_k|).
Blocks of exactly ``BS`` strings.
"""

from __future__ import annotations

import math

from numba import types

from verify._numba import kernel
from verify.model.arithmetic.rounding import U
from verify.model.stages.bundles import A1, A2, BS, b1, f8, i8
from verify.model.stages.dense import matvec_scalar
from verify.model.stages.l2_bounds import lipschitz_from_sums
from verify.model.stages.layer_norm import layer_norm_scalar
from verify.model.stages.register_sums import LS_CSUM, LS_SC, LS_SS


@kernel(types.void(A1, A1, f8, A1, f8, A1))
def to_l2(r_data, lip, k, r_round, sq, rho):  # pragma: no cover - jitted
    """rho <- (lip k r_data + sq r_round)(1 + 4U), per string: a 2-norm radius from a 2-norm
    input radius through a stage of Lipschitz constant lip[b] k, plus a componentwise
    (infinity-norm) rounding bound of sq^2 components. rho may alias r_data or lip."""
    for b in range(BS):
        rho[b] = (lip[b] * k * r_data[b] + sq * r_round[b]) * (1 + 4 * U)


@kernel(types.void(A2, A1, A2, A1, i8, i8, f8, f8, f8, A2, A1, A1, A1, A1, b1))
def matvec_l2(
    x, rx, wt, bias, r0, r1, wnorm, bnorm, spec, out, rout, xmax, zero, one, bounds
):  # pragma: no cover - jitted
    """out = W x + b for the rows r0..r1-1 of W, given as wt = W^T (``matvec_mid``); with bounds,
    rout >= |exact - out|_2 given |x_exact - x|_2 <= rx: spec rx + sqrt(rows) r0, spec >= the rows'
    spectral norm, r0 the scalar rounding bound at x (wnorm, bnorm: the rows' infinity norm and max
    |bias|). rout must not alias rx. zero, one: (BS,) arrays of zeros and ones."""
    matvec_scalar(x, zero, wt, bias, r0, r1, wnorm, bnorm, out, rout, xmax, bounds)
    if bounds:
        to_l2(rx, one, spec, rout, math.sqrt(r1 - r0) * (1 + 2 * U), rout)


@kernel(types.void(A2, A1, A1, A1, f8, f8, f8, b1, A2, A1, A2, A2, A1, b1))
def layer_norm_l2(
    v, rv, gain, bias, gmax, bmax, eps, annotated, out, rout, ls, zero, lip, bounds
):  # pragma: no cover - jitted
    """out = gain (v - mean) z + bias (``layer_norm_scalar``, z of the form); with bounds,
    rout >= |exact - out|_2 given |v_exact - v|_2 <= rv: Lip rv + sqrt(d) r0 with Lip the
    2-norm Lipschitz constant on the ball (gmax >= max|gain|) and r0 the scalar rounding bound
    at v. out must not be v, rout not rv. zero: a (d, BS) array of zeros; lip: scratch (BS,).
    Lip is ``dd_l2.layer_norm_lipschitz`` at (v, 0), from the sums ``layer_norm_scalar`` leaves
    in ls (the same sums, in the same order)."""
    layer_norm_scalar(v, zero[0], gain, bias, gmax, bmax, eps, annotated, out, rout, ls, bounds)
    if bounds:
        d = v.shape[0]
        for b in range(BS):
            # the rule's sum of |c_i| + |c_i + 0| is 2 sum |c_i|, exactly (``ln_block``)
            lip[b] = lipschitz_from_sums(
                ls[LS_SS, b], 2.0 * ls[LS_CSUM, b], ls[LS_SC, b], rv[b], d, eps, annotated, gmax
            )
        to_l2(rv, lip, 1.0, rout, math.sqrt(v.shape[0]) * (1 + 2 * U), rout)
