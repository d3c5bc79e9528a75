"""What a run will cost, estimated before any work, and refused when the machine lacks it.

The estimates are orders of magnitude from measured costs (docs/cli.md, "Sizes"), on one core
of the 2-core reference machine, numba 0.68:

- a transformer on all 2^N strings (certified truth table, profile): about ``5 us`` per string
  per layer at D = 16 (N = 20, L = 2: 7.9 s; N = 22: 52 s on a loaded machine), growing with D;
  its memory about 64 bytes per string above a worker's 200 MB of imports;
- a random function or a family member: about 0.2 us per string, 16 bytes per string;
- a sweep's parent keeps each finished cell's record (about 2 KB in memory, more with the
  profile's N + 1 counts) until the summary is printed.

A run whose estimated memory exceeds what the machine has free (``MemAvailable``) or whose
estimated time exceeds :data:`MAX_HOURS` is refused with exit code 2 and the estimate;
``--allow-large`` runs it anyway. Only the standard library is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from verify.errors import ValidationError

MAX_HOURS = 24.0
WORKER_BASE_BYTES = 200e6
RECORD_BYTES = 2000.0
ALLOW_FLAG = "--allow-large"


def per_string(kind: str, d_model: int = 16, n_layers: int = 1) -> tuple[float, float]:
    """(seconds, bytes) per input string of one cell of ``kind`` (see the module docstring)."""
    if kind == "transformer":
        width = max(1.0, d_model / 16) ** 2
        return 5e-6 * n_layers * width, 64.0 * max(1.0, d_model / 16)
    return 2e-7, 16.0


@dataclass
class Estimate:
    """Seconds and bytes a run is expected to need, and what was counted."""

    seconds: float
    bytes: float
    what: str

    def text(self) -> str:
        return f"{self.what}: about {_duration(self.seconds)} and {_size(self.bytes)} of memory"


def _duration(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 172800:
        return f"{s / 3600:.0f} h"
    return f"{s / 86400:.3g} days"


def _size(b: float) -> str:
    for unit, f in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= f:
            return f"{b / f:.3g} {unit}"
    return f"{b / 1e3:.3g} KB"


def available_bytes() -> float:
    """Memory the machine has free now (``MemAvailable`` of /proc/meminfo; else the physical
    memory; else infinity: nothing to compare with)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def sweep_estimate(
    n_cells: int,
    n_bits: list[int],
    kind: str,
    d_model: list[int],
    n_layers: list[int],
    workers: int,
) -> Estimate:
    """A sweep of ``n_cells`` cells on ``workers`` processes, cells spread evenly over the N,
    D and L of the grid (the costliest combination sets the per-worker memory)."""
    workers = max(1, workers)
    secs = []
    for n in n_bits:
        for d in d_model if kind == "transformer" else [16]:
            for ell in n_layers if kind == "transformer" else [1]:
                secs.append((1 << n) * per_string(kind, d, ell)[0] + 1e-3)
    mean_cell = sum(secs) / len(secs)
    peak_strings = 1 << max(n_bits)
    _, b = per_string(kind, max(d_model), max(n_layers))
    memory = workers * (WORKER_BASE_BYTES + peak_strings * b) + n_cells * RECORD_BYTES
    return Estimate(n_cells * mean_cell / workers, memory, f"{n_cells} cells on {workers} workers")


def function_estimate(kind: str, n_bits: int, d_model: int = 16, n_layers: int = 1) -> Estimate:
    """One Boolean function (a family member, or a transformer's table) on all 2^N strings."""
    s, b = per_string(kind, d_model, n_layers)
    return Estimate((1 << n_bits) * s, (1 << n_bits) * b, f"2^{n_bits} strings")


def table_flops_per_string(d: int, h: int, d_ff: int, n_layers: int, n_positions: int) -> int:
    """Flops one string needs in the certified table's exhaustive kernel, a fused multiply-add
    counted as 2, stage by stage from the shapes (d width, h heads, d_ff MLP width, S
    positions; benchmarks/limit.py gives the stages and checks them against docs/model.md):
    layer 0 at a position from the (bit, position) tables, the high-position sums once per
    block of 64 strings, a later layer at one position (nothing tabulated), the readout. L = 1
    needs layer 0 at the readout only; L >= 2 layer 0 and layers 1 .. L - 2 at every position
    and layer L - 1 at the readout."""
    layer0, high_sums, later, readout = _stage_flops(d, h, d_ff, n_positions)
    if n_layers == 1:
        return layer0 + high_sums + readout
    middle = (n_layers - 2) * n_positions * later
    return n_positions * layer0 + high_sums + middle + later + readout


