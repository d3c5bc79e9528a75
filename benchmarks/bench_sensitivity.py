"""Benchmark: exact sensitivity profile of a random truth table (run by hand).

    /work/venv/bin/python benchmarks/bench_sensitivity.py [-N 24] [--boofun-N 14] [--repeat 3]

Each implementation runs in its own process (fresh allocator, no shared thread pools), times
the best of ``--repeat`` calls after a warm-up, and reports the peak resident memory it added
beyond the interpreter (ru_maxrss), per string, including the 1-byte-per-string table.

* verify: verify.boolean.sensitivity_profile (Numba, O(N 2^N), no per-string array).
* numpy: vectorised XOR-flip baseline: s = sum_i (t != t[idx ^ 2^i]), then bincount.
* boofun: boofun.analysis.sensitivity.sensitivity_profile (per-string Python loop) at a
  smaller N (it is far too slow at N = 24); compared with verify at that same N.
Target (issue 2): verify at N = 24 under 2 s on 2 cores, memory under 4 bytes per string.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np


def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _table(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, size=1 << n, dtype=np.uint8)


def _numpy_profile(t: np.ndarray, n: int) -> np.ndarray:
    idx = np.arange(t.shape[0], dtype=np.int64)
    s = np.zeros(t.shape[0], dtype=np.uint8)
    for i in range(n):
        s += t != t[idx ^ (1 << i)]
    return np.bincount(s, minlength=n + 1)


def _worker(impl: str, n: int, seed: int, repeat: int) -> dict:
    if impl == "verify":
        from verify.boolean import sensitivity_profile

        sensitivity_profile(_table(8, 0))  # load the cached kernels (serial and parallel)
        sensitivity_profile(_table(20, 0))

        def fn(t):
            return sensitivity_profile(t)

    elif impl == "numpy":

        def fn(t):
            return _numpy_profile(t, n)

    elif impl == "boofun":
        import boofun as bf
        from boofun.analysis.sensitivity import sensitivity_profile as bsp

        def fn(t):
            g = bf.create(t.astype(bool).tolist(), n=n)
            return np.bincount(bsp(g), minlength=n + 1)

    else:
        raise SystemExit(f"unknown implementation {impl}")
    base = _rss_bytes()
    table = _table(n, seed)
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(table)
        times.append(time.perf_counter() - start)
    peak = _rss_bytes()
    return {
        "impl": impl,
        "N": n,
        "seconds": min(times),
        "bytes_per_string": max(0, peak - base) / float(1 << n),
        "profile_head": [int(v) for v in np.asarray(result)[:4]],
    }


def _run(impl: str, n: int, seed: int, repeat: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--worker",
            impl,
            "-N",
            str(n),
            "--seed",
            str(seed),
            "--repeat",
            str(repeat),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-N", type=int, default=24)
    parser.add_argument("--boofun-N", type=int, default=14)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args.N, args.seed, args.repeat)))
        return

    rows = [_run("verify", args.N, args.seed, args.repeat), _run("numpy", args.N, args.seed, 1)]
    assert rows[0]["profile_head"] == rows[1]["profile_head"], "implementations disagree"
    small = [_run("verify", args.boofun_N, args.seed, args.repeat)]
    try:
        small.append(_run("boofun", args.boofun_N, args.seed, 1))
        assert small[0]["profile_head"] == small[1]["profile_head"], "boofun disagrees"
    except subprocess.CalledProcessError as exc:
        print(f"boofun skipped: {exc.stderr.strip().splitlines()[-1:]}")
    print(
        f"random truth table, seed {args.seed}; each implementation in its own process;"
        f" best of {args.repeat} (baselines: 1 call)"
    )
    print(f"{'impl':>8} {'N':>3} {'seconds':>10} {'bytes/string':>13} {'ratio vs verify':>16}")
    for group in (rows, small):
        ours = group[0]["seconds"]
        for r in group:
            print(
                f"{r['impl']:>8} {r['N']:>3} {r['seconds']:>10.4f} {r['bytes_per_string']:>13.2f}"
                f" {r['seconds'] / ours:>16.1f}"
            )
    ok_time = rows[0]["seconds"] < 2.0
    ok_mem = rows[0]["bytes_per_string"] < 4.0
    print(f"target at N={args.N}: time < 2 s: {ok_time}; memory < 4 B/string: {ok_mem}")


if __name__ == "__main__":
    main()
