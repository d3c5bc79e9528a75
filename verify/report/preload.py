"""What a report's worker processes import, imported once in the local pool's fork server.

A local report pool's workers come from a "forkserver" (``verify.sweep.executors``). Each
worker used to import the libraries (scipy.stats, sympy, mpmath, hypothesis, matplotlib), the
check runner, the proof obligations and the figure code itself: ~1.2 s of CPU per worker on an
idle machine. The fork server imports this module once (``local_executor(preload=...)``) and
every worker starts as its fork with all of it in memory.

No Numba kernel is imported here: loading a parallel kernel (even from the cache) starts
Numba's OpenMP threading layer, and a child forked after that aborts when it runs a parallel
kernel. The workers load the kernels themselves (``tests/test_report_preload.py`` checks that
importing this module launches no threading layer and imports no kernel module).
"""

from __future__ import annotations

import importlib

#: imported in this order: the libraries, the figure code (and with it the check runner), the
#: proof runner; then the obligations' step modules (``verify.proofs.runner.load``)
MODULES = (
    "hypothesis",
    "matplotlib.figure",  # the object API the figures use: no backend is chosen
    "mpmath",
    "scipy.stats",
    "sympy",
    "verify.report.drawing",
    "verify.proofs.runner",
)

for _name in MODULES:
    importlib.import_module(_name)
importlib.import_module("verify.proofs.runner").load()
