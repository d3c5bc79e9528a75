"""The :class:`BooleanFunction` type: a function {0,1}^N -> {0,1} stored as its truth table.

Bit order (docs/model-spec.md): the string x = (x_1, ..., x_N) has index
i = sum_n x_n 2^(n-1), so x_1 is the least significant bit; ``table[i] = f(x)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.validation import check_int

#: Largest N for the exhaustive methods: a uint8 truth table of 2^30 bytes is 1 GiB.
MAX_EXHAUSTIVE_N = 30
#: Largest N for :func:`all_bit_strings` of a whole cube: (2^N, N) bytes, 400 MiB at N = 24.
MAX_BIT_STRINGS_N = 24

_SAMPLED_HINT = "use verify.boolean.estimate_profile (the sampled estimator) for larger N"


def check_n(value: object, *, name: str = "N", maximum: int = MAX_EXHAUSTIVE_N) -> int:
    """Validate an input length ``1 <= N <= maximum`` for an exhaustive method."""
    n = check_int(name, value, minimum=1)
    if n > maximum:
        raise ValidationError(
            name,
            f"an integer <= {maximum} for the exhaustive method (2^N strings)",
            n,
            _SAMPLED_HINT,
        )
    return n


def all_bit_strings(N: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Rows ``start..stop-1`` of the (2^N, N) uint8 array whose row i is the string of index i.

    Column 0 is x_1 (the least significant bit of i). Without ``start``/``stop`` the whole cube
    is returned (N <= 24); a slice may be taken for any N <= 30 (chunked enumeration).
    """
    n = check_int("N", N, minimum=1)
    whole = start == 0 and stop is None
    limit = MAX_BIT_STRINGS_N if whole else MAX_EXHAUSTIVE_N
    check_n(n, maximum=limit)
    size = 1 << n
    start = check_int("start", start, minimum=0, maximum=size)
    stop = size if stop is None else check_int("stop", stop, minimum=start, maximum=size)
    idx = np.arange(start, stop, dtype=np.int64)
    shifts = np.arange(n, dtype=np.int64)
    return ((idx[:, None] >> shifts[None, :]) & 1).astype(np.uint8)


def bits_to_index(bits: np.ndarray) -> np.ndarray:
    """Index i = sum_n x_n 2^(n-1) of each row of a (B, N) 0/1 array (N <= 62)."""
    arr = np.asarray(bits)
    if arr.ndim != 2 or arr.shape[1] > 62:
        raise ValidationError("bits", "a (B, N) 0/1 array with N <= 62", arr.shape)
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise ValidationError("bits", "values in {0, 1}", "other values")
    weights = np.left_shift(np.int64(1), np.arange(arr.shape[1], dtype=np.int64))
    return arr.astype(np.int64) @ weights


def _as_table(table: object, name: str = "table") -> np.ndarray:
    """Validate a truth table (bool or 0/1 values, length 2^N, N >= 1); return it as uint8."""
    try:
        arr = np.asarray(table)
    except (TypeError, ValueError) as exc:  # pragma: no cover - exotic inputs
        raise ValidationError(name, "a 0/1 array of length 2^N", type(table)) from exc
    if arr.ndim != 1:
        raise ValidationError(name, "a one-dimensional 0/1 array of length 2^N", arr.shape)
    size = arr.shape[0]
    if size < 2 or size & (size - 1):
        raise ValidationError(name, "a length that is a power of two, 2^N with N >= 1", size)
    if size > (1 << MAX_EXHAUSTIVE_N):
        raise ValidationError(name, f"at most 2^{MAX_EXHAUSTIVE_N} entries", size, _SAMPLED_HINT)
    if arr.dtype == np.bool_:
        return arr.view(np.uint8) if arr.flags.c_contiguous else arr.astype(np.uint8)
    if arr.dtype.kind not in "biuf":
        raise ValidationError(name, "bool or 0/1 numeric values", arr.dtype)
    if arr.dtype == np.uint8:
        bad = int(np.count_nonzero(arr > 1))
    else:
        bad = size - int(np.count_nonzero((arr == 0) | (arr == 1)))
    if bad:
        raise ValidationError(name, "values in {0, 1} only", f"{bad} other entries")
    return np.ascontiguousarray(arr, dtype=np.uint8)


