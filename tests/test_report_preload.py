"""The report pool's fork server imports verify.report.preload once for all workers: that import
must load no Numba kernel (a parallel kernel, even from the cache, starts the OpenMP threading
layer, and a child forked after it aborts), and workers forked from it must compute the rows of
a serial run, with one Numba thread each. Each test runs in a fresh interpreter: the fork
server is one per process, and this one's may have started with another preload."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("preload", ["REPORT_PRELOAD", "SWEEP_PRELOAD"])
def test_the_preload_imports_no_kernel_and_starts_no_threading_layer(preload: str) -> None:
    report = "import verify.report.preload as p\n" if preload == "REPORT_PRELOAD" else ""
    out = _python(
        "import importlib, json, sys\n"
        f"from verify._forkserver import {preload} as names\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "launched = False\n"
        "if 'numba' in sys.modules:\n"
        "    import numba.np.ufunc.parallel as par\n"
        "    launched = bool(par._is_initialized)\n"
        "kernels = sorted(m for m in sys.modules if m.startswith('verify.')\n"
        "                 and ('kernels' in m or m.startswith('verify.statements')))\n"
        f"{report}"
        "modules = [m in sys.modules for m in p.MODULES] if 'p' in dir() else []\n"
        "print(json.dumps({'launched': launched, 'kernels': kernels, 'modules': modules,\n"
        "                  'target': 'verify._numba_target' in sys.modules}))\n"
    )
    assert out["launched"] is False
    assert out["kernels"] == []
    assert all(out["modules"]) and out["target"]


def test_the_threading_check_can_fail() -> None:
    """The check above sees a launched layer: importing a module with a parallel kernel from
    the cache launches it (so the preload must never import one)."""
    out = _python(
        "import json\n"
        "import verify.boolean.kernels\n"
        "import numba.np.ufunc.parallel as par\n"
        "print(json.dumps({'launched': bool(par._is_initialized)}))\n"
    )
    assert out["launched"] is True


def probe() -> tuple[bool, int, list[int]]:
    """Run in a pool worker: was the worker forked from the preloaded server, how many Numba
    threads it runs, and a parallel kernel's result (a 2^17-byte table: the parallel path)."""
    import numba
    import numpy as np

    from verify.boolean.analysis import sensitivity_profile

    table = np.random.default_rng(0).integers(0, 2, 1 << 17).astype(np.uint8)
    profile = np.asarray(sensitivity_profile(table)).tolist()
    return "verify.report.preload" in sys.modules, numba.get_num_threads(), profile


def test_workers_forked_from_the_preloaded_server_give_the_serial_rows() -> None:
    out = _python(
        "import json, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_report_parallel import CHEAP, _rows\n"
        "from test_report_preload import probe\n"
        "from verify.report.runner import run_statements, select_statements\n"
        "from verify._forkserver import REPORT_PRELOAD\n"
        "from verify.sweep.executors import local_executor\n"
        "statements = select_statements(CHEAP)\n"
        "serial = run_statements(statements, budget='quick', seed=3, progress=False)\n"
        "ex = local_executor(2, REPORT_PRELOAD)\n"
        "try:\n"
        "    par = run_statements(statements, budget='quick', seed=3, progress=False,\n"
        "                         executor=ex)\n"
        "    probes = [f.result() for f in [ex.submit(probe) for _ in range(4)]]\n"
        "finally:\n"
        "    ex.shutdown(wait=True)\n"
        "print(json.dumps({'same': repr(_rows(serial)) == repr(_rows(par)),\n"
        "                  'n': len(_rows(par)), 'probes': probes, 'here': probe()[2]}))\n"
    )
    assert out["same"] and out["n"] > 4
    for preloaded, threads, profile in out["probes"]:
        assert preloaded is True  # the worker is a fork of the preloaded server
        assert threads == 1  # two workers: one Numba thread each
        assert profile == out["here"]  # a parallel kernel runs in the fork


def test_one_numba_thread_per_worker_when_the_server_imported_numba() -> None:
    """A fork server that imported numba has read NUMBA_NUM_THREADS already: the worker
    initializer sets the thread count through numba instead."""
    out = _python(
        "import json, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_report_preload import probe\n"
        "from verify.sweep.executors import local_executor\n"
        "ex = local_executor(2, ('numba',))\n"
        "try:\n"
        "    probes = [f.result() for f in [ex.submit(probe) for _ in range(2)]]\n"
        "finally:\n"
        "    ex.shutdown(wait=True)\n"
        "print(json.dumps({'probes': probes, 'here': probe()[2]}))\n"
    )
    for preloaded, threads, profile in out["probes"]:
        assert preloaded is False
        assert threads == 1
        assert profile == out["here"]
