"""Resumable parameter sweeps: grids of cells, run in parallel, appended as they finish.

A *cell* is a plain dict of JSON values (kind, init scheme, D, L, eps, N, seed, ...). A *cell
runner* is a plain top-level function ``runner(cell: dict) -> dict`` (so it pickles): the default
:func:`transformer_cell` draws a random transformer and measures the sensitivity profile of its
certified truth table; :func:`random_function_cell` gives the uniformly-random-function baseline.

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

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import fcntl
import functools
import itertools
import json
import math
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.report.document import jsonable
from verify.validation import check_choice, check_int, check_real

CellRunner = Callable[[dict[str, Any]], dict[str, Any]]
KINDS = ("transformer", "random_function")
SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")  # = verify.model.SCHEMES


# --------------------------------------------------------------------------------- the grid
@dataclass(frozen=True)
class SweepGrid:
    """The cartesian grid init scheme x D x L x eps x N x seeds (in that nesting order).

    ``kind="random_function"`` cells ignore the model axes: the grid is N x seeds there.
    ``n_heads``, ``scale`` and ``model`` (further ModelConfig fields, e.g.
    ``{"norm_first": True, "eos": False}``) are fixed for the whole grid.
    """

    schemes: tuple[str, ...] = ("uniform",)
    d_model: tuple[int, ...] = (16,)
    n_layers: tuple[int, ...] = (1,)
    ln_eps: tuple[float, ...] = (0.0,)
    n_bits: tuple[int, ...] = (8,)
    seeds: tuple[int, ...] = (0,)
    n_heads: int = 2
    scale: float = 1.0
    kind: str = "transformer"
    model: Mapping[str, Any] = field(default_factory=dict)  # other ModelConfig fields, fixed

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        for name, vals in (
            ("schemes", self.schemes),
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("ln_eps", self.ln_eps),
            ("n_bits", self.n_bits),
            ("seeds", self.seeds),
        ):
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not vals:
                raise ValidationError(name, "a non-empty sequence", vals)
            object.__setattr__(self, name, tuple(vals))
        for s in self.schemes:
            check_choice("schemes", s, SCHEMES)
        h = check_int("n_heads", self.n_heads, minimum=1)
        for d in self.d_model:
            check_int("d_model", d, minimum=1)
            if self.kind == "transformer" and d % h:
                raise ValidationError("d_model", f"multiples of n_heads={h}", d)
        for ell in self.n_layers:
            check_int("n_layers", ell, minimum=1)
        for e in self.ln_eps:
            check_real("ln_eps", e, minimum=0.0)
        for n in self.n_bits:
            check_int("n_bits", n, minimum=1, maximum=24)
        for s in self.seeds:
            check_int("seeds", s, minimum=0)
        check_real("scale", self.scale, strictly_positive=True)
        if not isinstance(self.model, Mapping):
            raise ValidationError("model", "a dict of ModelConfig fields", self.model)
        clash = {"d_model", "n_layers", "n_heads", "ln_eps"} & set(self.model)
        if clash:
            raise ValidationError("model", "ModelConfig fields other than the grid axes", clash)
        object.__setattr__(self, "model", dict(sorted(self.model.items())))
        if self.kind == "transformer":
            self.validate_configs()

    def validate_configs(self) -> None:
        """Build the ModelConfig of every (D, L, eps) of the grid once, so that a bad ``model``
        field or value is reported before any cell runs (ValidationError naming
        ``model.<field>``, or the grid axis)."""
        from dataclasses import fields

        from verify.model import ModelConfig

        known = {f.name for f in fields(ModelConfig)} - {"d_model", "n_layers", "n_heads", "ln_eps"}
        for key in self.model:
            if key not in known:
                raise ValidationError(
                    f"model.{key}", "a ModelConfig field: " + ", ".join(sorted(known)), key
                )
        for d, ell, e in itertools.product(self.d_model, self.n_layers, self.ln_eps):
            try:
                ModelConfig(d_model=d, n_layers=ell, n_heads=self.n_heads, ln_eps=e, **self.model)
            except ValidationError as exc:
                if exc.argument in self.model:
                    raise ValidationError(
                        f"model.{exc.argument}", exc.expected, self.model[exc.argument], exc.hint
                    ) from None
                raise

    def cells(self) -> list[dict[str, Any]]:
        """Every cell of the grid, as plain dicts, in a fixed order."""
        if self.kind == "random_function":
            return [
                {"kind": self.kind, "n_bits": int(n), "seed": int(s)}
                for n, s in itertools.product(self.n_bits, self.seeds)
            ]
        return [
            {
                "kind": self.kind,
                "scheme": sc,
                "d_model": int(d),
                "n_layers": int(ell),
                "ln_eps": float(e),
                "n_bits": int(n),
                "seed": int(s),
                "n_heads": int(self.n_heads),
                "scale": float(self.scale),
                **({"model": dict(self.model)} if self.model else {}),
            }
            for sc, d, ell, e, n, s in itertools.product(
                self.schemes, self.d_model, self.n_layers, self.ln_eps, self.n_bits, self.seeds
            )
        ]


def cell_key(cell: Mapping[str, Any]) -> str:
    """The canonical identity of a cell: its JSON with sorted keys."""
    return json.dumps(dict(cell), sort_keys=True, separators=(",", ":"), allow_nan=False)


# --------------------------------------------------------------------------------- cell runners
def _profile_summary(table: Any) -> dict[str, Any]:
    import numpy as np

    from verify.boolean import average_sensitivity, sensitivity_profile

    profile = sensitivity_profile(table)
    return {
        "profile": [int(k) for k in profile],
        "K0": int(profile[0]),
        "avg_sensitivity": float(average_sensitivity(table)),
        "ones": int(np.count_nonzero(table)),
    }


def random_function_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Baseline: a uniformly random Boolean function on N bits (``default_rng(seed)``), its
    sensitivity profile [K_0..K_N]. E[K_0] = 1 and P[K_0 >= 1] -> 1 - 1/e as N grows."""
    import numpy as np

    n = check_int("n_bits", cell.get("n_bits"), minimum=1, maximum=24)
    rng = np.random.default_rng(check_int("seed", cell.get("seed"), minimum=0))
    table = rng.integers(0, 2, size=1 << n, dtype=np.uint8)
    return {"decided": True, **_profile_summary(table)}


