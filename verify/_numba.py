"""The one decorator policy for every Numba kernel in the toolkit.

Explicit signatures (compiled eagerly, so no JIT inside a timed Hypothesis example),
``cache=True`` (a second process loads the machine code in ~0.2 s), ``error_model="numpy"``
(x / 0.0 gives inf or nan, as IEEE says, instead of raising: eps = 0 layer norms meet it), and
no fastmath (it breaks isnan/isfinite and reorders sums, so rounding bounds would not hold).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def kernel(signature: Any, *, parallel: bool = False) -> Callable[[Callable], Any]:
    """Decorate a pure numerical kernel with the project's Numba policy."""
    return numba.njit(
        signature, cache=True, error_model="numpy", nogil=True, parallel=parallel, fastmath=False
    )
