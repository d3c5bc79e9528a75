"""Throughput of check-model ``--executor``: the certified table in sub-cubes on 1 and 2 workers,
and the extrapolation to larger N.

The model is benchmarks/bench_check_model.py's (default (128, 2, 2) in Hahn & Rofin's layout).
For each executor (``--executors``, default ``local dask``) and each worker count (``-j``,
default 1 2): ``verify.model.certified.cube.certify_on_executor`` of all 2^N strings (N = ``--N``,
default 16), once after the workers are up and their kernels loaded (a first, untimed run at
N = 8 warms them). Printed: wall seconds, the sum of the sub-cubes' wall and CPU seconds on
their workers, strings per second per worker (from the workers' CPU seconds: what one core
gives, whatever else shares the machine) and per wall second, the load average.

Extrapolation: a string of length N costs ``verify.sizes.table_flops_per_string`` (its
positions S grow with N), so the time at N' is the measured CPU seconds per string times
2^N' times flops(N') / flops(N), divided by the workers. Printed for N' = 24 and 30.

Run by hand: ``python benchmarks/bench_cube.py [--N 16] [-j 1 2] [--executors local dask]
[-D 128] [--L 2] [-H 2] [--layout hr|spec]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check_model import load, model

from verify.model import truth_table
from verify.model.certified.cube import certify_on_executor
from verify.sizes import table_flops_per_string
from verify.sweep.executors import open_executor


def _days(seconds: float) -> str:
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=16, help="input length (16)")
    ap.add_argument("-j", type=int, nargs="+", default=[1, 2], help="worker counts (1 2)")
    ap.add_argument("--executors", nargs="+", default=["local", "dask"], help="local dask")
    ap.add_argument("-D", type=int, default=128, help="d_model (128)")
    ap.add_argument("--L", type=int, default=2, help="layers (2)")
    ap.add_argument("-H", type=int, default=2, help="heads (2)")
    ap.add_argument("--layout", choices=["hr", "spec"], default="hr", help="hr (default)")
    ap.add_argument("--norm", choices=["post", "pre"], default="post")
    ap.add_argument("--extrapolate", type=int, nargs="+", default=[24, 30], help="24 30")
    args = ap.parse_args()
    n = args.N
    params = model(args, max(n, *args.extrapolate))  # positions for every N extrapolated to
    cfg = params.config
    whole = truth_table(params, n).label  # the local table, to compare with
    flops = {m: table_flops_per_string(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_layers,
                                       cfg.seq_len(m)) for m in [n, *args.extrapolate]}  # fmt: skip
    print(f"(D, L, H) = ({cfg.d_model}, {cfg.n_layers}, {cfg.n_heads}), {args.layout} layout,"
          f" N = {n}: {2**n} strings; {os.cpu_count()} cores")  # fmt: skip
    for spec in args.executors:
        for jobs in args.j:
            with open_executor(spec, jobs=jobs) as handle:
                certify_on_executor(params, 8, handle.executor, handle.slots)  # warm-up
                before = load()
                t0 = time.perf_counter()
                g = certify_on_executor(params, n, handle.executor, handle.slots)
                wall = time.perf_counter() - t0
                assert (g.label == whole).all(), "the gathered table differs from the local one"
                per_cpu = 2**n / g.worker_cpu_seconds
                print(
                    f"{handle.description}: {wall:.2f} s wall, {1 << g.prefix_bits} sub-cubes;"
                    f" workers {g.worker_seconds:.2f} s wall, {g.worker_cpu_seconds:.2f} s CPU;"
                    f" {per_cpu:.0f} strings/s per worker CPU second,"
                    f" {2**n / wall / handle.slots:.0f} per worker wall second"
                    f" [{before} -> {load()}]"
                )
                for m in args.extrapolate:
                    cpu = 2**m * flops[m] / flops[n] / per_cpu
                    print(f"  N = {m}: {_days(cpu)} on one core; {_days(cpu / 64)} on 64,"
                          f" {_days(cpu / 1024)} on 1024 (from this throughput)")  # fmt: skip


if __name__ == "__main__":
    main()
