"""Shared pieces of the axioms' attacks (:mod:`verify.proofs.axioms`): the relative violation
of an inequality, and random magnitudes, vectors and events to draw instances from."""

from __future__ import annotations

import numpy as np

__all__ = ["violation", "worst_of"]


def violation(lhs, rhs, equality: bool = False) -> np.ndarray:
    """Relative violation of lhs <= rhs (of lhs = rhs with ``equality``): > 0 when violated."""
    lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
    gap = np.abs(lhs - rhs) if equality else lhs - rhs
    out = gap / (1 + np.abs(lhs) + np.abs(rhs))
    return np.where(np.isfinite(out), out, np.inf)


def _scale(rng: np.random.Generator, n: int) -> np.ndarray:
    return 10 ** rng.uniform(-3, 3, n)


def _vectors(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.standard_normal((n, d)) * _scale(rng, n)[:, None]


def _events(rng: np.random.Generator, n: int, atoms: int, k: int):
    p = rng.dirichlet(np.ones(atoms) * rng.uniform(0.2, 2), n)
    ev = rng.random((n, k, atoms)) < rng.uniform(0, 1, (n, k, 1))
    return p, ev


def worst_of(v, n: int) -> np.ndarray:
    """Per draw, the largest of the violations of its blocks (k blocks of n, concatenated)."""
    return np.asarray(v, dtype=float).reshape(-1, n).max(0)
