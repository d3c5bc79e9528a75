"""Figures drawn while the checks run (verify.report.drawing.EarlyFigures): moved to the names a
drawing at the end gives, the same bytes; a figure whose early drawing was cancelled or whose
pool was stopped is drawn at the end instead; a drawing error is recorded as one."""

from __future__ import annotations

import concurrent.futures as cf
from pathlib import Path

from verify.registry import CheckResult, FigureData, Statement, Status
from verify.report.drawing import EarlyFigures, draw_figures
from verify.report.figures import draw_figure_files
from verify.report.runner import CheckOutcome, StatementOutcome


def _fig(name: str, power: int) -> FigureData:
    xs = [i / 4 for i in range(1, 5)]
    data = {"series": [{"label": f"u^{power}", "x": xs, "y": [x**power for x in xs]}]}
    return FigureData(name=name, title=f"u^{power}", kind="lines", data=data)


def _outcome(check: str, figs: list[FigureData]) -> CheckOutcome:
    result = CheckResult("S 1", check, Status.HOLDS, figures=figs)
    return CheckOutcome(statement_id="S 1", check_name=check, slow=False, result=result)


class _Pool:
    """Runs each drawing at once in this process, or hands back a future that failed as a
    stopped pool's does (``broken``), or a cancelled one (``cancelled``)."""

    def __init__(self, broken: set[int] = frozenset(), cancelled: set[int] = frozenset()):
        self.broken, self.cancelled, self.calls = broken, cancelled, 0

    def submit(self, fn, *args, **kwargs) -> cf.Future:
        fut: cf.Future = cf.Future()
        i, self.calls = self.calls, self.calls + 1
        if i in self.cancelled:
            fut.cancel()
        elif i in self.broken:
            fut.set_exception(cf.BrokenExecutor("worker stopped"))
        else:
            try:
                fut.set_result(fn(*args, **kwargs))
            except Exception as exc:
                fut.set_exception(exc)
        return fut


def _statement_outcome(checks: list[CheckOutcome]) -> StatementOutcome:
    stmt = Statement(id="S 1", title="t", statement="s", confidence="[inferred]")
    return StatementOutcome(statement=stmt, checks=checks)


def test_early_figures_are_moved_drawn_again_or_recorded(tmp_path: Path) -> None:
    bad = FigureData(name="bad", title="no such kind", kind="nonsense", data={})
    checks = [
        _outcome("a", [_fig("sq", 2), _fig("sq", 3)]),  # the same name twice: sq, sq_2
        _outcome("b", [_fig("cube", 3), bad, _fig("quad", 4)]),
    ]
    early = EarlyFigures(_Pool(broken={2}, cancelled={4}))
    for c in reversed(checks):  # finished in the other order
        early.submit(c)
    entries, _, _ = draw_figures([_statement_outcome(checks)], tmp_path / "out", early=early)
    early.discard()
    assert not early.folder.exists()
    a, b = entries["S 1", "a"], entries["S 1", "b"]
    assert [e["file"] for e in a] == ["figures/sq.png", "figures/sq_2.png"]
    assert [e["file"] for e in b] == ["figures/cube.png", None, "figures/quad.png"]
    assert "nonsense" in b[1]["error"]
    # every file is the one a direct drawing under its report name gives
    for fig, entry in [(checks[0].result.figures[0], a[0]), (checks[0].result.figures[1], a[1])]:
        ref = draw_figure_files(fig, tmp_path / "ref" / Path(entry["file"]).name)
        for path in ref:
            got = tmp_path / "out" / "figures" / path.name
            assert got.read_bytes() == path.read_bytes(), path.name
    for e in (a[1], b[2]):  # cancelled, and failed as a stopped pool's: drawn at the end
        assert (tmp_path / "out" / e["file"]).is_file()
    names = sorted(p.name for p in (tmp_path / "out" / "figures").iterdir())
    assert names == sorted(
        f"{n}{s}" for n in ("sq", "sq_2", "cube", "quad") for s in (".png", ".data.csv")
    )


def test_a_pool_that_no_longer_takes_work_leaves_the_figures_to_the_end(tmp_path: Path) -> None:
    """A broken pool raises on submit: the check's outcome still counts (no exception out of
    the callback), and its figures are drawn at the end, under their report names."""

    class _Broken:
        def submit(self, *args, **kwargs):
            raise cf.BrokenExecutor("a worker died")

    checks = [_outcome("a", [_fig("sq", 2), _fig("cube", 3)])]
    early = EarlyFigures(_Broken())
    early.submit(checks[0])
    assert early.futures == {}
    entries, _, _ = draw_figures([_statement_outcome(checks)], tmp_path / "out", early=early)
    early.discard()
    assert [e["file"] for e in entries["S 1", "a"]] == ["figures/sq.png", "figures/cube.png"]