def onepass_flops_per_string(d: int, h: int, d_ff: int, n_layers: int, n_positions: int) -> int:
    """Flops one string needs in check-model's one pass (``verify.model.certified.onepass``): the
    certified table's (:func:`table_flops_per_string`) plus the last layer at the other S - 1
    positions (midpoints only, for the variances of its norms)."""
    layer0, _, later, _ = _stage_flops(d, h, d_ff, n_positions)
    last = layer0 if n_layers == 1 else later
    return table_flops_per_string(d, h, d_ff, n_layers, n_positions) + (n_positions - 1) * last


def _stage_flops(d: int, h: int, d_ff: int, n_positions: int) -> tuple[int, int, int, int]:
    """The exhaustive kernel's flops per string: layer 0 at one position from the tables, the
    high-position sums (once per block), a later layer at one position, the readout."""
    layer0 = 3 * d * h + d_ff * (3 * h + 4) + 2 * d * d_ff + 14 * d + 2 * d
    high_sums = 2 * h * (d + 1)
    later = 8 * d * d + h * n_positions * (4 * d // h + 20) + 4 * d * d_ff + 14 * d
    return layer0, high_sums, later, 2 * d


#: Flops per second one worker reaches in the certified table's float64 pass (radii included):
#: measured with check-model --executor on a (128, 2, 2) model at N = 16 (docs/clusters.md),
#: 22 GFLOP per CPU second of a local pool's worker, 12-14 on dask; the estimate takes 15.
TABLE_FLOPS_PER_CORE = 15e9
#: Bytes per string the command holds while gathering a table (packed labels, the int8 labels,
#: the uint8 function for the profile, a family's table).
GATHER_BYTES_PER_STRING = 3.2
#: Bytes per string of a sub-cube on its worker (T, radius, labels, tiers, the exhaustive
#: kernel's output), above :data:`WORKER_BASE_BYTES`.
SUBCUBE_BYTES_PER_STRING = 40.0


def check_model_estimate(
    n_bits: int,
    d_model: int,
    n_heads: int,
    d_ff: int,
    n_layers: int,
    n_positions: int,
    workers: int,
    subcube_strings: int,
) -> Estimate:
    """check-model's certified table of 2^N strings split into sub-cubes of
    ``subcube_strings`` on ``workers`` one-thread workers (``--executor``): the time from the
    kernel's flops (:func:`table_flops_per_string`) at :data:`TABLE_FLOPS_PER_CORE` per
    worker; the memory of the command (the gathered table) and, on each worker, one
    sub-cube."""
    workers = max(1, workers)
    flops = table_flops_per_string(d_model, n_heads, d_ff, n_layers, n_positions)
    seconds = (1 << n_bits) * flops / (TABLE_FLOPS_PER_CORE * workers)
    memory = (1 << n_bits) * GATHER_BYTES_PER_STRING
    per_worker = WORKER_BASE_BYTES + subcube_strings * SUBCUBE_BYTES_PER_STRING
    what = (
        f"2^{n_bits} strings ({flops / 1e6:.3g} MFLOP each) on {workers} worker(s),"
        f" sub-cubes of {subcube_strings} strings ({_size(per_worker)} on each worker)"
    )
    return Estimate(seconds, memory, what)


def check_size(flag: str, est: Estimate, allow: bool) -> Estimate:
    """ValidationError (exit 2) naming ``flag`` when ``est`` exceeds the free memory or
    :data:`MAX_HOURS`, unless ``allow`` (``--allow-large``)."""
    if allow:
        return est
    free = available_bytes()
    if est.bytes > free:
        why = f"{_size(free)} of memory free"
    elif est.seconds > MAX_HOURS * 3600:
        why = f"more than {MAX_HOURS:.0f} h"
    else:
        return est
    raise ValidationError(
        flag, f"a run this machine can hold ({why})", est.text(), f"{ALLOW_FLAG} runs it anyway"
    )


__all__ = [
    "ALLOW_FLAG",
    "MAX_HOURS",
    "Estimate",
    "available_bytes",
    "check_model_estimate",
    "check_size",
    "function_estimate",
    "table_flops_per_string",
    "sweep_estimate",
]