class BooleanFunction:
    """f: {0,1}^N -> {0,1} given by its truth table (uint8, index order of the model spec).

    ``BooleanFunction(table, name=None)``; ``.n`` is N, ``.table`` the uint8 table (read-only),
    ``.name`` a label (e.g. "majority(N=15)").
    """

    __slots__ = ("_table", "n", "name", "params")

    def __init__(
        self, table: object, name: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        tab = _as_table(table)
        if tab is table or (isinstance(table, np.ndarray) and np.shares_memory(tab, table)):
            tab = tab.copy()
        tab.setflags(write=False)
        self._table = tab
        self.n = int(tab.shape[0]).bit_length() - 1
        self.name = name if name is not None else f"table(N={self.n})"
        self.params = dict(params or {})

    @property
    def table(self) -> np.ndarray:
        """The truth table: uint8 array of length 2^N, entry i = f(string of index i)."""
        return self._table

    @classmethod
    def from_callable(
        cls,
        n: int,
        fn: Callable[[np.ndarray], object],
        name: str | None = None,
        *,
        chunk: int = 1 << 16,
    ) -> BooleanFunction:
        """Tabulate ``fn``, which maps a (B, n) uint8 bit array to B outputs in {0, 1}."""
        n = check_n(n, name="n")
        if not callable(fn):
            raise ValidationError("fn", "a callable on (B, n) bit arrays", type(fn))
        size = 1 << n
        out = np.empty(size, dtype=np.uint8)
        for lo in range(0, size, chunk):
            hi = min(size, lo + chunk)
            values = np.asarray(fn(all_bit_strings(n, lo, hi)))
            if values.shape != (hi - lo,):
                raise ValidationError(
                    "fn", f"{hi - lo} outputs for {hi - lo} strings", values.shape
                )
            out[lo:hi] = _as_table_values(values)
        return cls(out, name=name or getattr(fn, "__name__", None))

    def __call__(self, bits: np.ndarray) -> np.ndarray:
        """Evaluate on a (B, N) 0/1 array (or one string of length N); returns uint8."""
        arr = np.asarray(bits)
        single = arr.ndim == 1
        arr2 = arr[None, :] if single else arr
        if arr2.ndim != 2 or arr2.shape[1] != self.n:
            raise ValidationError("bits", f"a (B, {self.n}) 0/1 array", arr.shape)
        vals = self._table[bits_to_index(arr2)]
        return vals[0] if single else vals

    def __reduce__(self) -> tuple:
        return (BooleanFunction, (self._table, self.name, self.params))

    def __len__(self) -> int:
        return self._table.shape[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BooleanFunction):
            return NotImplemented
        return self.n == other.n and bool(np.array_equal(self._table, other._table))

    def __hash__(self) -> int:
        return hash((self.n, self._table.tobytes()))

    def __repr__(self) -> str:
        return f"BooleanFunction({self.name!r}, N={self.n})"

    def _repr_markdown_(self) -> str:
        """Notebook display: the name and the exact sensitivity profile K_0..K_N."""
        from verify.boolean.kernels import profile_counts

        profile = profile_counts(self._table, self.n)
        return profile_markdown(f"**{self.name}** on N = {self.n} bits", profile, 1 << self.n)


def profile_markdown(title: str, counts: np.ndarray, total: int) -> str:
    """A markdown table of K_k and K_k / total for k = 0..N, under ``title``."""
    rows = [f"| {k} | {int(c)} | {int(c) / total:.4g} |" for k, c in enumerate(counts)]
    return "\n".join([title, "", "| k | K_k | fraction |", "|---|---|---|", *rows])


def _as_table_values(values: np.ndarray) -> np.ndarray:
    """0/1 (or bool) outputs of a callable as uint8; anything else is rejected, not clipped."""
    if values.dtype == np.bool_:
        return values.astype(np.uint8)
    if values.dtype.kind not in "biuf" or not np.isin(values, (0, 1)).all():
        raise ValidationError("fn", "outputs in {0, 1}", "other values")
    return values.astype(np.uint8)


def as_table(f: BooleanFunction | object, name: str = "f") -> np.ndarray:
    """The uint8 truth table of a BooleanFunction or of a raw 0/1 table (validated)."""
    if isinstance(f, BooleanFunction):
        return f.table
    return _as_table(f, name)
