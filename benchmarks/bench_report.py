"""Benchmark: `report --quick` warm, serial (-j 1) against parallel (-j J), in the same run
(run by hand; not a test).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_report.py [-j 2] [--repeat 1] [--only ID ...]
        [--executor local|dask|dask://HOST:PORT|ray]

Each run is a fresh `python -m verify report --quick --no-progress` subprocess writing into a
temporary folder (the repository's reports are untouched), after one warm-up run that fills the
Numba cache if needed. Printed per run: the wall time, report.json's phases (kernels, loading
the statements, checks, figures, waiting for the derivations) and its statuses; then the ratio
serial / parallel of the best wall times, whether both runs gave the same statuses and rows
(they must: same seed), and `uptime` before and after (the machine may be shared: the load
averages say how much). Target (issue 29): parallel warm in <= 20 s on 2 idle cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f} (os.getloadavg)"


def run_report(out: Path, extra: list[str], only: list[str] | None) -> tuple[float, dict]:
    """One `report --quick` subprocess: its wall time and its report.json."""
    argv = [sys.executable, "-m", "verify", "report", "--quick", "--no-progress"]
    argv += ["--out", str(out), *extra] + (["--only", *only] if only else [])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not (out / "report.json").is_file():
        sys.exit(f"report failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, json.loads((out / "report.json").read_text())


def fingerprint(doc: dict[str, Any]) -> list[Any]:
    """Statuses and rows of every check: what must not depend on -j."""
    return [
        (st["id"], st["status"], [(c["name"], c["status"], c["rows"]) for c in st["checks"]])
        for st in doc["statements"]
    ]


def describe(name: str, wall: float, doc: dict[str, Any]) -> str:
    ph = doc["summary"]["phases"]
    parts = ", ".join(
        f"{k[:-2]} {ph[k]:.1f}"
        for k in ("kernels_s", "statements_s", "checks_s", "figures_s", "derivations_s")
        if k in ph
    )
    counts = ", ".join(f"{n} {k}" for k, n in doc["summary"]["counts"].items() if n)
    return f"{name:<22} {wall:7.1f} s wall  ({parts} s)  [{counts}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--executor", default="local")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", nargs="+", default=None)
    args = ap.parse_args()
    print("before:", uptime(), flush=True)
    parallel = ["-j", str(args.jobs)] + (
        ["--executor", args.executor] if args.executor != "local" else []
    )
    label = f"-j {args.jobs}" + (f" --executor {args.executor}" if args.executor != "local" else "")
    walls: dict[str, list[float]] = {"serial (-j 1)": [], label: []}
    docs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        run_report(Path(tmp) / "warmup", ["-j", "1"], ["Prop 3.5"])  # fills the cache
        for r in range(args.repeat):
            for name, extra in (("serial (-j 1)", ["-j", "1"]), (label, parallel)):
                wall, doc = run_report(
                    Path(tmp) / f"{r}-{len(walls[name])}-{extra[1]}", extra, args.only
                )
                walls[name].append(wall)
                docs[name] = doc
                print(describe(name, wall, doc), "|", uptime().split("load")[-1], flush=True)
    best = {k: min(v) for k, v in walls.items()}
    print(
        f"best serial {best['serial (-j 1)']:.1f} s, best {label} {best[label]:.1f} s:"
        f" ratio serial/parallel {best['serial (-j 1)'] / best[label]:.2f}x"
    )
    a, b = fingerprint(docs["serial (-j 1)"]), fingerprint(docs[label])
    same = a == b
    print("same statuses and rows:", "yes" if same else "NO")
    for x, y in zip(a, b, strict=False):
        for cx, cy in zip(x[2], y[2], strict=False):
            if cx != cy:
                print(f"  differs: {x[0]} [{cx[0]}]: {cx[1]} vs {cy[1]}")
                for rx, ry in zip(cx[2], cy[2], strict=False):
                    if rx != ry:
                        print(
                            f"    serial   {json.dumps(rx)[:300]}\n"
                            f"    parallel {json.dumps(ry)[:300]}"
                        )
    print("after: ", uptime())
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
