"""check-model's analysis against its flop floor: the certified table, the one pass (table and
diagnostics), the plain diagnostic pass and the whole analysis, wall and CPU seconds, side by
side with the floor of each.

The model: (D, L, H) (default (128, 2, 2): Hahn & Rofin's paper size) in the layout ``--layout
hr`` (Hahn & Rofin's: token and position tables of width D/2 concatenated, learned positions
of exactly N rows, post-LN, d_ff = D, no eos, eps = 1e-5) or ``spec`` (the spec's defaults:
added sinusoidal positions, eos, d_ff = 4 D), xavier_normal init, seed 0. An untrained model
costs what a trained one does: every string is certified either way (the counts say by which
tier).

Floors (flops x 2^N / (rate x cores)):
- the certified table: ``verify.sizes.table_flops_per_string`` (the exhaustive kernel's
  stages, benchmarks/limit.py) at the rate of the kernel's own dense product
  (``limit.machine_rate``, one thread);
- the one pass (``verify.model.certified.onepass.table_and_diagnostics``, what check-model
  runs): the table's flops plus the last layer at the other S - 1 positions
  (``verify.sizes.onepass_flops_per_string``) at that rate;
- the plain diagnostic pass (every position of every layer, ``plain.diagnostics``; what
  check-model ran after the table before the one pass, and still runs where the exhaustive
  kernel does not apply: parameter balls): 2 (4 D^2 +
  2 D d_ff) + 4 S D per position and layer (products, scores and weighted sums; the layer
  norms not counted), less layer 0's q, k, v projections (6 D^2 per position, tabulated by
  (token, position)), at the single-thread BLAS rate of np.dot on the kernel's shapes
  (:func:`blas_rate`).

Timed in one process after a warm-up: ``truth_table`` (the certified table), the one pass, the
plain diagnostic pass (``verify.model.certified.cube.diagnostics_pass``) and check-model's
whole analysis (``verify.commands.check_model.analyse``: the one pass, the profile and the
statements; its floor is the one pass's). The load
average is printed before and after each timing and CPU seconds (user + system of the
process) next to wall seconds: on a shared machine the CPU seconds are the comparable number.
``--stages numpy`` also times the diagnostic pass with the numpy engine (the reference) and
checks that both give the same blowups to 1e-9.

Run by hand: ``python benchmarks/bench_check_model.py [--N 16 20] [-D 128] [--L 2] [-H 2]
[--layout hr|spec] [--norm post|pre] [--stages table onepass diagnostics numpy analyse]``. The rates
are measured in the run: on a loaded machine they drop with the timings, so the floors and
ratios are only meaningful on idle cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from limit import machine_rate

from verify._threads import blas_on_one_thread
from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, forward, init_params, truth_table
from verify.sizes import onepass_flops_per_string, table_flops_per_string


def flops_per_string(
    d: int, d_ff: int, n_layers: int, n_positions: int, layer0_table: bool = False
) -> int:
    """Flops of the diagnostic pass per string (module doc); ``layer0_table``: less layer 0's
    q, k, v projections (computed once per (token, position))."""
    per_position = 2 * (4 * d * d + 2 * d * d_ff) + 4 * n_positions * d
    saved = n_positions * 6 * d * d if layer0_table else 0
    return n_layers * n_positions * per_position - saved


def blas_rate(d: int, d_ff: int, n_positions: int) -> float:
    """Single-thread GFLOP/s of np.dot on the kernel's shapes (32 strings x S rows)."""
    rng = np.random.default_rng(0)
    rows = 32 * n_positions
    shapes = [(d, 3 * d), (d, d), (d, d_ff), (d_ff, d)]
    mats = [(rng.random((rows, k)), rng.random((k, m)), np.empty((rows, m))) for k, m in shapes]
    flops = sum(2 * rows * k * m for k, m in shapes)
    with blas_on_one_thread():
        for x, w, o in mats:
            np.dot(x, w, o)
        best = np.inf
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                for x, w, o in mats:
                    np.dot(x, w, o)
            best = min(best, (time.perf_counter() - t0) / 20)
    return flops / best / 1e9


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s, result) of one call."""
    w0, c0 = time.perf_counter(), cpu_seconds()
    out = fn()
    return time.perf_counter() - w0, cpu_seconds() - c0, out


def load() -> str:
    """The load averages over 1, 5, 15 minutes."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def model(args: argparse.Namespace, n: int) -> Any:
    """The benchmark's model at input length n (module doc)."""
    if args.layout == "hr":
        cfg = ModelConfig(
            d_model=args.D, n_layers=args.L, n_heads=args.H, d_ff=args.D, ln_eps=1e-5,
            norm_first=args.norm == "pre", final_norm=args.norm == "pre", eos=False,
            pos_encoding="learned", embedding="concat", max_len=n,
        )  # fmt: skip
    else:
        cfg = ModelConfig(d_model=args.D, n_layers=args.L, n_heads=args.H, ln_eps=1e-5,
                          norm_first=args.norm == "pre")  # fmt: skip
    return init_params(cfg, "xavier_normal", seed=0)


