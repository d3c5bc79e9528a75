"""Rigorous enclosures of the transformer's output and layer-norm input variances with
python-flint arb balls (the algorithm of ``verify.model.generic.reference`` in the arb context).

Parameters may be balls: ``radius`` (a scalar for every entry, a dict name -> radius, or a
flat (M,) vector in theta's order) encloses the whole parameter cube
{theta : |theta_i - params_i| <= radius_i}. The enclosures then hold for every parameter vector
in the cube. At eps = 0 a variance enclosure that is not bounded away from 0 makes the layer norm
"unbounded or undefined": its output and T are NaN balls (never a number).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from flint import arb

from verify.model.arithmetic.contexts import ArbContext, arb_precision
from verify.model.generic.reference import run_generic
from verify.model.spec.params import Params
from verify.validation import check_int


def _lower(x: arb) -> float:
    """A float64 <= every point of the ball (-inf for NaN or unbounded balls)."""
    if not x.is_finite():
        return -np.inf
    v = float(x.lower())
    while not arb(v) <= x:  # arb comparison: true only if v <= every point of the ball
        v = float(np.nextafter(v, -np.inf))
    return v


def _upper(x: arb) -> float:
    """A float64 >= every point of the ball (+inf for NaN or unbounded balls)."""
    if not x.is_finite():
        return np.inf
    v = float(x.upper())
    while not arb(v) >= x:
        v = float(np.nextafter(v, np.inf))
    return v


@dataclass
class Enclosure:
    """arb enclosures for B strings: ``T`` (B,) and ``var`` (B, K, S) object arrays of arb.

    ``T_lower``/``T_upper`` and ``var_lower``/``var_upper`` are float64 bounds rounded
    outward (NaN balls give -inf / +inf). ``var_positive`` (B, K, S) says the variance (plus
    eps) is proven > 0, so z is finite; where it is False at eps = 0, z is not bounded.
    """

    T: np.ndarray
    var: np.ndarray
    prec: int
    eps: float

    @property
    def T_lower(self) -> np.ndarray:
        return np.array([_lower(t) for t in self.T])

    @property
    def T_upper(self) -> np.ndarray:
        return np.array([_upper(t) for t in self.T])

    @property
    def var_lower(self) -> np.ndarray:
        return np.vectorize(_lower, otypes=[np.float64])(self.var)

    @property
    def var_upper(self) -> np.ndarray:
        return np.vectorize(_upper, otypes=[np.float64])(self.var)

    @property
    def var_positive(self) -> np.ndarray:
        eps = arb(self.eps)
        return np.vectorize(lambda v: bool(v + eps > 0), otypes=[bool])(self.var)

    def z_upper(self) -> np.ndarray:
        """(B, K, S) float64 upper bounds of z = 1/sqrt(var + eps) (inf where unbounded)."""
        low = self.var_lower + self.eps
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(low > 0, 1.0 / np.sqrt(low), np.inf)
        return np.nextafter(np.nextafter(z, np.inf), np.inf)  # sqrt, division: 1 ulp each


def enclose(
    params: Params,
    bits: object,
    *,
    prec: int = 128,
    radius: float | Mapping[str, object] | np.ndarray | None = None,
) -> Enclosure:
    """Enclose T(x) and every layer-norm input variance for each string of ``bits`` (B, N),
    for the exact stored parameters or (with ``radius``) every parameter in the cube."""
    prec = check_int("prec", prec, minimum=53, maximum=100000)
    res = run_generic(ArbContext(prec), params, bits, radius=radius)
    with arb_precision(prec):
        var = np.stack(res.var, axis=1)
    return Enclosure(
        T=np.asarray(res.T, dtype=object), var=var, prec=prec, eps=params.config.ln_eps
    )


def enclose_output(
    params: Params,
    bits: object,
    *,
    prec: int = 128,
    radius: float | Mapping[str, object] | np.ndarray | None = None,
) -> np.ndarray:
    """Only T (B,) as arb balls, computing the last layer at the readout position only."""
    prec = check_int("prec", prec, minimum=53, maximum=100000)
    return np.asarray(
        run_generic(ArbContext(prec), params, bits, radius=radius, readout_only=True).T,
        dtype=object,
    )
