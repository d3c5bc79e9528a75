"""The rigorous float64 passes of one (params, N), each run at most once and shared: truth
tables at several margins (``verify.model.certified.truth_table.truth_tables``) and a constancy test
(``verify.checks.certified_k0``) read the same (T, radius) instead of preparing the tables and
running the kernels again for each.

A string's (T, radius) does not depend on which other strings a call evaluates: the
exhaustive kernel computes each block of 2^min(N, 6) strings on its own (the high positions'
sums once per block, ``verify.model.exhaustive.exhaustive_kernel``) and the per-string kernel each
string on its own, so a range served from a larger memoised range, or a string from an earlier
batch, carries the very numbers a fresh call gives (tests/test_float64_pass.py checks it bit for
bit). The margin enters only the labels read off (T, radius), never the passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from verify.errors import ValidationError
from verify.model.spec.params import Params

if TYPE_CHECKING:
    from verify.model.exhaustive.exhaustive_pass import ExhaustiveTables, ExhaustiveWeights
    from verify.model.per_string.per_string_pass import FastTables

# strings per exhaustive-kernel call: each call is one parallel launch, which costs up to a
# scheduler time slice (~4 ms measured) when another process holds a core
EXHAUSTIVE_CHUNK = 1 << 20


def bits_of(idx: np.ndarray, n: int) -> np.ndarray:
    """The bit strings (rows, x_1 first) of the string indices ``idx``."""
    return ((idx[:, None] >> np.arange(n)[None, :]) & 1).astype(np.uint8)


class Float64Pass:
    """Memoised rigorous float64 (T, radius) of the 2^n strings of one model: the exhaustive
    kernel per range of strings, the per-string kernel per string, with the tables prepared
    once (lazily; the kernel modules load on first use). ``weights``:
    ``exhaustive_weights(params)``, shared by the passes of the same params at several N. The
    params must not change while the pass is in use."""

    def __init__(self, params: Params, n: int, weights: ExhaustiveWeights | None = None) -> None:
        self.params = params
        self.n = params.config.check_n_bits(n)
        from verify.model.stages.bundles import LO_BITS

        self.lo_bits = min(self.n, LO_BITS)
        self._weights = weights
        self._tables: ExhaustiveTables | None = None
        self._per_string_tables: FastTables | None = None
        self._ranges: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._ps_mid = np.empty(0)
        self._ps_rad = np.empty(0)
        self._ps_done = np.zeros(0, dtype=bool)

    @property
    def weights(self) -> ExhaustiveWeights:
        """The N-independent weights and norms (computed on first use)."""
        if self._weights is None:
            from verify.model.exhaustive.exhaustive_pass import exhaustive_weights

            self._weights = exhaustive_weights(self.params)
        return self._weights

    @property
    def tables(self) -> ExhaustiveTables:
        """The exhaustive kernel's tables (prepared on first use)."""
        if self._tables is None:
            from verify.model.exhaustive.exhaustive_pass import prepare_exhaustive

            self._tables = prepare_exhaustive(self.params, self.n, self.weights)
        return self._tables

    def adopt(
        self, tables: ExhaustiveTables, start: int, stop: int, t: np.ndarray, r: np.ndarray
    ) -> None:
        """Take the exhaustive kernel's ``tables`` (of these params and N) and its (T, radius)
        of the strings [start, stop), computed elsewhere with them
        (``verify.model.certified.onepass``: the same kernel call that also computed the
        diagnostics, the same numbers)."""
        if tables.n_bits != self.n or t.shape != (stop - start,) or r.shape != t.shape:
            raise ValidationError("tables", f"exhaustive tables and arrays of N = {self.n}",
                                  tables.n_bits)  # fmt: skip
        self._tables = tables
        self._ranges[start, stop] = t, r

    def compact(self) -> None:
        """Drop the exhaustive kernel's layer-0 tables (the largest arrays) once its ranges are
        computed; the per-string tables stay, and a new range prepares them again."""
        if self._tables is not None:
            self._per_string_tables = self._tables.per_string
            self._tables = None

    def exhaustive(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(T, radius) of the strings [start, stop) by the exhaustive kernel: the memoised arrays
        (or views of them), which callers must not modify."""
        if (start, stop) in self._ranges:
            return self._ranges[start, stop]
        for (a, b), (t, r) in self._ranges.items():
            if a <= start and stop <= b:
                return t[start - a : stop - a], r[start - a : stop - a]
        from verify.model.exhaustive.exhaustive_pass import exhaustive_T

        t, r = exhaustive_T(self.params, self.n, tables=self.tables, start=start, stop=stop)
        self._ranges[start, stop] = t, r
        return t, r

    def exhaustive_all(self) -> tuple[np.ndarray, np.ndarray]:
        """(T, radius) of all 2^n strings by the exhaustive kernel, in chunks of
        ``EXHAUSTIVE_CHUNK`` strings."""
        size = 1 << self.n
        parts = [
            self.exhaustive(a, min(size, a + EXHAUSTIVE_CHUNK))
            for a in range(0, size, EXHAUSTIVE_CHUNK)
        ]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def per_string(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(T, componentwise-radius bound) of the strings ``idx`` by the per-string kernel;
        each string is evaluated once however many calls ask for it."""
        if self._ps_done.size == 0:
            size = 1 << self.n
            self._ps_mid, self._ps_rad = np.empty(size), np.empty(size)
            self._ps_done = np.zeros(size, dtype=bool)
        need = idx[~self._ps_done[idx]]
        if need.size:
            from verify.model.per_string.per_string_pass import fast_T  # kernels load on first use

            if self._per_string_tables is None:
                self._per_string_tables = self.tables.per_string
            tb = self._per_string_tables
            mid, rad = fast_T(self.params, bits_of(need, self.n), bounds=True, tables=tb)
            self._ps_mid[need], self._ps_rad[need] = mid, rad
            self._ps_done[need] = True
        return self._ps_mid[idx], self._ps_rad[idx]


def float64_pass_for(params: Params, n: int, passes: Float64Pass | None = None) -> Float64Pass:
    """``passes`` after checking that it belongs to (params, n), or a new pass."""
    if passes is None:
        return Float64Pass(params, n)
    if passes.params is not params or passes.n != n:
        raise ValidationError("float64 pass", f"a Float64Pass of these params at N = {n}", passes.n)
    return passes
