"""Coded functions with branches, run on symbols once per path (symbolic execution).

The code of ``verify.theory`` on sympy symbols (:func:`verify.proofs.symbolic.symbolic`) meets
a branch whenever Python asks for the truth of a relation sympy cannot decide (``if gap > 0``,
``a and b``): sympy raises ``TypeError``. :func:`paths` runs the code once per path instead:
each undecided relation the run meets is a fork, taken true on one run and false on another
(the same relation met twice on a run gets the same answer), until every combination the code
can reach is run. Each :class:`Path` holds the relations as they held on it (its *path
condition*) and the value the code returned there. A chain then proves, path by path, that
the path condition implies value = composition; together the paths cover every point of the
domain, since at each point every relation is true or false.

An infeasible path (a condition no point satisfies) needs no proof; more paths, or more
relations on one path, than the limit (a loop over a symbolic bound) are refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy.core.relational import Relational

__all__ = ["Path", "PathLimitError", "paths"]


@dataclass(frozen=True)
class Path:
    """One path: the relations as they held on it, and the value returned there."""

    conditions: tuple[sp.Basic, ...]
    value: Any


class PathLimitError(RuntimeError):
    """More paths than the limit: the code branches on something unbounded."""


@contextlib.contextmanager
def _forking(decide: Callable[[Relational], bool]) -> Iterator[None]:
    saved = Relational.__bool__
    Relational.__bool__ = lambda self: decide(self)  # type: ignore[method-assign]
    try:
        yield
    finally:
        Relational.__bool__ = saved  # type: ignore[method-assign]


def paths(run: Callable[[], Any], limit: int = 64) -> list[Path]:
    """Every path of ``run()`` (a call of symbolic code): depth first, true before false; at
    most ``limit`` paths, each meeting at most ``limit`` undecided relations."""
    out: list[Path] = []
    todo: list[tuple[bool, ...]] = [()]
    while todo:
        prefix = todo.pop()
        taken: list[tuple[Relational, bool]] = []

        def decide(rel: Relational, prefix: tuple[bool, ...] = prefix, taken=taken) -> bool:
            for seen, value in taken:
                if seen == rel:
                    return value
            i = len(taken)
            if i >= limit:
                raise PathLimitError(f"more than {limit} undecided relations on one path")
            if i < len(prefix):
                value = prefix[i]
            else:
                todo.append((*(v for _, v in taken), False))
                value = True
            taken.append((rel, value))
            return value

        with _forking(decide):
            value = run()
        out.append(Path(tuple(r if v else r.negated for r, v in taken), value))
        if len(out) > limit:
            raise PathLimitError(f"more than {limit} paths")
    return out
