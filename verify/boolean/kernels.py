"""Numba kernels for exact sensitivity and Fourier analysis (pure numerics, no validation).

All kernels take a uint8 truth table ``t`` of length 2^n in the model-spec bit order and run in
O(n 2^n) time. The callers in :mod:`verify.boolean.analysis` and :mod:`verify.boolean.fourier`
validate their input; these functions assume it is valid.
"""

from __future__ import annotations

import types

import numba
import numpy as np

from verify._numba import kernel

_U8 = numba.types.Array(numba.uint8, 1, "C")
_U8_RO = numba.types.Array(numba.uint8, 1, "C", readonly=True)  # BooleanFunction tables
_I64 = numba.types.Array(numba.int64, 1, "C")

_N_CHUNKS = 64  # work units of the parallel kernels (each keeps its own histogram)
#: Below this many bytes of input the serial build runs: a parallel launch costs ~0.1 ms idle
#: and tens of ms when the cores are oversubscribed (measured here).
PARALLEL_MIN_BYTES = 1 << 16


def _serial_and_parallel(signature):
    """Compile one kernel body twice (serial now, prange-parallel on first large input:
    parallel builds take seconds each); dispatch on the input size."""

    def deco(fn):
        serial = kernel(signature)(fn)
        compiled = {}

        def parallel():
            if "p" not in compiled:
                # Numba's cache key ignores the parallel flag: a renamed copy of the function
                # gets its own cache file, so the two builds never load each other's code.
                twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel")
                twin.__qualname__ = fn.__qualname__ + "_parallel"
                compiled["p"] = kernel(signature, parallel=True)(twin)
            return compiled["p"]

        def dispatch(data, *args):
            run = parallel() if data.nbytes >= PARALLEL_MIN_BYTES else serial
            return run(data, *args)

        dispatch.__name__ = fn.__name__.lstrip("_")
        dispatch.__doc__ = fn.__doc__
        dispatch.serial = serial
        dispatch.parallel = parallel
        return dispatch

    return deco


@kernel([numba.int64(t, numba.int64, numba.int64) for t in (_U8, _U8_RO)])
def string_sensitivity(t, x, n):  # pragma: no cover - compiled
    """s(x) = #{i < n : t[x] != t[x xor 2^i]} for one string index x."""
    v = t[x]
    s = 0
    for i in range(n):
        s += v ^ t[x ^ (1 << i)]
    return s


def _sensitivity_into(t, n, out):  # pragma: no cover - compiled
    """out[x] = s(x) = #{i : t[x] != t[x xor 2^i]} for every x."""
    size = t.shape[0]
    for x in numba.prange(size):
        out[x] = string_sensitivity(t, x, n)


_LOW_MASKS = np.array(
    [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ],
    dtype=np.uint64,
)  # bit j set iff bit i of j is 0 (j = position in a 64-bit word)


@kernel("uint64(uint64[::1], int64, int64)")
def flip_word(words, w, i):  # pragma: no cover - compiled
    """Word ``w`` of f o flip_i for a table packed 64 strings a word (bit j of word w is
    f(64 w + j)): a masked shift inside the word for i < 6, a word-index xor above."""
    if i < 6:
        a = words[w]
        m = _LOW_MASKS[i]
        h = np.uint64(1 << i)
        return ((a & m) << h) | ((a >> h) & m)
    return words[w ^ (1 << (i - 6))]


def _profile_counts(t, n):  # pragma: no cover - compiled
    """K[k] = #{x : s(x) = k} for k = 0..n; O(n 2^n) time, O(n) extra memory per chunk.
    n >= 6: bit-parallel, 64 strings a word (:func:`word_profile`); below, string by string."""
    size = t.shape[0]
    if n >= 6:
        n_words = size >> 6
        words = np.empty(n_words, dtype=np.uint64)
        for w in numba.prange(n_words):
            v = np.uint64(0)
            for b in range(64):
                v |= np.uint64(t[(w << 6) + b]) << np.uint64(b)
            words[w] = v
        n_chunks = min(_N_CHUNKS, n_words)
        step = (n_words + n_chunks - 1) // n_chunks
        hist = np.zeros((n_chunks, n + 1), dtype=np.int64)
        for c in numba.prange(n_chunks):
            for w in range(c * step, min(n_words, (c + 1) * step)):
                word_profile(words, w, n, hist[c])
        return _sum_rows(hist)
    n_chunks = min(_N_CHUNKS, size)
    step = (size + n_chunks - 1) // n_chunks
    hist = np.zeros((n_chunks, n + 1), dtype=np.int64)
    for c in numba.prange(n_chunks):
        lo = c * step
        hi = min(size, lo + step)
        for x in range(lo, hi):
            hist[c, string_sensitivity(t, x, n)] += 1
    return _sum_rows(hist)


