"""The environment variables the command line depends on, checked before any work.

Numba reads its variables when it is imported, and a bad one surfaces as a traceback from deep
inside it (``NUMBA_NUM_THREADS=0``: "Number of threads specified must be > 0"), or, for
``NUMBA_DISABLE_JIT=1``, as a NotImplementedError when the first kernel built from Numba
intrinsics (``stages.simd``'s ``ln_block``, which has no Python body) runs. Each is one line
here, naming the variable, with exit code 2.
"""

from __future__ import annotations

import os

from verify.errors import ValidationError


def check_environment(environ: dict[str, str] | None = None) -> None:
    """Raise ValidationError naming the first variable the toolkit cannot run with."""
    env = os.environ if environ is None else environ
    threads = env.get("NUMBA_NUM_THREADS")
    if threads is not None and threads.strip():
        try:
            ok = int(threads) >= 1
        except ValueError:
            ok = False
        if not ok:
            raise ValidationError(
                "NUMBA_NUM_THREADS", "an integer >= 1, or unset (one thread per core)", threads
            )
    no_jit = env.get("NUMBA_DISABLE_JIT", "").strip()
    if no_jit not in ("", "0"):
        raise ValidationError(
            "NUMBA_DISABLE_JIT",
            "unset or 0: the command line runs compiled kernels only",
            no_jit,
            "some kernels are built from Numba intrinsics, which have no Python body; the"
            " variable is for the tests' mutation runs",
        )
