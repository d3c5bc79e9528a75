"""The float64 rounding model of every rigorous float64 pass, written once.

Used by the numpy midpoint-radius arithmetic (:mod:`verify.model.arithmetic.contexts`), the table
builders (:mod:`verify.model.per_string.per_string_pass`,
:mod:`verify.model.exhaustive.exhaustive_pass`) and the Numba kernels (``verify.model.stages`` and
each tier's). Round to nearest (IEEE binary64) is assumed for + - * / and sqrt; libm's exp and expm1
are trusted to a relative ``EXP_ULPS * U`` (at least 8 ulps).

- ``U`` = 2^-52 is twice the unit roundoff u = 2^-53: with it, gamma_n = n u / (1 - n u) <=
  n U for n u <= 1/2 (any n used here), so "(n + 2) U" style constants absorb the 1 / (1 - n u)
  factors.
- ``ETA`` is the absolute slack added to every radius: it covers underflow (each product that
  underflows loses at most 2^-1074 < ETA).
- ``EXP_ULPS``: relative error allowed for exp / expm1, in units of U (8 U: 8 to 16 ulps;
  glibc's are within 1 ulp, ``tests/test_radius_constants.py`` measures them).
- ``TINY`` (>= 16 subnormal ulps) bounds exp(a) when fl(exp(a)) underflows to 0.

Within the Numba kernels these names are compile-time constants (Numba freezes module globals).
"""

from __future__ import annotations

import numpy as np

U = 2.0**-52
ETA = 1e-300
EXP_ULPS = 8.0
TINY = 1e-322


def up(r: np.ndarray | float, n_terms: int = 1) -> np.ndarray:
    """Inflate a non-negative radius computed in round-to-nearest from n_terms non-negative
    terms so that it is an upper bound of the exact radius: r (1 + (n_terms + 3) U) + ETA."""
    return np.asarray(r) * (1.0 + (n_terms + 3) * U) + ETA


def sum_upper(x: np.ndarray | float, n_terms: int) -> np.ndarray:
    """An upper bound of a non-negative sum of n_terms float64 terms computed in float64 (in
    any order), with room for one more rounded operation: x (1 + 2 (n_terms + 2) U) + ETA."""
    return np.asarray(x, dtype=np.float64) * (1.0 + 2 * (n_terms + 2) * U) + ETA