def line(what: str, wall: float, cpu: float, floor: float) -> str:
    return (
        f"  {what}: {wall:.2f} s wall, {cpu:.2f} s CPU; floor {floor:.2f} s:"
        f" {wall / floor:.2f}x the floor in wall time, {cpu / cores() / floor:.2f}x in CPU"
        f" time / {cores()} cores  [{load()}]"
    )


def cores() -> int:
    return len(os.sched_getaffinity(0))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Run on an idle machine for the numbers of docs/model.md; the load average is"
        " printed with every timing.",
    )
    ap.add_argument("--N", type=int, nargs="+", default=[16], help="input lengths (16)")
    ap.add_argument("-D", type=int, default=128, help="d_model (128)")
    ap.add_argument("--L", type=int, default=2, help="layers (2)")
    ap.add_argument("-H", type=int, default=2, help="heads (2)")
    ap.add_argument("--layout", choices=["hr", "spec"], default="hr", help="module doc (hr)")
    ap.add_argument("--norm", choices=["post", "pre"], default="post", help="post (default)")
    ap.add_argument(
        "--stages",
        nargs="+",
        choices=["table", "onepass", "diagnostics", "numpy", "analyse"],
        default=["table", "onepass", "analyse"],
        help="what to time (default: table onepass analyse; diagnostics: the plain diagnostic"
        " pass; numpy: that pass with the numpy engine too, compared with the Numba one)",
    )
    args = ap.parse_args()
    from verify.commands.check_model import analyse
    from verify.model.certified.cube import diagnostics_pass
    from verify.model.certified.onepass import table_and_diagnostics

    rate_table = machine_rate()
    print(f"{cores()} cores; the table kernel's product: {rate_table:.1f} GFLOP/s on one thread")
    for n in args.N:
        params = model(args, n)
        cfg = params.config
        s = cfg.seq_len(n)
        analyse(params, 3)  # every kernel compiled or loaded
        rate_blas = blas_rate(cfg.d_model, cfg.d_ff, s)
        f_table = table_flops_per_string(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_layers, s)
        f_one = onepass_flops_per_string(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_layers, s)
        f_diag = flops_per_string(cfg.d_model, cfg.d_ff, cfg.n_layers, s, layer0_table=True)
        floor_table = f_table * 2.0**n / (rate_table * 1e9 * cores())
        floor_one = f_one * 2.0**n / (rate_table * 1e9 * cores())
        floor_diag = f_diag * 2.0**n / (rate_blas * 1e9 * cores())
        print(
            f"(D, L, H) = ({cfg.d_model}, {cfg.n_layers}, {cfg.n_heads}), d_ff = {cfg.d_ff},"
            f" {args.layout} layout, {args.norm}-LN, N = {n} (S = {s}): per string"
            f" {f_table / 1e6:.3g} MFLOP (table), {f_one / 1e6:.3g} MFLOP (one pass: table and"
            f" diagnostics); the two passes before it: the table + {f_diag / 1e6:.3g} MFLOP"
            f" (plain diagnostic pass); BLAS {rate_blas:.1f} GFLOP/s on one thread"
        )
        if "table" in args.stages:
            w, c, tt = timed(lambda: truth_table(params, n))  # noqa: B023
            print(line("certified table", w, c, floor_table) + f" {tt.counts}")
        if "onepass" in args.stages:
            w, c, (tt, res) = timed(lambda: table_and_diagnostics(params, n))  # noqa: B023
            print(line("one pass (table and diagnostics)", w, c, floor_one)
                  + f" {tt.counts}; max beta {np.nanmax(res.beta):.6g}")  # fmt: skip
        if "diagnostics" in args.stages or "numpy" in args.stages:
            w, c, res = timed(lambda: diagnostics_pass(params, n))  # noqa: B023
            print(line("diagnostic pass", w, c, floor_diag))
        if "numpy" in args.stages:
            w_np, c_np, r_np = timed(
                lambda: forward(params, all_bit_strings(n), True)  # noqa: B023
            )
            same = np.allclose(res.beta, r_np.beta, rtol=1e-9, atol=0, equal_nan=True)
            print(line("diagnostic pass, numpy engine", w_np, c_np, floor_diag)
                  + f"; beta equal to 1e-9: {same}")  # fmt: skip
        if "analyse" in args.stages:
            w, c, out = timed(lambda: analyse(params, n))  # noqa: B023
            print(line("whole analysis", w, c, floor_one))
            print(f"    max beta {out['beta_max']:.6g}, {out['truth_table']}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  peak memory of the process so far: {peak:.0f} MB")


if __name__ == "__main__":
    main()
