"""Where cells run: a local process pool, dask (LocalCluster or a scheduler), ray."""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from verify._forkserver import SWEEP_PRELOAD, start_fork_server
from verify.errors import ValidationError
from verify.sweep.cells import limit_numba_threads
from verify.validation import check_int


def local_executor(
    max_workers: int, preload: Sequence[str] = SWEEP_PRELOAD
) -> cf.ProcessPoolExecutor:
    """A ProcessPoolExecutor whose workers come from a "forkserver" (not "fork": forking a
    process that already runs Numba's OpenMP threads aborts the child). The server imports
    the modules ``preload`` once and each worker starts as its fork: verify.sweep by default,
    the report's code for a report (verify.report.preload); never a Numba kernel (loading a
    parallel one, even from the cache, starts the threading layer in the server). The fork
    server is one per process: the first pool's ``preload`` is the one in force. With several
    workers each runs Numba with one thread, so workers x threads = cores.

    Workers end with the process that made the pool (:func:`_worker_init`): they ignore Ctrl-C
    (the parent decides, and :func:`stop_executor` ends them) and exit by themselves within
    about a second when that process is gone, however it ended (SIGKILL included)."""
    ctx = start_fork_server(preload)
    return cf.ProcessPoolExecutor(
        max_workers=max_workers,
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(os.getpid(), max_workers > 1),
    )


def _worker_init(parent_pid: int, one_thread: bool) -> None:
    """Worker initializer: ignore SIGINT (a terminal's Ctrl-C reaches the whole process group;
    the parent stops the workers), watch the parent and exit when it is gone; with several
    workers, Numba's parallel kernels use one thread each (no oversubscription)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if one_thread:
        if "numba" in sys.modules:  # imported by the fork server: its setting is read already
            # and the variable stays as Numba read it: a later reload of Numba's config (a
            # kernel compiled in the worker) refuses a NUMBA_NUM_THREADS that differs from the
            # launched pool's ("Cannot set NUMBA_NUM_THREADS ... once the threads have been
            # launched", every cell failed); the pool runs on one thread by set_num_threads
            limit_numba_threads(1)
        else:
            os.environ["NUMBA_NUM_THREADS"] = "1"
            os.environ.setdefault("OMP_NUM_THREADS", "1")
    threading.Thread(
        target=_exit_with_parent, args=(parent_pid,), name="verify-parent-watch", daemon=True
    ).start()


def _exit_with_parent(parent_pid: int) -> None:
    """Block until process ``parent_pid`` ends (a pidfd on Linux: no polling, no pid reuse;
    elsewhere a check each 0.5 s), then end this process at once."""
    import select

    try:
        fd = os.pidfd_open(parent_pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])  # readable when the process has ended
    else:
        while True:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(0.5)
    os._exit(70)


def stop_executor(ex: Any) -> None:
    """Stop an executor now: cancel what is queued and, for a local process pool, end its
    worker processes (SIGTERM, then SIGKILL after 2 s) instead of waiting for their cells."""
    processes = list((getattr(ex, "_processes", None) or {}).values())
    for p in processes:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 2.0
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)
    try:
        ex.shutdown(wait=bool(processes), cancel_futures=True)
    except Exception:  # a pool broken by the terminated workers: nothing left to stop
        pass


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
            if address is None:  # a local ray for this sweep: no dashboard (port, start time)
                init_kwargs.setdefault("include_dashboard", False)
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
    here, not in the first cell; here only: the workers are the parallelism)."""
    from verify.kernel_cache.warmup import compile_kernels

    threads = limit_numba_threads(1)
    return {"numba_threads": threads, **compile_kernels(jobs=1).as_dict()}


EXECUTORS = ("local", "dask", "dask://HOST:PORT", "ray", "ray://HOST:PORT")


def check_executor_spec(flag: str, spec: str | None) -> tuple[str, bool]:
    """(the spec stripped, whether it names a running cluster) of an ``--executor`` value;
    ValidationError naming ``flag`` for anything :func:`open_executor` does not take."""
    spec = (spec or "local").strip()
    remote = spec.startswith(("dask://", "tcp://", "ray://", "ray:"))
    if not (spec in ("local", "dask", "ray") or remote):
        raise ValidationError(flag, "local, dask, dask://HOST:PORT, ray or ray://HOST:PORT", spec)
    return spec, remote


def open_executor(
    spec: str | None = None, *, jobs: int | None = None, preload: Sequence[str] = SWEEP_PRELOAD
) -> ExecutorHandle:
    """The executor named by ``spec`` (the CLI's ``--executor``):

    - ``local`` (or None): :func:`local_executor` with ``jobs`` processes (default: cores),
      its fork server importing ``preload``;
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
        ex = local_executor(n, preload)
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
