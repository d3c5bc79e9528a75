"""Sweep throughput: the same cells run serially in this process, and by run_sweep with the
local process pool (1 and 2 workers), which adds pool start-up, per-worker imports, pickling,
and a JSON line + fsync per cell. Prints the time to the first finished cell, the steady
throughput after it, and its ratio to the serial baseline measured in the same run.

    python benchmarks/bench_sweep.py [--kind transformer|random_function] [--cells 40] [-N 8]
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import tempfile
import time

from verify.sweep import RUNNERS, SweepGrid, run_sweep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="transformer", choices=sorted(RUNNERS))
    ap.add_argument("--cells", type=int, default=40)
    ap.add_argument("-N", type=int, default=8)
    args = ap.parse_args()
    grid = SweepGrid(
        kind=args.kind,
        d_model=(16,),
        n_layers=(1,),
        n_bits=(args.N,),
        seeds=tuple(range(args.cells)),
    )
    cells = grid.cells()
    runner = RUNNERS[args.kind]
    runner(cells[0])  # warm up (imports, Numba cache) outside the timing
    t0 = time.perf_counter()
    for c in cells:
        runner(c)
    serial = time.perf_counter() - t0
    print(f"{args.kind}, N={args.N}, {len(cells)} cells")
    print(f"  serial, in process: {serial:7.2f} s  {len(cells) / serial:7.1f} cells/s  (1.00x)")
    for workers in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.time()
            summary = run_sweep(cells, f"{d}/r.jsonl", max_workers=workers, progress=False)
            t = time.time() - t0
        done = sorted(
            dt.datetime.fromisoformat(r["finished_at"]).timestamp() for r in summary.records
        )
        steady = (len(done) - 1) / (done[-1] - done[0]) if done[-1] > done[0] else math.inf
        print(
            f"  run_sweep, {workers} worker(s): {t:7.2f} s; first cell after {done[0] - t0:.2f} s"
            f" (pool start-up, imports); then {steady:7.1f} cells/s"
            f" ({steady / (len(cells) / serial):.2f}x serial)"
        )


if __name__ == "__main__":
    main()
