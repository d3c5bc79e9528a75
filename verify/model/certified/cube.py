"""check-model's passes over the cube {0,1}^N, whole or split into sub-cubes on an executor.

Local (:func:`diagnostics_pass`): the float64 forward pass with diagnostics of every string
(``forward(..., diagnostics=True, engine="numba")``), ``DIAGNOSTICS_CHUNK`` strings at a time,
each chunk's layer-norm variances (K x S per string) reduced at once to the blowups beta and
beta_hr (each string from its own row, and the kernel computes each block of 32 strings on its
own): the numbers of one call on all strings, without its (2^N, K, S) arrays of variances and
z (670 MB each at N = 20, (D, L) = (128, 2)).

Split (:func:`certify_on_executor`): the cube cut into the 2^k sub-cubes of a fixed prefix of
its k highest bits (string indices p 2^(N-k) .. (p + 1) 2^(N-k) - 1 for prefix p); each is
certified on a worker by :func:`certify_subcube` (``truth_table_range``: the tiers of
``truth_table`` on the sub-cube's strings), which sends back its labels bit-packed, the
indices of any string left uncertain and the counts of each tier; the command gathers them into
one bit-packed table (:class:`GatheredTable`). A certified label is the sign of the exact
output, so it does not depend on where it was computed: the gathered table is the one a local
run certifies. A sub-cube whose task fails (a worker lost, an exception) is submitted again,
up to ``attempts`` times in all; then the run stops with an error naming it. No sub-cube is
ever skipped and no result of another sub-cube is accepted in its place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify._threads import one_blas_thread
from verify.boolean.function import MAX_EXHAUSTIVE_N
from verify.errors import ValidationError
from verify.model.certified.float64_pass import float64_pass_for
from verify.model.certified.truth_table import (
    DEFAULT_PRECISIONS,
    DOUBLE_DOUBLE_MIN_OPEN,
    _float64_stage,
    _higher_tiers,
)
from verify.model.spec.params import Params
from verify.validation import check_int, check_real

DIAGNOSTICS_CHUNK = 1 << 15  # strings per call of the diagnostics kernel (a multiple of 32)
MIN_FREE_BITS = 6  # a sub-cube holds at least one 64-string block of the exhaustive kernel
MAX_FREE_BITS = 20  # at most 2^20 strings per sub-cube: a worker's memory stays bounded
LABEL_ONE, LABEL_UNDECIDED, LABEL_UNCERTAIN = 1, -1, -2


# ----------------------------------------------------------------------------- local pass
def diagnostics_pass(params: Params, n: int, chunk: int = DIAGNOSTICS_CHUNK) -> Any:
    """``forward(params, all_bit_strings(n), diagnostics=True, engine="numba")`` with the same
    T, y_readout, beta and beta_hr, computed ``chunk`` strings at a time (module doc); var, z
    and tau are not kept (None)."""
    from verify.boolean.function import all_bit_strings
    from verify.model.plain.forward import ForwardResult, forward

    cfg = params.config
    cfg.check_n_bits(n)
    if chunk < 32 or chunk % 32:
        raise ValidationError("chunk", "a positive multiple of 32 (the kernel's blocks)", chunk)
    size = 1 << n
    t = np.empty(size)
    y_r = np.empty((size, cfg.d_model))
    beta = np.empty(size)
    beta_hr = np.empty(size)
    for lo in range(0, size, chunk):
        hi = min(size, lo + chunk)
        part = forward(params, all_bit_strings(n, lo, hi), diagnostics=True, engine="numba")
        t[lo:hi], y_r[lo:hi], beta[lo:hi], beta_hr[lo:hi] = (
            part.T, part.y_readout, part.beta, part.beta_hr
        )  # fmt: skip
    return ForwardResult(T=t, y_readout=y_r, beta=beta, beta_hr=beta_hr)


@dataclass(frozen=True)
class TableRange:
    """``CertifiedTruthTable``'s arrays for the strings lo .. hi - 1 of the 2^n only."""

    n: int
    lo: int
    hi: int
    margin: float
    T: np.ndarray
    label: np.ndarray
    method: np.ndarray
    tier: np.ndarray