@kernel("int64[::1](int64[:, ::1])")
def _sum_rows(hist):  # pragma: no cover - compiled
    """The column sums of a chunk-by-count histogram."""
    out = np.zeros(hist.shape[1], dtype=np.int64)
    for c in range(hist.shape[0]):
        for k in range(hist.shape[1]):
            out[k] += hist[c, k]
    return out


@kernel("uint64(uint64)")
def popcount64(x):  # pragma: no cover - compiled
    """The number of set bits of x (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@kernel("void(uint64[::1], int64, int64, int64[::1])")
def word_profile(words, w, n, hist):  # pragma: no cover - compiled
    """Adds to ``hist[k]`` the strings of word ``w`` with s(x) = k, for a table packed 64
    strings a word (bit j of word w is f(64 w + j); 6 <= n <= 63). The flips d_i = a xor
    (a o flip_i) (a masked shift inside the word for i < 6, a word-index xor above) are added
    bit-sliced into six counter planes c_p (bit j of c_p: bit p of s(64 w + j)); then each
    count present in the word adds the popcount of its lanes."""
    zero = np.uint64(0)
    a = words[w]
    c0 = c1 = c2 = c3 = c4 = c5 = zero
    for i in range(n):
        d = a ^ flip_word(words, w, i)
        carry = c0 & d  # ripple-carry add of one bit per lane
        c0 ^= d
        d = carry & c1
        c1 ^= carry
        carry = d & c2
        c2 ^= d
        d = carry & c3
        c3 ^= carry
        carry = d & c4
        c4 ^= d
        c5 ^= carry
    left = ~zero
    while left != zero:
        low = left & (~left + np.uint64(1))  # the lowest lane not yet counted
        k = 0
        eq = left  # the lanes whose count equals lane low's: k, bit by bit
        for p, plane in enumerate((c0, c1, c2, c3, c4, c5)):
            if plane & low:
                k |= 1 << p
                eq &= plane
            else:
                eq &= ~plane
        hist[k] += popcount64(eq)
        left &= ~eq


def _influence_counts(t, n):  # pragma: no cover - compiled
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


# ---------------------------------------------------------------------------------------------
# kernels for uniformly random Boolean functions (verify.boolean.random_functions)


def _rows_have_zero_sensitive(tables, n):  # pragma: no cover - compiled
    """out[r] = whether truth table ``tables[r]`` (length 2^n) has a string with s(x) = 0."""
    rows = tables.shape[0]
    size = tables.shape[1]
    out = np.zeros(rows, dtype=np.bool_)
    for r in numba.prange(rows):
        row = tables[r]
        for x in range(size):
            if string_sensitivity(row, x, n) == 0:
                out[r] = True
                break
    return out


@kernel("uint64(uint64, int64)")
def cube_zero_set(a, d):  # pragma: no cover - compiled
    """Bitmask of the zero-sensitivity vertices of the colouring ``a`` of Q_d (d <= 6).

    Bit v of ``a`` is f(v); vertex v has s(v) = 0 iff bit v equals bit v xor 2^i for every i.
    The neighbour across dimension i is brought to position v by a masked shift.
    """
    size = 1 << d
    full = np.uint64(0xFFFFFFFFFFFFFFFF) if size == 64 else np.uint64((1 << size) - 1)
    same = full
    for i in range(d):
        h = 1 << i
        low = np.uint64(0)  # positions v with bit i of v equal to 0
        for v in range(size):
            if not (v >> i) & 1:
                low |= np.uint64(1) << np.uint64(v)
        swapped = ((a & low) << np.uint64(h)) | ((a >> np.uint64(h)) & low)
        same &= ~(a ^ swapped) & full
    return same


@kernel("uint64[::1](int64)")
def all_zero_sets(d):  # pragma: no cover - compiled
    """z[a] = cube_zero_set(a, d) for every colouring a of Q_d (d <= 4: 2^16 colourings)."""
    count = 1 << (1 << d)
    out = np.empty(count, dtype=np.uint64)
    for a in range(count):
        out[a] = cube_zero_set(np.uint64(a), d)
    return out


@kernel("uint64[::1](int64, int64[:, ::1])", parallel=True)
def canonical_colourings(d, perms):  # pragma: no cover - compiled
    """c[a] = min over the vertex maps g in ``perms`` (rows: v -> g[v]) and over complementation
    of the colouring a o g of Q_d: one representative per orbit of the symmetry group."""
    size = 1 << d
    count = 1 << size
    full = np.uint64(count - 1)
    out = np.empty(count, dtype=np.uint64)
    for a in numba.prange(count):
        best = np.uint64(a)
        ua = np.uint64(a)
        for g in range(perms.shape[0]):
            img = np.uint64(0)
            for v in range(size):
                if (ua >> np.uint64(perms[g, v])) & np.uint64(1):
                    img |= np.uint64(1) << np.uint64(v)
            if img < best:
                best = img
            comp = full & ~img
            if comp < best:
                best = comp
        out[a] = best
    return out


@kernel("int64(uint64[::1], uint64[::1], int64[::1])", parallel=True)
def count_no_zero_sensitive_split(z, reps, weights):  # pragma: no cover - compiled
    """sum_r weights[r] * h(reps[r]) with h(a) = #{D superset of Z(a) : Z(a xor D) <= D}.

    Splitting the last coordinate of Q_(d+1), f = (a, b) on two copies of Q_d joined by a
    matching; with D = a xor b, f has no zero-sensitivity string iff Z(a) <= D and Z(b) <= D
    (Z = zero set within Q_d, tabulated in ``z`` over all 2^(2^d) colourings). So
    #{f : K_0(f) = 0} = sum_a h(a); h is invariant under the symmetries of Q_d and under
    complementing a, so orbit representatives with their orbit sizes as weights suffice."""
    full = np.uint64(z.shape[0] - 1)
    total = 0
    for r in numba.prange(reps.shape[0]):
        a = reps[r]
        za = z[a]
        free = full & ~za
        sub = free
        acc = 0
        while True:
            dd = za | sub
            if z[a ^ dd] & ~dd == 0:
                acc += 1
            if sub == 0:
                break
            sub = (sub - np.uint64(1)) & free
        total += acc * weights[r]
    return total


def _packed_rows_have_zero_sensitive(words, n):  # pragma: no cover - compiled
    """As rows_have_zero_sensitive for tables packed 64 strings per word (n >= 6): bit j of
    word w is f(64 w + j). same = AND over dimensions i of not(f xor f o flip_i)
    (:func:`flip_word`)."""
    rows = words.shape[0]
    n_words = words.shape[1]
    out = np.zeros(rows, dtype=np.bool_)
    for r in numba.prange(rows):
        row = words[r]
        for w in range(n_words):
            a = row[w]
            same = ~np.uint64(0)
            for i in range(n):
                same &= ~(a ^ flip_word(row, w, i))
            if same != 0:
                out[r] = True
                break
    return out


sensitivity_into = _serial_and_parallel([numba.void(t, numba.int64, _U8) for t in (_U8, _U8_RO)])(
    _sensitivity_into
)
profile_counts = _serial_and_parallel([_I64(t, numba.int64) for t in (_U8, _U8_RO)])(
    _profile_counts
)
influence_counts = _serial_and_parallel([_I64(t, numba.int64) for t in (_U8, _U8_RO)])(
    _influence_counts
)
rows_have_zero_sensitive = _serial_and_parallel("boolean[::1](uint8[:, ::1], int64)")(
    _rows_have_zero_sensitive
)
packed_rows_have_zero_sensitive = _serial_and_parallel("boolean[::1](uint64[:, ::1], int64)")(
    _packed_rows_have_zero_sensitive
)
#: the pairs whose parallel build the report calls (Monte Carlo over random functions: large
#: inputs): the warm-up compiles those builds too (verify.kernel_cache.compile_pool.warm_parallel)
WARM_PARALLEL = (rows_have_zero_sensitive, packed_rows_have_zero_sensitive)
