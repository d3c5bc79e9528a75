"""Resumable parameter sweeps: grids of cells, run in parallel, appended as they finish.

A *cell* is a plain dict of JSON values (kind, init scheme, D, L, eps, N, seed, ...). A *cell
runner* is a plain top-level function ``runner(cell: dict) -> dict`` (so it pickles): the default
:func:`transformer_cell` draws a random transformer and measures the sensitivity profile of its
certified truth table; :func:`random_function_cell` gives the uniformly-random-function baseline.

A :class:`SweepGrid` is streamed: its cells are made one at a time (``iter_cells``), its seeds
are ranges (:class:`Seeds`), so ``--seeds 0:1000000000`` costs no memory (the command line
refuses such a grid before any work unless ``--allow-large``: verify.sizes). Worker processes
of the local pool end with the process that made it, however it ends.

:func:`run_sweep` submits the cells to any ``concurrent.futures``-compatible executor (default: a
local ``ProcessPoolExecutor``) and appends one JSON line per finished cell to the results file,
flushed and fsync'ed at once. Killed and restarted with the same file, it skips every finished
cell and runs the rest: no cell is lost, none redone. A line cut short by the kill is dropped
(and truncated from the file) on restart; that cell simply runs again. A second sweep on the
same file while one runs is refused (an flock on ``<results>.lock``, released when the first
process ends, however it ends).

Executors (:func:`open_executor`, the CLI's ``--executor``): ``local`` (the default: a process
pool, ``-j`` workers), ``dask`` (a dask.distributed LocalCluster), ``dask://HOST:PORT`` (a
running dask scheduler, e.g. started by dask-jobqueue on Slurm), ``ray`` or ``ray://HOST:PORT``
(through :class:`RayExecutor`, a concurrent.futures adapter). Any other concurrent.futures
executor, or a dask ``Client``, can be passed to :func:`run_sweep` directly. On every executor
each cell runs with one Numba thread (the executor supplies the parallelism), the number of
cells in flight is twice the executor's worker slots, and only the process calling
:func:`run_sweep` writes the results file. See docs/clusters.md.
"""

from verify.sweep.cells import (
    RUNNERS,
    CellRunner,
    execute_cell,
    limit_numba_threads,
    random_function_cell,
    transformer_cell,
)
from verify.sweep.executors import (
    EXECUTORS,
    ExecutorHandle,
    RayExecutor,
    executor_slots,
    local_executor,
    open_executor,
)
from verify.sweep.grid import KINDS, SCHEMES, Seeds, SweepGrid, cell_key
from verify.sweep.results import ResultsFile, load_results
from verify.sweep.run import SweepSummary, run_sweep
from verify.sweep.tables import (
    RESULT_COLUMNS,
    results_frame,
    results_rows,
    summarize,
    summary_rows,
    write_csv,
)

__all__ = [
    "EXECUTORS",
    "KINDS",
    "RESULT_COLUMNS",
    "RUNNERS",
    "SCHEMES",
    "CellRunner",
    "ExecutorHandle",
    "RayExecutor",
    "ResultsFile",
    "Seeds",
    "SweepGrid",
    "SweepSummary",
    "cell_key",
    "execute_cell",
    "executor_slots",
    "limit_numba_threads",
    "load_results",
    "local_executor",
    "open_executor",
    "random_function_cell",
    "results_frame",
    "results_rows",
    "run_sweep",
    "summarize",
    "summary_rows",
    "transformer_cell",
    "write_csv",
]
