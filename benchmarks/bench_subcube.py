"""Sub-cube certification (issue 29) against the per-string tiers on random-init sweep cells:
the same cells (transformer_cell: D = 16, H = 2, eps = 0, the sweep's defaults) run with and
without the sub-cube pass in the same process (``"subcube": false`` against the default,
which runs it where ``subcube_pays``), one after the other per cell; prints cells/s of
each, their ratio, how many strings the sub-cube pass settled, whether the records are
identical, and the load (uptime) before and after.

    python benchmarks/bench_subcube.py [-N 16] [--seeds 3] [--layers 1 2]
        [--schemes uniform xavier_uniform]
"""

from __future__ import annotations

import argparse
import os
import time

from verify.sweep import RUNNERS


def _uptime() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-N", type=int, default=16)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--schemes", nargs="+", default=["uniform", "xavier_uniform"])
    args = ap.parse_args()
    from verify.model import ModelConfig, init_params
    from verify.model.subcube.subcube_pass import certify_subcubes

    run = RUNNERS["transformer"]
    base = {"d_model": 16, "n_heads": 2, "ln_eps": 0.0, "n_bits": args.N}
    for layers in args.layers:  # warm up (imports, Numba) both paths
        run({**base, "n_layers": layers, "scheme": "uniform", "seed": 0})
        run({**base, "n_layers": layers, "scheme": "uniform", "seed": 0, "subcube": False})
    print(f"N = {args.N}, D = 16, H = 2, eps = 0, seeds 0..{args.seeds - 1}; {_uptime()}")
    for scheme in args.schemes:
        for layers in args.layers:
            t_off = t_on = 0.0
            settled = bounds = 0
            same = True
            for seed in range(args.seeds):
                cell = {**base, "n_layers": layers, "scheme": scheme, "seed": seed}
                t0 = time.perf_counter()
                off = run({**cell, "subcube": False})
                t1 = time.perf_counter()
                on = run(cell)  # the default: the pass runs where subcube_pays
                t2 = time.perf_counter()
                t_off, t_on = t_off + t1 - t0, t_on + t2 - t1
                same &= off == on
                cfg = ModelConfig(d_model=16, n_layers=layers, n_heads=2, ln_eps=0.0)
                sub = certify_subcubes(init_params(cfg, scheme, seed), args.N)
                settled += sub.n_settled
                bounds += sub.n_bounds
            n = args.seeds
            print(
                f"  {scheme:15s} L={layers}: without {n / t_off:7.3f} cells/s,"
                f" with sub-cube {n / t_on:7.3f} cells/s, ratio {t_off / t_on:5.2f}x;"
                f" sub-cube settled {settled / (n << args.N):6.1%} of the strings"
                f" ({bounds} bounds); records identical: {same}"
            )
    print(f"done; {_uptime()}")


if __name__ == "__main__":
    main()