@one_blas_thread
def truth_table_range(
    params: Params,
    N: int,
    lo: int,
    hi: int,
    margin: float = 0.0,
    *,
    precisions: Sequence[int] = DEFAULT_PRECISIONS,
    double_double: bool = True,
) -> TableRange:
    """``truth_table`` of the strings of index lo .. hi - 1 only (a sub-cube when the range is
    that of a fixed prefix of high bits), by the same tiers: every label it certifies is the
    one the whole table certifies (a certified label is the exact sign, and a string's float64
    (T, radius) does not depend on the other strings of a call); the routing between tiers is
    decided on the range's own strings."""
    if not isinstance(params, Params):
        raise ValidationError("params", "a verify.model.Params", type(params).__name__)
    n = check_int("N", N, minimum=1, maximum=MAX_EXHAUSTIVE_N, hint="2^N strings")
    params.config.check_n_bits(n)
    lo = check_int("lo", lo, minimum=0, maximum=(1 << n) - 1)
    hi = check_int("hi", hi, minimum=lo + 1, maximum=1 << n)
    xi = check_real("margin", margin, minimum=0.0)
    precs = [check_int("precisions", p, minimum=53) for p in precisions]
    use_dd = double_double and (1 << n) >= DOUBLE_DOUBLE_MIN_OPEN  # both layer-norm forms
    ev = float64_pass_for(params, n)
    t, label, tier = _float64_stage(params, n, xi, "numba", use_dd, ev, lo, hi)
    method = _higher_tiers(params, n, xi, precs, use_dd, t, label, tier, lo)
    return TableRange(n=n, lo=lo, hi=hi, margin=xi, T=t, label=label, method=method, tier=tier)


# ----------------------------------------------------------------------------- sub-cubes
@dataclass(frozen=True)
class SubcubeLabels:
    """What a worker sends back for the sub-cube ``prefix`` of ``prefix_bits`` high bits."""

    n: int
    prefix_bits: int
    prefix: int
    ones: np.ndarray  # uint8, the sub-cube's labels == 1 packed (bitorder little)
    uncertain: np.ndarray  # int64 global indices of strings left uncertain
    undecided: np.ndarray  # int64 global indices certified undecided (margin > 0 only)
    counts: dict[str, int]  # strings per method: float64, high_precision, uncertain
    tiers: dict[str, int]  # strings per tier (truth_table.TIER_NAMES)
    seconds: float = 0.0  # wall seconds on the worker
    cpu_seconds: float = 0.0  # the worker process's CPU seconds meanwhile (all its threads)


def subcube_range(n: int, prefix_bits: int, prefix: int) -> tuple[int, int]:
    """String indices [lo, hi) of the sub-cube whose ``prefix_bits`` highest bits are
    ``prefix`` (x_N the most significant bit of the index)."""
    free = n - prefix_bits
    return prefix << free, (prefix + 1) << free


def certify_subcube(
    params: Params, n: int, prefix_bits: int, prefix: int, margin: float = 0.0
) -> SubcubeLabels:
    """Certified labels of one sub-cube (module doc), as a worker computes them."""
    import time

    from verify.model.certified.truth_table import (
        METHOD_FLOAT64,
        METHOD_HIGH_PRECISION,
        METHOD_UNCERTAIN,
        TIER_NAMES,
    )

    start, cpu = time.perf_counter(), time.process_time()
    lo, hi = subcube_range(n, prefix_bits, prefix)
    part = truth_table_range(params, n, lo, hi, margin)
    counts = {
        name: int(np.count_nonzero(part.method == m))
        for name, m in (
            ("float64", METHOD_FLOAT64),
            ("high_precision", METHOD_HIGH_PRECISION),
            ("uncertain", METHOD_UNCERTAIN),
        )
    }
    tiers = {name: int(np.count_nonzero(part.tier == k)) for k, name in enumerate(TIER_NAMES)}
    return SubcubeLabels(
        n=n,
        prefix_bits=prefix_bits,
        prefix=prefix,
        ones=np.packbits(part.label == LABEL_ONE, bitorder="little"),
        uncertain=np.flatnonzero(part.label == LABEL_UNCERTAIN).astype(np.int64) + lo,
        undecided=np.flatnonzero(part.label == LABEL_UNDECIDED).astype(np.int64) + lo,
        counts=counts,
        tiers=tiers,
        seconds=time.perf_counter() - start,
        cpu_seconds=time.process_time() - cpu,
    )


