"""The sinusoidal position table as arb balls (moved out of ``verify.model.arithmetic.contexts``,
which re-exports it)."""

from __future__ import annotations

import numpy as np
from flint import arb


def sinusoidal_arb(n_positions: int, width: int) -> np.ndarray:
    """P[n, 2i] = sin(n / 10000^(2i/width)), P[n, 2i+1] = cos(same) as arb balls."""
    table = np.empty((n_positions, width), dtype=object)
    for j in range(width):
        i2 = j - (j % 2)
        freq = arb(10000) ** (arb(-i2) / width)
        for n in range(n_positions):
            angle = arb(n) * freq
            table[n, j] = angle.sin() if j % 2 == 0 else angle.cos()
    return table
