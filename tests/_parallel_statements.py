"""A statement for tests/test_report_parallel.py (imported with ``--import _parallel_statements``,
so only in the subprocesses that run it and their workers).

"Parallel 1" has a check whose rows are seeded random draws (so a worker that ran it with
another seed, or dropped a row, shows in a row-by-row comparison), a check that raises on
whatever process runs it, a check that draws a figure, and one that draws a figure of the same
name and one that cannot be drawn.
"""

from __future__ import annotations

import numpy as np

from verify.registry import CheckContext, FigureData, Outcome, Row, define_statement

_stmt = define_statement(
    id="Parallel 1",
    title="A statement for parallel report runs",
    statement=r"$u^2 \le u$ for $u \in [0, 1]$ (a test statement).",
    confidence="[inferred]",
)


@_stmt.check("seeded draws")
def _seeded(ctx: CheckContext) -> Outcome:
    u = np.random.default_rng(ctx.seed).random(6)
    return Outcome([Row(f"u={x:.6f}", float(x * x), float(x)) for x in u])


@_stmt.check("raises")
def _raises(ctx: CheckContext) -> Outcome:
    raise RuntimeError(f"deliberate failure of a check (seed {ctx.seed})")


@_stmt.check("draws")
def _draws(ctx: CheckContext) -> Outcome:
    xs = [i / 8 for i in range(1, 9)]
    fig = FigureData(
        name="parallel_square",
        title="u^2 against u",
        kind="lines",
        data={"series": [{"label": "u^2", "x": xs, "y": [x * x for x in xs]}]},
    )
    return Outcome([Row(f"u={x}", x * x, x) for x in xs], figures=[fig])


@_stmt.check("draws again, and a figure that cannot be drawn")
def _draws_again(ctx: CheckContext) -> Outcome:
    """A figure of the same name as "draws"' (the report names it parallel_square_2, after the
    first in the report's order, whichever is drawn first) and one whose drawing raises."""
    xs = [i / 4 for i in range(1, 5)]
    again = FigureData(
        name="parallel_square",
        title="u^3 against u",
        kind="lines",
        data={"series": [{"label": "u^3", "x": xs, "y": [x**3 for x in xs]}]},
    )
    broken = FigureData(name="parallel_broken", title="no such kind", kind="nonsense", data={})
    return Outcome([Row("u=1", 1.0, 1.0)], figures=[again, broken])


# "shared draws, first/second" share an in-process result (Check.shares): a parallel report
# runs them in one worker, one after another, so the second finds the first's draws, as in a
# serial run (its row says whether it computed them itself)
_SHARED: dict[int, np.ndarray] = {}
SHARES = "parallel shared draws"


def _shared_draws(seed: int) -> tuple[np.ndarray, bool]:
    fresh = seed not in _SHARED
    if fresh:
        _SHARED[seed] = np.random.default_rng(seed + 1).random(3)
    return _SHARED[seed], fresh


@_stmt.check("shared draws, first", shares=SHARES)
def _shared_first(ctx: CheckContext) -> Outcome:
    u, fresh = _shared_draws(ctx.seed)
    return Outcome([Row("drew them here", float(fresh), 1.0), Row("sum", float(u.sum()), 3.0)])


@_stmt.check("shared draws, second", shares=SHARES)
def _shared_second(ctx: CheckContext) -> Outcome:
    u, fresh = _shared_draws(ctx.seed)
    return Outcome([Row("drew them here", float(fresh), 1.0), Row("max", float(u.max()), 1.0)])