def choose_prefix_bits(n: int, slots: int) -> int:
    """The number k of fixed high bits: at least 4 sub-cubes per worker slot, at most 2^20
    strings each, at least 2^6 (so tiny cubes stay whole: k = 0 below N = 7)."""
    k = max(n - MAX_FREE_BITS, math.ceil(math.log2(4 * max(1, slots))))
    return max(0, min(k, n - MIN_FREE_BITS))


@dataclass
class GatheredTable:
    """The certified table of all 2^N strings, gathered from the sub-cubes: labels bit-packed
    (``ones``), the strings left uncertain or certified undecided by index, and the counts.
    ``label`` and ``certified`` give the arrays of :class:`CertifiedTruthTable` (unpacked on
    first use); no per-string T is kept."""

    n: int
    margin: float
    prefix_bits: int
    ones: np.ndarray
    uncertain: np.ndarray
    undecided: np.ndarray
    counts: dict[str, int]
    tiers: dict[str, int]
    resubmitted: int = 0  # sub-cube tasks submitted again after a failure
    worker_seconds: float = 0.0  # sum of the sub-cubes' wall times on their workers
    worker_cpu_seconds: float = 0.0  # sum of their workers' CPU times meanwhile
    _label: np.ndarray | None = field(default=None, repr=False)

    @property
    def label(self) -> np.ndarray:
        """(2^N,) int8: 1, 0, -1 (certified undecided), -2 (uncertain)."""
        if self._label is None:
            lab = np.unpackbits(self.ones, count=1 << self.n, bitorder="little").view(np.int8)
            lab[self.undecided] = LABEL_UNDECIDED
            lab[self.uncertain] = LABEL_UNCERTAIN
            self._label = lab
        return self._label

    @property
    def certified(self) -> np.ndarray:
        """(2^N,) bool: the label is proven."""
        out = np.ones(1 << self.n, dtype=bool)
        out[self.uncertain] = False
        return out

    @property
    def n_float64(self) -> int:
        return self.counts["float64"]

    @property
    def n_high_precision(self) -> int:
        return self.counts["high_precision"]

    @property
    def n_uncertain(self) -> int:
        return self.counts["uncertain"]

    def function(self) -> Any:
        """The computed Boolean function; raises if any bit is uncertain or undecided."""
        from verify.boolean.function import BooleanFunction

        if self.uncertain.size or self.undecided.size:
            raise ValidationError(
                "truth table",
                "every bit certified 0 or 1",
                f"{self.uncertain.size} uncertain, {self.undecided.size} undecided",
            )
        return BooleanFunction(self.label.view(np.uint8))


class SubcubeLost(RuntimeError):
    """A sub-cube failed on every attempt: the table cannot be completed."""


