"""How long a test may wait for something a process promises to do "at once" (acknowledge a
signal, end its workers), without a fixed wall-clock limit that a busy machine exceeds (issue
43: two 120 s subprocess timeouts failed the suite at load 8 on 2 cores).

A wait that only guards against a hang has no limit at all: the subprocess is waited for until
it ends. A promise of promptness ("acknowledged within a second") is checked against the
promised time scaled by how busy the machine is: the load average per core (at least 1), so a
run at load 8 on 2 cores allows 4 s for a 1 s promise, and an idle machine holds the promise
to the second. ``VERIFY_TEST_PATIENCE`` multiplies it further (e.g. 3 under a debugger).
"""

from __future__ import annotations

import os


def busy_factor() -> float:
    """The load average of the last minute per core, at least 1."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this system
        load = 0.0
    return max(1.0, load / (os.cpu_count() or 1))


def patience(seconds: float) -> float:
    """``seconds`` (the time promised on an idle machine) scaled by :func:`busy_factor` and
    ``VERIFY_TEST_PATIENCE``."""
    return seconds * busy_factor() * float(os.environ.get("VERIFY_TEST_PATIENCE", "1"))
