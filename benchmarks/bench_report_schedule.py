"""Benchmark: `report --quick -j J` warm, with issue 29's schedule and trained-model cache
against the order before them, in the same run (run by hand; not a test).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_report_schedule.py [-j 2] [--repeat 2]

"before": the checks submitted in the report's serial order, one task each (H&R Cor 5's and
Thm 6's trained models trained in whichever workers run them), the Derivation section submitted
first, no trained-model cache (VERIFY_CACHE_DIR=off). "after": the code as it is (longest first
by recorded run times, the checks sharing the trained models as one task, the Derivation
section at its cost's place, the trained models read from a cache filled by a first, untimed,
run). Each run is a fresh process writing into a temporary folder; the runs alternate (before,
after, before, ...) so that a changing machine load hits both alike. Printed per run: the wall
time, the phases, the sum of the checks' run times and the Derivation section's (the work done,
whichever worker did it), `uptime`; then whether every run gave the same statuses and rows (they
must) and the ratio of the best wall times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_report import fingerprint, uptime  # noqa: E402


def _one(variant: str, out: str, jobs: int) -> None:
    """In a child process: one report run, its summary printed as JSON."""
    t0 = time.perf_counter()
    from verify.report import runner, writer
    from verify.report.schedule import DERIVATIONS

    if variant == "before":
        runner.plan_tasks = lambda keys, shares, costs: [(0.0, [i]) for i in range(len(keys))]
        writer.recorded_costs = lambda paths, budget: {DERIVATIONS: math.inf}
    rep = writer.generate_report(out, budget="quick", progress=False, jobs=jobs)
    doc = rep.document
    print(
        json.dumps(
            {
                "wall": time.perf_counter() - t0,
                "phases": doc["summary"]["phases"],
                "checks_sum": sum(c["runtime_s"] for st in doc["statements"] for c in st["checks"]),
                "derivations": doc["derivations"]["seconds"],
            }
        )
    )


def _run(variant: str, out: Path, jobs: int, cache: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["VERIFY_CACHE_DIR"] = "off" if variant == "before" else str(cache)
    argv = [sys.executable, __file__, "--child", variant, str(out), "-j", str(jobs)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not (out / "report.json").is_file():
        sys.exit(f"report failed ({variant}):\n{proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["doc"] = json.loads((out / "report.json").read_text())
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _one(args.child[0], args.child[1], args.jobs)
        return
    print("before:", uptime(), flush=True)
    walls: dict[str, list[float]] = {"before": [], "after": []}
    prints = []
    with tempfile.TemporaryDirectory(prefix="bench-schedule-") as tmp:
        cache = Path(tmp) / "cache"
        _run("after", Path(tmp) / "fill", args.jobs, cache)  # kernels and trained models
        for r in range(args.repeat):
            for variant in ("before", "after"):
                res = _run(variant, Path(tmp) / f"{variant}-{r}", args.jobs, cache)
                walls[variant].append(res["wall"])
                prints.append(fingerprint(res["doc"]))
                ph = ", ".join(f"{k[:-2]} {v:.1f}" for k, v in res["phases"].items())
                print(
                    f"{variant:<7} {res['wall']:6.1f} s wall ({ph});"
                    f" checks {res['checks_sum']:.1f} s, derivations {res['derivations']:.1f} s |"
                    f" {uptime().split('load')[-1]}",
                    flush=True,
                )
    same = all(p == prints[0] for p in prints)
    best = {k: min(v) for k, v in walls.items()}
    print(
        f"best before {best['before']:.1f} s, best after {best['after']:.1f} s:"
        f" ratio {best['before'] / best['after']:.2f}x; same statuses and rows:"
        f" {'yes' if same else 'NO'}"
    )
    print("after: ", uptime())
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