def transformer_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """A random transformer (``init_params(config, scheme, seed, scale)``) on all 2^N strings:
    its certified truth table (``verify.model.truth_table``; float64 with a certified error
    bound, undecided strings redone at high precision) and, when every bit is decided, its
    sensitivity profile [K_0..K_N], K_0 and average sensitivity (total influence, in [0, N]).
    With undecided bits the profile is not computed (``decided: False``)."""
    from verify.model import ModelConfig, init_params
    from verify.model import truth_table as certified_truth_table

    config = ModelConfig(
        d_model=cell["d_model"],
        n_layers=cell["n_layers"],
        n_heads=cell.get("n_heads", 2),
        ln_eps=cell["ln_eps"],
        **cell.get("model", {}),
    )
    params = init_params(config, cell["scheme"], cell["seed"], cell.get("scale", 1.0))
    tt = certified_truth_table(params, cell["n_bits"])
    counts = tt.counts  # float64 / high_precision / uncertain / undecided
    out: dict[str, Any] = {f"n_{k}": int(v) for k, v in counts.items()}
    out["decided"] = counts["uncertain"] == 0 and counts["undecided"] == 0
    if out["decided"]:
        out.update(_profile_summary(tt.function().table))
    return out


RUNNERS: dict[str, CellRunner] = {
    "transformer": transformer_cell,
    "random_function": random_function_cell,
}


def limit_numba_threads(n: int) -> int:
    """Let Numba's parallel kernels use ``n`` threads in the calling thread (before Numba is
    imported: in the whole process); the number now in force."""
    import sys

    if "numba" not in sys.modules:
        os.environ["NUMBA_NUM_THREADS"] = str(n)
        os.environ.setdefault("OMP_NUM_THREADS", str(n))
    import numba

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    return int(numba.get_num_threads())


def execute_cell(
    runner: CellRunner, cell: dict[str, Any], numba_threads: int | None = None
) -> dict[str, Any]:
    """Run ``runner(cell)`` and wrap it as a results-file record; an exception becomes an
    ``error`` record with its traceback (it is retried when the sweep is restarted).
    ``numba_threads``: the Numba threads the cell may use (recorded in the record)."""
    start = time.perf_counter()
    record: dict[str, Any] = {"key": cell_key(cell), "cell": dict(cell)}
    if numba_threads is not None:
        record["numba_threads"] = limit_numba_threads(numba_threads)
    try:
        record["result"] = runner(cell)
        record["status"] = "ok"
        record["error"] = None
    except Exception as exc:
        record["result"] = None
        record["status"] = "error"
        record["error"] = {
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(),
        }
    record["runtime_s"] = time.perf_counter() - start
    record["pid"] = os.getpid()
    return record


