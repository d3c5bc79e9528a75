"""Benchmark: the cold kernel warm-up (``compile_kernels``, the report's first step) with an
empty Numba cache, parallel against serial, in the same run (run by hand; not a test).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_compile.py [-j 2] [--serial] [--all]
        [--baseline PATH]

Each case is a fresh subprocess with its own new ``NUMBA_CACHE_DIR``, so everything compiles:

- ``parallel``: ``compile_kernels(jobs=J)``, the report's kernels in J processes (the default);
- ``--serial``: ``compile_kernels(jobs=1)``, the same kernels in one process;
- ``--all``: every kernel module, the deferred ones too, in one process;
- ``--baseline PATH``: ``compile_kernels()`` of another checkout (e.g. the commit before issue
  29's changes, ``git worktree add /tmp/base <commit>``), with PYTHONPATH=PATH.

Printed per case: wall time, CPU time of the subprocess and its children, the summary line,
and ``uptime`` before and after (the machine may be shared: the load averages say how much).
Target (issue 29): parallel <= 60 s on 2 idle cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_report import uptime  # noqa: E402

WARM = (
    "from verify.kernel_cache.warmup import compile_kernels; "
    "print(compile_kernels({args}).summary())"
)
ALL = (
    "import importlib; from verify.kernel_cache.warmup import kernel_modules, compile_kernels; "
    "[importlib.import_module(m) for m in kernel_modules(deferred=True)]; "
    "print(compile_kernels(jobs=1).summary())"
)


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_case(name: str, code: str, tree: Path) -> float:
    """One cold warm-up subprocess (fresh cache folder); prints and returns its wall time."""
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(tree))
        before = uptime()
        cpu = _cpu()
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        cpu = _cpu() - cpu
    if proc.returncode:
        sys.exit(f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    print(f"{name}: wall {wall:.1f} s, CPU {cpu:.1f} s: {proc.stdout.strip()}")
    print(f"  before: {before}\n  after:  {uptime()}", flush=True)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=2, help="compile processes (default 2)")
    ap.add_argument("--serial", action="store_true", help="also the same kernels in one process")
    ap.add_argument("--all", action="store_true", help="also every kernel module, serial")
    ap.add_argument("--baseline", type=Path, help="also compile_kernels() of this checkout")
    args = ap.parse_args()
    walls = {"parallel": run_case("parallel", WARM.format(args=f"jobs={args.jobs}"), ROOT)}
    if args.serial:
        walls["serial"] = run_case("serial", WARM.format(args="jobs=1"), ROOT)
    if args.all:
        walls["all"] = run_case("all modules, serial", ALL, ROOT)
    if args.baseline:
        base = WARM.format(args="")
        walls["baseline"] = run_case(f"baseline {args.baseline}", base, args.baseline)
    for name, wall in walls.items():
        if name != "parallel":
            print(f"{name} / parallel: {wall / walls['parallel']:.2f}")


if __name__ == "__main__":
    main()
