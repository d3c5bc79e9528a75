"""Probabilities and fractions are checked where they are computed: a value outside [0, 1] (or
NaN) is a bug in the computation, never something to clip (a "certified fraction" of 2.125 once
passed every assertion downstream)."""

from __future__ import annotations

import math

__all__ = ["ProbabilityError", "checked_probability"]


class ProbabilityError(ArithmeticError):
    """A computed probability or fraction outside [0, 1]."""


def checked_probability(name: str, value: float) -> float:
    """``value`` as a float if 0 <= value <= 1; otherwise raise :class:`ProbabilityError`
    naming ``name`` (NaN included)."""
    v = float(value)
    if math.isnan(v) or not 0.0 <= v <= 1.0:
        raise ProbabilityError(f"{name}: a probability must lie in [0, 1], computed {v!r}")
    return v