# --------------------------------------------------------------------------------- results file
class ResultsFile:
    """An append-only JSON-lines file of cell records, locked against a second writer.

    Each :meth:`append` writes one line and flushes and fsyncs it before returning. On opening,
    a trailing partial line (left by a kill during a write) is truncated away.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path.with_name(self.path.name + ".lock"), "a")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise ValidationError(
                "results", "a results file no other running sweep is writing", str(self.path)
            ) from None
        self.records, self.dropped = _read_records(self.path, repair=True)
        is_new = not self.path.exists()
        self._fh = open(self.path, "a", encoding="utf-8")
        if is_new:  # make the new file's directory entry durable too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def append(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(jsonable(record), allow_nan=False, sort_keys=True)
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records.append(dict(record))

    def close(self) -> None:
        self._fh.close()
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_records(path: Path, *, repair: bool = False) -> tuple[list[dict[str, Any]], int]:
    """The complete records of ``path``, and how many bytes of a torn last line were dropped
    (truncated from the file when ``repair``). A malformed complete line is an error."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    dropped = len(data) - end
    if dropped and repair:
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    records = []
    for i, line in enumerate(data[:end].splitlines()):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                "results", f"a JSON-lines results file (line {i + 1} is not JSON)", str(path)
            ) from exc
        if not isinstance(rec, dict) or "key" not in rec:
            raise ValidationError("results", f"cell records (line {i + 1} has no key)", str(path))
        records.append(rec)
    return records, dropped


def load_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The latest record of each cell in a results file (a torn last line is ignored)."""
    records, _ = _read_records(Path(path))
    latest: dict[str, dict[str, Any]] = {}
    for rec in records:
        latest[rec["key"]] = rec
    return list(latest.values())


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


def local_executor(max_workers: int) -> cf.ProcessPoolExecutor:
    """A ProcessPoolExecutor whose workers come from a "forkserver" (not "fork": forking a
    process that already runs Numba's OpenMP threads aborts the child). The server preloads
    only verify.sweep: importing the Numba kernels there would start OpenMP in it too. With
    several workers each runs Numba with one thread, so workers x threads = cores."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["verify.sweep"])
    if max_workers == 1:
        return cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx)
    # several workers share the cores: one Numba thread each, no oversubscription
    return cf.ProcessPoolExecutor(
        max_workers=max_workers, mp_context=ctx, initializer=_one_numba_thread
    )


