"""The computed limit of an exhaustive truth table: flops per string and the machine's rate.

``flops_per_string`` counts the floating-point operations one string needs in the exhaustive
kernel's design (a fused multiply-add counted as 2), stage by stage, from the shapes alone:

- layer 0 at a position, from the (bit, position) tables: the attention sums 3 D H, the hidden
  row of the first MLP layer d_ff (3 H + 4) (W_1 folded into the value tables), the second MLP
  layer 2 D d_ff, two layer norms 7 D each, residuals 2 D;
- the high-position partial sums, amortised over a block of 64 strings: 2 H (D + 1);
- a later layer at one position (nothing tabulated): the query W_q h, the folded key W_k^T q,
  W_v applied to the weighted sum and W_o, 2 D^2 each (8 D^2), the scores and the weighted
  sum over the S positions H S (4 D / H + 20) (20 for the exp), the MLP 4 D d_ff, two layer
  norms 14 D;
- the readout 2 D.

L = 1 needs layer 0 at the readout position only; L >= 2 needs layer 0 at all S positions,
layers 1 .. L - 2 at all S positions and layer L - 1 at the readout position. The counts were
checked against the stage profile of docs/model.md ("Distance to the limit").

``machine_rate`` measures the rate of the kernel's own dense product (``stages.dense.
matvec_mid``: 16 output rows x 64 inputs x 64 strings, operands in L1, one thread) in GFLOP/s:
what a pass made only of such products would reach. The limit of a table is
flops x 2^N / (rate x cores).
"""

from __future__ import annotations

import time


def flops_per_string(d: int, h: int, d_ff: int, n_layers: int, n_positions: int) -> int:
    """Flops one string needs (module doc): d width, h heads, d_ff MLP width, S positions
    (``verify.sizes.table_flops_per_string``, which check-model's estimates use too)."""
    from verify.sizes import table_flops_per_string

    return table_flops_per_string(d, h, d_ff, n_layers, n_positions)


def machine_rate(seconds: float = 0.3) -> float:
    """GFLOP/s of ``matvec_mid`` on 16 x 64 weights against 64 strings, one thread (best of
    five timings of ``seconds`` / 5 each)."""
    import numpy as np

    from verify.model.stages.dense import matvec_mid

    rng = np.random.default_rng(0)
    rows, n, strings = 16, 64, 64
    x = rng.standard_normal((n, strings))
    w = rng.standard_normal((rows, n))
    bias = rng.standard_normal(rows)
    out = np.empty((rows, strings))
    wt = np.ascontiguousarray(w.T)  # matvec_mid takes W transposed
    matvec_mid(x, wt, bias, 0, rows, out)  # compile or load from the cache
    best = 0.0
    for _ in range(5):
        calls, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds / 5:
            for _ in range(100):
                matvec_mid(x, wt, bias, 0, rows, out)
            calls += 100
        rate = 2.0 * rows * n * strings * calls / (time.perf_counter() - t0) / 1e9
        best = max(best, rate)
    return best


if __name__ == "__main__":
    print(f"matvec_mid: {machine_rate():.1f} GFLOP/s (one thread)")
    for layers in (1, 2, 3):
        print(f"D=16 H=2 d_ff=64 L={layers} N=20 (S=21): {flops_per_string(16, 2, 64, layers, 21)}")
