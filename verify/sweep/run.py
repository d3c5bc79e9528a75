"""Run the cells of a grid on an executor, appending each record as it finishes."""

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import functools
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.sweep.cells import RUNNERS, CellRunner, execute_cell
from verify.sweep.executors import ExecutorHandle, executor_slots, local_executor, stop_executor
from verify.sweep.grid import KINDS, SweepGrid, cell_key
from verify.sweep.results import ResultsFile
from verify.validation import check_choice, check_int


# --------------------------------------------------------------------------------- running
@dataclass
class SweepSummary:
    """What one :func:`run_sweep` call did."""

    path: Path
    n_cells: int
    n_skipped: int  # finished before this call (resumed)
    n_run: int  # finished in this call
    n_errors: int  # error records written in this call
    runtime_s: float
    torn_bytes: int = 0  # bytes of a torn last line dropped on opening
    records: list[dict[str, Any]] = field(default_factory=list)


def _unique_cells(cells: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for c in cells:
        if not isinstance(c, Mapping):
            raise ValidationError("cells", "dicts of JSON values", type(c).__name__)
        k = cell_key(c)
        if k not in seen:
            seen.add(k)
            out.append(dict(c))
    return out


def run_sweep(
    cells: Iterable[Mapping[str, Any]],
    results: str | os.PathLike[str],
    *,
    runner: CellRunner | None = None,
    executor: cf.Executor | None = None,
    max_workers: int | None = None,
    max_in_flight: int | None = None,
    progress: bool = True,
    numba_threads: int | None = None,
) -> SweepSummary:
    """Run every cell not yet finished in ``results`` and append each record as it completes.

    ``runner``: a picklable ``cell -> dict`` (default: by each cell's ``kind``, see RUNNERS).
    ``executor``: any concurrent.futures-compatible executor (default: :func:`local_executor`
    with ``max_workers``, default os.cpu_count()), an :class:`ExecutorHandle`
    (:func:`open_executor`), or an object with ``get_executor()`` (a dask.distributed
    ``Client``), which is asked for its concurrent.futures executor. At most ``max_in_flight``
    cells are submitted at once (default: twice the executor's worker slots, see
    :func:`executor_slots`), so a kill loses at most those in flight (they rerun). Each cell
    runs with ``numba_threads`` Numba threads (default 1 when several cells run at once).
    Cells whose latest record is an error are retried. A :class:`SweepGrid` as ``cells`` is
    streamed (its cells are made one at a time, never listed). Interrupted (KeyboardInterrupt,
    or SIGTERM turned into one by the caller), the running cells are stopped at once (their
    worker processes ended when the executor is local) and the finished ones are already in
    ``results``.
    """
    from tqdm.auto import tqdm

    if isinstance(cells, SweepGrid):
        grid: SweepGrid | None = cells
        n_all = cells.n_cells
        stream: Iterable[dict[str, Any]] = cells.iter_cells()
    else:
        grid = None
        all_cells = _unique_cells(cells)
        n_all, stream = len(all_cells), all_cells
    if max_workers is not None:
        check_int("max_workers", max_workers, minimum=1)
    if isinstance(executor, ExecutorHandle):
        slots, executor = executor.slots, executor.executor
    elif executor is not None:
        slots = executor_slots(executor)
    else:
        slots = max_workers or os.cpu_count() or 1
    workers = max_workers or os.cpu_count() or 1
    in_flight = check_int("max_in_flight", max_in_flight or 2 * slots, minimum=1)
    if numba_threads is None and (executor is not None or workers > 1):
        numba_threads = 1
    start = time.perf_counter()
    with ResultsFile(results) as rf:
        ok = {r["key"]: r.get("cell") for r in rf.records if r.get("status") == "ok"}
        if grid is not None:
            n_skipped = sum(1 for c in ok.values() if isinstance(c, Mapping) and grid.contains(c))
        else:
            n_skipped = sum(cell_key(c) in ok for c in all_cells)
        n_todo = n_all - n_skipped
        todo = (c for c in stream if cell_key(c) not in ok)
        summary = SweepSummary(
            path=rf.path,
            n_cells=n_all,
            n_skipped=n_skipped,
            n_run=0,
            n_errors=0,
            runtime_s=0.0,
            torn_bytes=rf.dropped,
        )
        own = executor is None and n_todo > 0
        ex = local_executor(workers) if own else executor
        if ex is not None and hasattr(ex, "get_executor"):  # a dask.distributed Client
            ex = ex.get_executor()
        bar = tqdm(total=n_todo, desc="cells", unit="cell", disable=not progress)
        stopped = False
        pending: set[cf.Future] = set()
        try:
            it: Iterator[dict[str, Any]] = todo
            while True:
                while len(pending) < in_flight:
                    cell = next(it, None)
                    if cell is None:
                        break
                    fn = runner or RUNNERS[check_choice("kind", cell.get("kind"), KINDS)]
                    task = functools.partial(execute_cell, fn, numba_threads=numba_threads)
                    pending.add(ex.submit(task, cell))
                if not pending:
                    break
                finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    rec = fut.result()
                    rec["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
                    rf.append(rec)
                    summary.records.append(rec)
                    summary.n_run += 1
                    summary.n_errors += rec["status"] == "error"
                    bar.update(1)
        except BaseException:  # interrupted: the running cells stop now, not when they finish
            stopped = True
            for fut in pending:
                fut.cancel()
            if ex is not None:
                stop_executor(ex)
            raise
        finally:
            bar.close()
            if own and not stopped:
                ex.shutdown(wait=True, cancel_futures=True)
    summary.runtime_s = time.perf_counter() - start
    return summary