def certify_on_executor(
    params: Params,
    n: int,
    executor: Any,
    slots: int,
    margin: float = 0.0,
    *,
    prefix_bits: int | None = None,
    attempts: int = 3,
    task: Callable[..., SubcubeLabels] = certify_subcube,
    progress: Callable[[int, int], None] | None = None,
) -> GatheredTable:
    """Certify all 2^n strings as 2^k sub-cubes on ``executor`` (a concurrent.futures executor
    with ``slots`` workers; at most 2 slots' worth in flight), gathered into one table (module
    doc). A failed sub-cube is resubmitted, up to ``attempts`` submissions in all, then
    :class:`SubcubeLost`. ``progress(done, total)`` after each sub-cube."""
    import concurrent.futures as cf

    cfg = params.config
    cfg.check_n_bits(n)
    k = choose_prefix_bits(n, slots) if prefix_bits is None else prefix_bits
    if not 0 <= k <= max(0, n - 3):
        raise ValidationError("prefix_bits", f"0 <= k <= N - 3 = {n - 3}", k)
    total = 1 << k
    ones = np.zeros((1 << n) // 8 if n >= 3 else 1, dtype=np.uint8)
    free_bytes = (1 << (n - k)) // 8
    uncertain: list[np.ndarray] = []
    undecided: list[np.ndarray] = []
    counts = {"float64": 0, "high_precision": 0, "uncertain": 0}
    tiers: dict[str, int] = {}
    tries = [0] * total
    queue = list(range(total - 1, -1, -1))  # popped from the end: prefix 0 first
    running: dict[cf.Future, int] = {}
    done = 0
    resubmitted = 0
    seconds = cpu = 0.0
    in_flight = max(1, 2 * slots)

    def submit() -> None:
        while queue and len(running) < in_flight:
            p = queue.pop()
            tries[p] += 1
            running[executor.submit(task, params, n, k, p, margin)] = p

    submit()
    while running:
        finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
        for fut in finished:
            p = running.pop(fut)
            try:
                part = fut.result()
                _check_part(part, n, k, p)
            except Exception as exc:  # a lost worker, a task that raised, a wrong answer
                if tries[p] >= attempts:
                    for other in running:
                        other.cancel()
                    lo, hi = subcube_range(n, k, p)
                    raise SubcubeLost(
                        f"sub-cube {p} of {total} (strings {lo}..{hi - 1}) failed"
                        f" {tries[p]} times, last: {type(exc).__name__}: {exc}"
                    ) from exc
                queue.append(p)
                resubmitted += 1
                continue
            if n >= 3:
                ones[p * free_bytes : (p + 1) * free_bytes] = part.ones
            else:
                ones[:] = part.ones
            uncertain.append(part.uncertain)
            undecided.append(part.undecided)
            for key in counts:
                counts[key] += part.counts[key]
            for key, v in part.tiers.items():
                tiers[key] = tiers.get(key, 0) + v
            seconds += part.seconds
            cpu += part.cpu_seconds
            done += 1
            if progress is not None:
                progress(done, total)
        submit()
    return GatheredTable(
        n=n,
        margin=margin,
        prefix_bits=k,
        ones=ones,
        uncertain=np.sort(np.concatenate(uncertain)) if uncertain else np.zeros(0, np.int64),
        undecided=np.sort(np.concatenate(undecided)) if undecided else np.zeros(0, np.int64),
        counts=counts,
        tiers=tiers,
        resubmitted=resubmitted,
        worker_seconds=seconds,
        worker_cpu_seconds=cpu,
    )


def _check_part(part: object, n: int, k: int, prefix: int) -> None:
    """Refuse a result that is not the sub-cube asked for (RuntimeError: treated as a failed
    task, so the sub-cube is computed again)."""
    if not isinstance(part, SubcubeLabels):
        raise RuntimeError(f"a sub-cube task returned {type(part).__name__}")
    size = 1 << (n - k)
    lo, hi = subcube_range(n, k, prefix)
    if (part.n, part.prefix_bits, part.prefix) != (n, k, prefix):
        raise RuntimeError(f"sub-cube {prefix} answered for ({part.prefix_bits}, {part.prefix})")
    if part.ones.shape != (max(1, size // 8),) or sum(part.counts.values()) != size:
        raise RuntimeError(f"sub-cube {prefix}: {sum(part.counts.values())} labels, not {size}")
    for idx in (part.uncertain, part.undecided):
        if idx.size and (idx.min() < lo or idx.max() >= hi):
            raise RuntimeError(f"sub-cube {prefix}: indices outside {lo}..{hi - 1}")
