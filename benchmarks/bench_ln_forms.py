"""truth_table of a model in the annotated layer-norm form (issue 44): the Numba tiers (the
default route: exhaustive and per-string float64 kernels, then double-double, then arb) against
the MidRad + arb route the form took before the kernels computed it (``engine="numpy"``,
``double_double=False``), and torch's form on the kernels; D = 16, L = 2, H = 2, d_ff = 64,
pre-LN, eps 1e-6, xavier_uniform init (seed 0). Prints wall time, the tiers' counts, that the
routes' tables agree, and the machine's load (other processes share the cores).

    python benchmarks/bench_ln_forms.py [N ...]      (default: 12 16)
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

import numpy as np

from verify.model import ModelConfig, Params, init_params, truth_table


def model(form: str) -> Params:
    cfg = ModelConfig(
        d_model=16, n_layers=2, n_heads=2, d_ff=64, ln_eps=1e-6, norm_first=True,
        pos_encoding="learned", max_len=20, ln_form="annotated",
    )  # fmt: skip
    p = init_params(cfg, "xavier_uniform", seed=0)
    return Params(dataclasses.replace(cfg, ln_form=form), dict(p))


def timed(params: Params, n: int, **kw: object) -> tuple[float, object]:
    t0 = time.perf_counter()
    table = truth_table(params, n, **kw)
    return time.perf_counter() - t0, table


def main(ns: list[int]) -> None:
    annotated, torch_form = model("annotated"), model("torch")
    for p in (annotated, torch_form):
        truth_table(p, 4)  # load (or compile) the kernels outside the timings
    for n in ns:
        load = os.getloadavg()[0]
        t_kern, kern = timed(annotated, n)
        t_mid, mid = timed(annotated, n, engine="numpy", double_double=False)
        t_torch, _ = timed(torch_form, n)
        same = np.array_equal(kern.label, mid.label)
        print(
            f"N = {n}: annotated on the kernels {t_kern:.2f} s (tiers {kern.tier_counts}),"
            f" on MidRad + arb {t_mid:.2f} s ({t_mid / t_kern:.0f}x), torch's form on the"
            f" kernels {t_torch:.2f} s; tables equal: {same}; load {load:.1f} -> "
            f"{os.getloadavg()[0]:.1f} (1-min average)",
            flush=True,
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [12, 16])
