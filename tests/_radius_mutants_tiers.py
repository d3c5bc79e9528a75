"""Radius mutants of the tiers issue 41 covers (the double-double tier, the exhaustive kernel's
layers 1..L-1 and its layer-0 to 2-norm transition, the sub-cube bounds), and the Python bodies
of the register intrinsics the exhaustive kernel calls at L >= 2 (``dots_rows``, ``mix_rows``,
``dist2_rows``, ``norms_rows``, ``simd.rows*``), so that it runs without the JIT in the mutation
suite.

``MUTANTS`` holds (name, what, edits) triples; ``tests/_radius_mutants.py`` appends them to its
own list (``Mutant(*m)``). Each is killed by a containment or reference test of
``tests/test_radius_l2_tiers.py`` (named in ``KILLED_BY`` for the report), never by a count of
which tier settled what (the harness reruns a mutant killed by a ``tier_count`` test without
those tests: ``tests/test_radius_mutations.py``).
"""

from __future__ import annotations

import numpy as np

K = "verify.model.kernels."


def _dots_rows(a, x, init, out) -> None:
    """out[j, b] = init[b] + sum_k a[k, b] x[j, k, b], sequential over k."""
    for j in range(x.shape[0]):
        acc = init.copy()
        for k in range(x.shape[1]):
            acc = acc + a[k] * x[j, k]
        out[j] = acc


def _mix_rows(p, x, out) -> None:
    """out[k, b] = 0 + sum_j p[j, b] x[j, k, b], sequential over j."""
    for k in range(x.shape[1]):
        acc = np.zeros(x.shape[2])
        for j in range(x.shape[0]):
            acc = acc + p[j] * x[j, k]
        out[k] = acc


def _dist2_rows(x, m, out) -> None:
    """out[j, b] = 0 + sum_k (x[j, k, b] - m[k, b])^2, sequential over k."""
    for j in range(x.shape[0]):
        acc = np.zeros(x.shape[2])
        for k in range(x.shape[1]):
            dx = x[j, k] - m[k]
            acc = acc + dx * dx
        out[j] = acc


def _norms_rows(x, sq, amax) -> None:
    """sq[j, b] = 0 + sum_k (|x[j, k, b]| + 0)^2, amax[j, b] = max_k |x[j, k, b]| (NaN
    skipped), sequential over k."""
    for j in range(x.shape[0]):
        acc = np.zeros(x.shape[2])
        mx = np.zeros(x.shape[2])
        for k in range(x.shape[1]):
            ax = np.abs(x[j, k])
            mx = np.where(ax > mx, ax, mx)
            t = ax + 0.0
            acc = acc + t * t
        sq[j] = acc
        amax[j] = mx


def _rows(n_rows: int):
    """``simd.rows<n_rows>`` in numpy: out[jo + r] = bias[jw + r] + sum_k W[jw + r, k] x[k]
    (without FMA: within the same rounding bound, which holds for any order)."""

    def rows(x, w, bias, jw, out, jo) -> None:
        for r in range(n_rows):
            acc = np.full(x.shape[1], bias[jw + r])
            for k in range(x.shape[0]):
                acc = w[k, jw + r] * x[k] + acc
            out[jo + r] = acc

    return rows


INTRINSICS = {
    **{f"rows{n}": _rows(n) for n in (16, 8, 4, 1)},
    "dots_rows": _dots_rows,
    "mix_rows": _mix_rows,
    "dist2_rows": _dist2_rows,
    "norms_rows": _norms_rows,
}

MUTANTS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = ()
