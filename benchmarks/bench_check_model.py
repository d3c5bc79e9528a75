"""check-model's forward pass with diagnostics: the Numba kernel against the numpy pass.

For a model at (D, L) (default (32, 4), H = 2, d_ff = 4 D, eps = 1e-5, post-LN, xavier_normal
init, seed 0) and each N: ``forward(params, all 2^N strings, diagnostics=True)`` with
``engine="numba"`` (``verify.model.kernels.diagnostics``) and ``engine="numpy"`` (the
reference, what check-model used before), each after a warm-up call, wall and CPU seconds, the
ratio numpy / numba measured in this run, and the compute floor of the pass: its flops per
string (every position in every layer: 2 (3 D^2 + D^2 + 2 D d_ff) for the products plus
4 S D for the scores and the weighted sums, the layer norms not counted) times 2^N, at the
single-thread float64 BLAS rate measured at the start of the run (np.dot of the kernel's own
shapes) times the cores. ``--analyse`` also times check-model's whole analysis
(``verify.commands.check_model.analyse``: certified truth table, profile, statements) once
with each engine. The load average (``os.getloadavg``) is printed before each timing: the
machine is shared.

Run by hand: ``python benchmarks/bench_check_model.py [--N 16 20] [-D 32] [--L 4]
[--norm post|pre] [--no-numpy-above 18] [--analyse]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from verify._threads import blas_on_one_thread
from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, Params, forward, init_params


def flops_per_string(d: int, d_ff: int, n_layers: int, n_positions: int) -> int:
    """Flops of the full pass per string (module doc)."""
    per_position = 2 * (4 * d * d + 2 * d * d_ff) + 4 * n_positions * d
    return n_layers * n_positions * per_position


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


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s, result) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def load() -> str:
    """The load averages over 1, 5, 15 minutes."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def with_engine(engine: str) -> Callable[..., Any]:
    """verify.model.forward with ``engine`` forced (check-model's analysis imports it lazily)."""

    def fwd(params: Params, bits: object, diagnostics: bool = False, **_: Any) -> Any:
        return forward(params, bits, diagnostics=diagnostics, engine=engine)

    return fwd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, nargs="+", default=[16])
    ap.add_argument("-D", type=int, default=32)
    ap.add_argument("--L", type=int, default=4)
    ap.add_argument("--norm", choices=["post", "pre"], default="post")
    ap.add_argument("--no-numpy-above", type=int, default=20, help="skip numpy for larger N")
    ap.add_argument("--analyse", action="store_true", help="time check-model's whole analysis")
    args = ap.parse_args()
    cfg = ModelConfig(d_model=args.D, n_layers=args.L, n_heads=2, ln_eps=1e-5,
                      norm_first=args.norm == "pre")  # fmt: skip
    params = init_params(cfg, "xavier_normal", seed=0)
    cores = len(os.sched_getaffinity(0))
    print(f"(D, L) = ({args.D}, {args.L}), H = 2, d_ff = {cfg.d_ff}, {args.norm}-LN, {cores} cores")
    forward(params, all_bit_strings(2), diagnostics=True, engine="numba")  # compile or load
    for n in args.N:
        s = cfg.seq_len(n)
        rate = blas_rate(cfg.d_model, cfg.d_ff, s)
        flops = flops_per_string(cfg.d_model, cfg.d_ff, cfg.n_layers, s) * 2.0**n
        floor = flops / (rate * 1e9 * cores)
        bits = all_bit_strings(n)
        print(f"N = {n}: {flops_per_string(cfg.d_model, cfg.d_ff, cfg.n_layers, s)} flops per"
              f" string; BLAS {rate:.1f} GFLOP/s on one thread; floor {floor:.2f} s on"
              f" {cores} cores")  # fmt: skip
        print(f"  [{load()}]")
        w_nb, c_nb, r_nb = timed(lambda: forward(params, bits, True, engine="numba"))  # noqa: B023
        print(f"  numba: {w_nb:.2f} s wall, {c_nb:.2f} s CPU, {flops / w_nb / 1e9:.1f} GFLOP/s,"
              f" {w_nb / floor:.2f}x the floor")  # fmt: skip
        if n <= args.no_numpy_above:
            print(f"  [{load()}]")
            w_np, c_np, r_np = timed(lambda: forward(params, bits, True))  # noqa: B023
            agree = np.allclose(r_nb.var, r_np.var, rtol=1e-12, atol=0, equal_nan=True)
            print(f"  numpy: {w_np:.2f} s wall, {c_np:.2f} s CPU; numpy / numba = "
                  f"{w_np / w_nb:.2f}x wall; var agree to 1e-12: {agree}")  # fmt: skip
        if args.analyse:
            import verify.model as vm
            from verify.commands.check_model import analyse

            analyse(params, 3)  # every kernel of the analysis compiled or loaded
            real = vm.forward
            try:
                for engine in ("numba", "numpy"):
                    if engine == "numpy" and n > args.no_numpy_above:
                        continue
                    vm.forward = with_engine(engine)
                    print(f"  [{load()}]")
                    w, c, out = timed(lambda: analyse(params, n))  # noqa: B023
                    print(f"  check-model analysis with {engine}: {w:.2f} s wall, {c:.2f} s CPU"
                          f" (max beta {out['beta_max']:.6g})")  # fmt: skip
            finally:
                vm.forward = real


if __name__ == "__main__":
    main()
