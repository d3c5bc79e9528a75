"""Numba kernels for exact sensitivity and Fourier analysis (pure numerics, no validation).

All kernels take a uint8 truth table ``t`` of length 2^n in the model-spec bit order and run in
O(n 2^n) time. The callers in :mod:`verify.boolean.analysis` and :mod:`verify.boolean.fourier`
validate their input; these functions assume it is valid.
"""

from __future__ import annotations

import numba
import numpy as np

from verify._numba import kernel

_U8 = numba.types.Array(numba.uint8, 1, "C")
_U8_RO = numba.types.Array(numba.uint8, 1, "C", readonly=True)  # BooleanFunction tables
_I64 = numba.types.Array(numba.int64, 1, "C")

_N_CHUNKS = 64  # work units of the parallel kernels (each keeps its own histogram)


@kernel([numba.void(t, numba.int64, _U8) for t in (_U8, _U8_RO)], parallel=True)
def sensitivity_into(t, n, out):  # pragma: no cover - compiled
    """out[x] = s(x) = #{i : t[x] != t[x xor 2^i]} for every x."""
    size = t.shape[0]
    for x in numba.prange(size):
        v = t[x]
        s = 0
        for i in range(n):
            s += v ^ t[x ^ (1 << i)]
        out[x] = s


@kernel([_I64(t, numba.int64) for t in (_U8, _U8_RO)], parallel=True)
def profile_counts(t, n):  # pragma: no cover - compiled
    """K[k] = #{x : s(x) = k} for k = 0..n; O(n 2^n) time, O(n) extra memory per chunk."""
    size = t.shape[0]
    n_chunks = min(_N_CHUNKS, size)
    step = (size + n_chunks - 1) // n_chunks
    hist = np.zeros((n_chunks, n + 1), dtype=np.int64)
    for c in numba.prange(n_chunks):
        lo = c * step
        hi = min(size, lo + step)
        for x in range(lo, hi):
            v = t[x]
            s = 0
            for i in range(n):
                s += v ^ t[x ^ (1 << i)]
            hist[c, s] += 1
    out = np.zeros(n + 1, dtype=np.int64)
    for c in range(n_chunks):
        for k in range(n + 1):
            out[k] += hist[c, k]
    return out


@kernel([_I64(t, numba.int64) for t in (_U8, _U8_RO)], parallel=True)
def influence_counts(t, n):  # pragma: no cover - compiled
    """c[i] = #{x : t[x] != t[x xor 2^i]} (so Inf_i = c[i] / 2^n), by direct counting."""
    size = t.shape[0]
    n_chunks = min(_N_CHUNKS, size)
    step = (size + n_chunks - 1) // n_chunks
    hist = np.zeros((n_chunks, n), dtype=np.int64)
    for c in numba.prange(n_chunks):
        lo = c * step
        hi = min(size, lo + step)
        for x in range(lo, hi):
            v = t[x]
            for i in range(n):
                hist[c, i] += v ^ t[x ^ (1 << i)]
    out = np.zeros(n, dtype=np.int64)
    for c in range(n_chunks):
        for i in range(n):
            out[i] += hist[c, i]
    return out


@kernel("void(int64[::1])")
def walsh_hadamard_inplace(a):  # pragma: no cover - compiled
    """In-place unnormalised Walsh-Hadamard transform: a[S] <- sum_x a[x] (-1)^{popcount(S & x)}.

    Exact in int64 while sum |a[x]| < 2^63 (for +-1 entries: n <= 62).
    """
    size = a.shape[0]
    h = 1
    while h < size:
        for start in range(0, size, 2 * h):
            for j in range(start, start + h):
                u = a[j]
                v = a[j + h]
                a[j] = u + v
                a[j + h] = u - v
        h *= 2


@kernel("int64[::1](int64[::1], int64)")
def fourier_weight_by_variable(w, n):  # pragma: no cover - compiled
    """c[i] = sum over S containing i of w[S]^2 (exact while sum_S w[S]^2 < 2^63)."""
    out = np.zeros(n, dtype=np.int64)
    for s in range(w.shape[0]):
        sq = w[s] * w[s]
        if sq != 0:
            for i in range(n):
                if (s >> i) & 1:
                    out[i] += sq
    return out


@kernel("int64(int64[::1])")
def max_popcount_nonzero(w):  # pragma: no cover - compiled
    """max |S| over the indices S with w[S] != 0 (-1 if w is identically 0)."""
    best = -1
    for s in range(w.shape[0]):
        if w[s] != 0:
            c = 0
            v = s
            while v:
                v &= v - 1
                c += 1
            if c > best:
                best = c
    return best