def _one_numba_thread() -> None:
    """Worker initializer: Numba's parallel kernels use one thread in this process."""
    os.environ["NUMBA_NUM_THREADS"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")


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
    Cells whose latest record is an error are retried.
    """
    from tqdm.auto import tqdm

    all_cells = _unique_cells(cells)
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
        done = {r["key"] for r in rf.records if r.get("status") == "ok"}
        todo = [c for c in all_cells if cell_key(c) not in done]
        summary = SweepSummary(
            path=rf.path,
            n_cells=len(all_cells),
            n_skipped=len(all_cells) - len(todo),
            n_run=0,
            n_errors=0,
            runtime_s=0.0,
            torn_bytes=rf.dropped,
        )
        own = executor is None and bool(todo)
        ex = local_executor(workers) if own else executor
        if ex is not None and hasattr(ex, "get_executor"):  # a dask.distributed Client
            ex = ex.get_executor()
        bar = tqdm(total=len(todo), desc="cells", unit="cell", disable=not progress)
        try:
            it: Iterator[dict[str, Any]] = iter(todo)
            pending: set[cf.Future] = set()
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
        finally:
            bar.close()
            if own:
                ex.shutdown(wait=True, cancel_futures=True)
    summary.runtime_s = time.perf_counter() - start
    return summary


# --------------------------------------------------------------------------------- executors
@dataclass
class ExecutorHandle:
    """An executor opened by :func:`open_executor`: the concurrent.futures executor, its
    worker slots (cells that run at once), what it is, and how to close it."""

    executor: Any
    slots: int
    description: str
    close: Callable[[], None] = lambda: None
    setup_s: float = 0.0  # time spent preparing the workers (kernels compiled or loaded)

    def __enter__(self) -> ExecutorHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def executor_slots(executor: Any) -> int:
    """How many cells ``executor`` runs at once: a dask Client's (or its executor's) worker
    threads, a RayExecutor's CPUs, a pool's ``_max_workers``; else the local cores."""
    client = getattr(executor, "_client", None) or (
        executor if hasattr(executor, "nthreads") and hasattr(executor, "get_executor") else None
    )
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a client that cannot answer: fall back to the local cores
            pass
    for attr in ("slots", "_max_workers"):
        value = getattr(executor, attr, None)
        if isinstance(value, int) and value >= 1:
            return value
    return os.cpu_count() or 1


class RayExecutor(cf.Executor):
    """A concurrent.futures executor on ray (which has none of its own): each submitted call
    is a ray task; ``ObjectRef.future()`` is the concurrent.futures Future. ``address``:
    None starts a local ray; "auto" or "ray://HOST:PORT" joins a running cluster."""

    def __init__(self, address: str | None = None, **init_kwargs: Any) -> None:
        import ray

        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(address=address, **init_kwargs)
        self._remote = ray.remote(_call)

    @property
    def slots(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        return self._remote.remote(fn, *args, **kwargs).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def _prepare_worker() -> dict[str, Any]:
    """On a worker: one Numba thread per cell, and the kernels compiled or loaded now (timed
    here, not in the first cell)."""
    from verify.report.warmup import compile_kernels

    threads = limit_numba_threads(1)
    return {"numba_threads": threads, **compile_kernels().as_dict()}


EXECUTORS = ("local", "dask", "dask://HOST:PORT", "ray", "ray://HOST:PORT")


def open_executor(spec: str | None = None, *, jobs: int | None = None) -> ExecutorHandle:
    """The executor named by ``spec`` (the CLI's ``--executor``):

    - ``local`` (or None): :func:`local_executor` with ``jobs`` processes (default: cores);
    - ``dask``: a dask.distributed LocalCluster of ``jobs`` one-thread workers;
    - ``dask://HOST:PORT`` (or ``tcp://...``): a running dask scheduler;
    - ``ray``: a local ray; ``ray://HOST:PORT`` or ``ray:auto``: a running ray cluster.

    dask workers are prepared once (one Numba thread, kernels compiled or loaded:
    :func:`_prepare_worker`) before any cell is submitted.
    """
    spec = (spec or "local").strip()
    if jobs is not None:
        check_int("max_workers", jobs, minimum=1)
    if spec == "local":
        n = jobs or os.cpu_count() or 1
        ex = local_executor(n)
        return ExecutorHandle(ex, n, f"local, {n} process(es)", lambda: ex.shutdown(wait=True))
    if spec == "dask" or spec.startswith(("dask://", "tcp://")):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ValidationError(
                "executor", "dask installed (pip install 'verify-boolean-transformers[dask]')", spec
            ) from None
        if spec == "dask":
            cluster = LocalCluster(
                n_workers=jobs or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            client = Client(cluster)
            where = f"dask LocalCluster, {len(cluster.workers)} worker(s)"

            def close() -> None:
                client.close()
                cluster.close()
        else:
            address = "tcp://" + spec.split("://", 1)[1]
            try:
                client = Client(address, timeout="30s")
            except OSError as exc:
                raise ValidationError("executor", "a reachable dask scheduler", spec) from exc
            where = f"dask scheduler {address}"
            close = client.close
        start = time.perf_counter()
        client.run(_prepare_worker)
        setup = time.perf_counter() - start
        slots = max(1, sum(client.nthreads().values()))
        return ExecutorHandle(
            client.get_executor(), slots, f"{where}, {slots} slot(s)", close, setup
        )
    if spec == "ray" or spec.startswith(("ray://", "ray:")):
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ValidationError(
                "executor", "ray installed (pip install 'verify-boolean-transformers[ray]')", spec
            ) from None
        address = None
        if spec.startswith("ray://"):
            address = spec
        elif spec.startswith("ray:"):
            address = spec[4:] or None
        rex = RayExecutor(address, **({"num_cpus": jobs} if jobs and address is None else {}))
        return ExecutorHandle(rex, rex.slots, f"ray, {rex.slots} CPU(s)", rex.shutdown)
    raise ValidationError("executor", "one of " + ", ".join(EXECUTORS), spec)


# --------------------------------------------------------------------------------- exports
RESULT_COLUMNS = (
    "kind",
    "scheme",
    "d_model",
    "n_layers",
    "n_heads",
    "ln_eps",
    "scale",
    "n_bits",
    "seed",
    "status",
    "decided",
    "K0",
    "avg_sensitivity",
    "ones",
    "n_float64",
    "n_high_precision",
    "n_uncertain",
    "n_undecided",
    "runtime_s",
    "profile",
    "model",
    "error",
)


def results_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per cell record (its cell, status, result numbers; the profile as a
    space-separated string, further ModelConfig fields as JSON): the rows of the CSV export."""
    rows = []
    for r in records:
        cell = dict(r.get("cell") or {})
        res = r.get("result") or {}
        row: dict[str, Any] = {k: cell.get(k) for k in RESULT_COLUMNS[:9]}
        row.update(
            {
                "status": r.get("status"),
                "decided": res.get("decided"),
                "K0": res.get("K0"),
                "avg_sensitivity": res.get("avg_sensitivity"),
                "ones": res.get("ones"),
                "n_float64": res.get("n_float64"),
                "n_high_precision": res.get("n_high_precision"),
                "n_uncertain": res.get("n_uncertain"),
                "n_undecided": res.get("n_undecided"),
                "runtime_s": r.get("runtime_s"),
                "profile": " ".join(map(str, res["profile"])) if res.get("profile") else None,
                "model": json.dumps(cell["model"], sort_keys=True) if cell.get("model") else None,
                "error": (r.get("error") or {}).get("message"),
            }
        )
        rows.append(row)
    return rows


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write dict rows to a CSV file (columns: the keys of the first row, then any others)."""
    import csv

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(v) for k, v in r.items()})
    return path


def _csv_value(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(jsonable(v), sort_keys=True)
    return v


def summary_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`summarize` rows flattened for a CSV (setting fields as columns, CI as two)."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r["setting"].items() if k != "model"}
        if r["setting"].get("model"):
            flat["model"] = json.dumps(r["setting"]["model"], sort_keys=True)
        lo, hi = r["p_K0_ge_1_ci"]
        flat.update({k: v for k, v in r.items() if k not in ("setting", "p_K0_ge_1_ci")})
        flat.update({"p_K0_ge_1_ci_low": lo, "p_K0_ge_1_ci_high": hi})
        out.append(flat)
    return out


def results_frame(source: str | os.PathLike[str] | Iterable[Mapping[str, Any]]):
    """The sweep's cells as a pandas DataFrame (one row per cell, :func:`results_rows`);
    ``source`` is a results file or records. Needs pandas (optional)."""
    try:
        import pandas as pd
    except ImportError:
        raise ValidationError("pandas", "installed (pip install pandas)") from None
    records = load_results(source) if isinstance(source, (str, os.PathLike)) else list(source)
    return pd.DataFrame(results_rows(records), columns=list(RESULT_COLUMNS))


# --------------------------------------------------------------------------------- summaries
def summarize(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Group ok records over seeds: per setting, the number of seeds, how many were decided,
    and over the decided cells the fraction of constant functions, the mean average
    sensitivity, mean K_0 and P[K_0 >= 1] with its 95% Clopper-Pearson interval."""
    from verify.boolean import clopper_pearson

    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("status") != "ok":
            continue
        setting = {k: v for k, v in r["cell"].items() if k != "seed"}
        groups.setdefault(cell_key(setting), []).append(r)
    rows = []
    for key, recs in groups.items():
        dec = [r["result"] for r in recs if r["result"].get("decided")]
        k0 = [int(x["K0"]) for x in dec]
        hit = sum(v >= 1 for v in k0)
        n_bits = int(json.loads(key).get("n_bits", 0))
        const = sum(v == 2**n_bits for v in k0)  # K_0 = 2^N exactly when f is constant
        rows.append(
            {
                "setting": json.loads(key),
                "n": len(recs),
                "n_decided": len(dec),
                "frac_constant": const / len(k0) if k0 else math.nan,
                "mean_avg_sensitivity": (
                    sum(float(x["avg_sensitivity"]) for x in dec) / len(dec) if dec else math.nan
                ),
                "mean_K0": sum(k0) / len(k0) if k0 else math.nan,
                "p_K0_ge_1": hit / len(k0) if k0 else math.nan,
                "p_K0_ge_1_ci": clopper_pearson(hit, len(k0), 0.95) if k0 else (0.0, 1.0),
            }
        )
    return rows
