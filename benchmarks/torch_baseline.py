"""PyTorch float64 baseline for the exhaustive truth-table benchmark (issue 3, "Speed").

``torch_truth_table_T(params, N, batch)`` computes T(x) for all 2^N strings (index order of
model-spec: x_1 is the least significant bit) with the model built by ``verify.torch.to_torch``:
batches of strings, ``torch.inference_mode``, every layer but the last through
``nn.TransformerEncoderLayer`` (its fused fast path when H is even), and the last layer at the
readout position only (``SpecTransformer.forward(..., readout_only=True)``).

Run by hand (``python benchmarks/torch_baseline.py``); it prints strings/s per (L, N) in this
process and checks the values against ``verify.model.plain.forward`` on a sample of strings.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, Params, forward, init_params
from verify.torch import to_torch
from verify.validation import check_int

DEFAULT_BATCH = 4096


def torch_truth_table_T(
    params: Params, N: int, batch: int = DEFAULT_BATCH, threads: int | None = None
) -> np.ndarray:
    """T(x) for every x in {0,1}^N, shape (2^N,), string index i = sum_n x_n 2^(n-1).

    ``threads``: torch intra-op threads for the call (None keeps torch's setting).
    """
    n = params.config.check_n_bits(check_int("N", N, minimum=1, maximum=24))
    batch = check_int("batch", batch, minimum=1)
    module = to_torch(params)
    total = 1 << n
    out = np.empty(total)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads, minimum=1))
    try:
        with torch.inference_mode():
            for start in range(0, total, batch):
                stop = min(total, start + batch)
                bits = all_bit_strings(n, start, stop)
                out[start:stop] = module(bits, readout_only=True).numpy()
    finally:
        torch.set_num_threads(before)
    return out


def _check_sample(params: Params, N: int, t: np.ndarray, seed: int) -> float:
    """Worst |T_torch - T_verify| over 512 sampled strings, in units of sum |w_i y_i| + |omega|."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(t.size, size=min(512, t.size), replace=False)
    bits = ((idx[:, None] >> np.arange(N)[None, :]) & 1).astype(np.uint8)
    ref = forward(params, bits)
    scale = np.abs(ref.y_readout * params["readout.weight"]).sum(axis=1)
    scale += abs(float(params["readout.bias"]))
    return float((np.abs(t[idx] - ref.T) / scale).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--N", type=int, nargs="+", default=[12, 14, 16])
    parser.add_argument("--L", type=int, nargs="+", default=[1, 2])
    parser.add_argument("-D", type=int, default=16)
    parser.add_argument("-H", type=int, default=2)
    parser.add_argument("--batch", type=int, nargs="+", default=[DEFAULT_BATCH])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"torch {torch.__version__}, float64, intra-op threads "
        f"{args.threads or torch.get_num_threads()}, this process only (no numba/numpy pools "
        "running alongside)"
    )
    print(f"{'L':>2} {'N':>3} {'batch':>6} {'seconds':>9} {'strings/s':>11} {'worst err':>10}")
    for n_layers in args.L:
        cfg = ModelConfig(d_model=args.D, n_layers=n_layers, n_heads=args.H, eos=True)
        params = init_params(cfg, "xavier_uniform", seed=args.seed)
        torch_truth_table_T(params, 4, threads=args.threads)  # warm-up
        for n in args.N:
            for batch in args.batch:
                start = time.perf_counter()
                t = torch_truth_table_T(params, n, batch=batch, threads=args.threads)
                seconds = time.perf_counter() - start
                err = _check_sample(params, n, t, args.seed)
                print(
                    f"{n_layers:>2} {n:>3} {batch:>6} {seconds:>9.3f} "
                    f"{t.size / seconds:>11.0f} {err:>10.1e}"
                )


if __name__ == "__main__":
    main()
