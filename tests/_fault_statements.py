"""A statement for tests/test_faults.py (imported with ``--import _fault_statements``).

"Fault 1" has CHECKS checks; each waits FAULT_CHECK_SECONDS (environment, default 0.25), draws
one figure and, once finished, appends its name to the file FAULT_LOG (when set), so the test
knows which checks finished before it sent its signal.
"""

from __future__ import annotations

import os
import time

from verify.registry import CheckContext, FigureData, Outcome, Row, define_statement

CHECKS = 8

_stmt = define_statement(
    id="Fault 1",
    title="A statement for fault injection",
    statement=r"$x^2 \le x$ on $[0, 1]$ (a test statement).",
    confidence="[inferred]",
)


def _make(k: int) -> None:
    name = f"check {k}"

    @_stmt.check(name)
    def _check(ctx: CheckContext) -> Outcome:
        time.sleep(float(os.environ.get("FAULT_CHECK_SECONDS", "0.25")))
        xs = [i / 10 for i in range(1, 11)]
        fig = FigureData(
            name=f"fault_{k}",
            title=f"check {k}",
            kind="lines",
            data={"series": [{"label": "x^2", "x": xs, "y": [x * x for x in xs]}]},
        )
        out = Outcome([Row(f"x={x:.1f}", x * x, x) for x in xs], figures=[fig])
        log = os.environ.get("FAULT_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(name + "\n")
        return out


for _k in range(CHECKS):
    _make(_k)
