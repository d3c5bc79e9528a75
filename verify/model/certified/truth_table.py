"""Certified truth tables: the Boolean function a transformer computes, bit by bit proven.

``truth_table(params, N, margin)`` evaluates all 2^N strings (index order of model-spec: x_1 is
the least significant bit). Each string's T(x) is enclosed by rigorous passes (midpoint + error
radius), each run on what the previous ones leave open (the tiers, ``TIER_*``):

1. float64, the exhaustive Numba kernel (``verify.model.exhaustive.exhaustive_pass``: layer 0 from
   tables, one radius per vector: scalar in layer 0, a 2-norm from layer 1 on);
2. float64, the per-string kernel with componentwise radii (``verify.model.per_string``); or,
   with ``engine="numpy"``, the :class:`verify.model.arithmetic.contexts.MidRadContext` pass for
   every string instead of 1 and 2;
3. double-double (``verify.model.double_double.dd_pass``: ~106-bit midpoints, one 2-norm radius per
   vector), when at least ``DOUBLE_DOUBLE_MIN_OPEN`` strings are open (below that arb is
   cheaper than loading the kernel);
4. arb balls at rising precision (``precisions``, default 128, 256, 512, 1024 bits).

With ``subcube=True`` a sub-cube pass (``verify.model.subcube.subcube_pass``: one rigorous float64
bound of T over a set of strings, branching on the most influential bits) runs first. If it settles
every string, no per-string pass runs; those strings get tier ``subcube``, method float64 and
T = NaN (no per-string value is computed). Otherwise the tiers above run as without it (same
numbers), and a string they leave open that a sub-cube settled takes the sub-cube's label
(tier ``subcube``) instead of going to double-double / arb. Off by default: callers that read
per-string T (reports, the torch comparison) keep it off.

Both layer-norm forms (``ln_form`` "torch" and "annotated", ``verify.model.spec.ln_forms``) run
every tier: the Numba kernels and the double-double tier take the form as a flag
(``stages.bundles.Scalars.ln_annotated``), each with the radius rules of its form, and the
sub-cube pass's affine arithmetic has the square root of the unbiased variance
(``AffineContext.sqrt_nonneg``). Parameter balls run the MidRad pass and arb only.

What is still open is reported as uncertain, never guessed. ``method`` keeps three values:
float64 (tiers 1-2), high precision (tiers 3-4), uncertain; ``tier`` tells the tiers apart.

Labels (``verify.model.spec.label_rule``, at the model's ``config.threshold`` t, 0 in the spec):
with D(x) = T(x) - t, margin xi = 0: 1 if D(x) > 0 is proven, 0 if D(x) <= 0 is proven.
Margin xi > 0: 1 if D >= xi, 0 if D <= -xi, -1 ("undecided", certified) if -xi < D < xi, all
proven. Uncertain strings get label -2 and ``certified`` False. ``T`` holds T(x) itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify._threads import numba_threads_for, one_blas_thread
from verify.boolean.function import MAX_BIT_STRINGS_N, BooleanFunction, all_bit_strings
from verify.errors import ValidationError
from verify.model.arithmetic.contexts import MidRadContext, arb_precision
from verify.model.certified.float64_pass import (
    EXHAUSTIVE_CHUNK,
    Float64Pass,
    bits_of,
    float64_pass_for,
)
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import run_generic
from verify.model.spec.label_rule import (
    LABEL_UNCERTAIN,
    LABEL_UNDECIDED,
    _labels_from_midrad,
    label_arb,
    relative_to_threshold,
)
from verify.model.spec.params import Params
from verify.validation import check_choice, check_int, check_real

METHOD_FLOAT64, METHOD_HIGH_PRECISION, METHOD_UNCERTAIN = 0, 1, 2
TIER_EXHAUSTIVE, TIER_PER_STRING, TIER_DOUBLE_DOUBLE, TIER_ARB, TIER_UNCERTAIN = 0, 1, 2, 3, 4
TIER_SUBCUBE = 5  # settled by a sub-cube bound (``subcube=True``; verify.model.subcube)
TIER_NAMES = (
    "float64_exhaustive", "float64_per_string", "double_double", "arb", "uncertain", "subcube",
)  # fmt: skip
DEFAULT_PRECISIONS = (128, 256, 512, 1024)
_CHUNK = 1 << 16
_ARB_BATCH = 64  # strings per arb call
# the double-double tier runs when at least this many strings are open: loading its kernel
# costs ~0.3-0.7 s (compiling it once per machine ~1-3 min), arb ~5-50 ms per string
DOUBLE_DOUBLE_MIN_OPEN = 64
# up to this many strings (4 probe blocks) the exhaustive kernel runs on all of them in one call
# and the probe block is read from it, the same numbers (verify.model.certified.float64_pass): one
# kernel launch instead of two; should the probe send the strings to the per-string kernel, at most
# 3 blocks were evaluated in vain
_WHOLE_PROBE = 1 << 8


@dataclass(frozen=True)
class CertifiedTruthTable:
    """Labels of all 2^N strings with how each was certified (see module doc)."""

    n: int
    margin: float
    T: np.ndarray  # (2^N,) float64 value of T (NaN where float64 met an undefined norm)
    label: np.ndarray  # (2^N,) int8: 1, 0, -1 (certified undecided), -2 (uncertain)
    certified: np.ndarray  # (2^N,) bool
    method: np.ndarray  # (2^N,) int8: 0 float64, 1 high precision, 2 uncertain
    tier: np.ndarray | None = None  # (2^N,) int8: the TIER_* that settled each bit

    @property
    def tier_counts(self) -> dict[str, int]:
        """Bits settled by each tier (TIER_NAMES); empty when ``tier`` was not recorded."""
        if self.tier is None:
            return {}
        return {name: int(np.count_nonzero(self.tier == k)) for k, name in enumerate(TIER_NAMES)}

    @property
    def n_float64(self) -> int:
        return int(np.count_nonzero(self.method == METHOD_FLOAT64))

    @property
    def n_high_precision(self) -> int:
        return int(np.count_nonzero(self.method == METHOD_HIGH_PRECISION))

    @property
    def n_uncertain(self) -> int:
        return int(np.count_nonzero(self.method == METHOD_UNCERTAIN))

    @property
    def n_undecided(self) -> int:
        """Strings certified to lie strictly inside (-margin, margin)."""
        return int(np.count_nonzero(self.label == LABEL_UNDECIDED))

    @property
    def counts(self) -> dict[str, int]:
        return {
            "float64": self.n_float64,
            "high_precision": self.n_high_precision,
            "uncertain": self.n_uncertain,
            "undecided": self.n_undecided,
        }

    def __str__(self) -> str:
        """Terminal display: how the bits were certified (a small table), the label counts,
        and the sensitivity profile when every bit is certified 0 or 1."""
        from verify.boolean.display import profile_text, text_table

        total = self.label.size
        rows = [(k, v, float(v / total)) for k, v in self.counts.items()]
        rows += [(f"tier {k}", v, float(v / total)) for k, v in self.tier_counts.items() if v]
        out = [
            f"certified truth table, N = {self.n} ({total} strings), margin {self.margin:g}:"
            f" {int(np.count_nonzero(self.label == 1))} ones,"
            f" {int(np.count_nonzero(self.label == 0))} zeros",
            text_table(("bits", "count", "fraction"), rows),
        ]
        if self.n_uncertain or self.n_undecided:
            out.append("not every bit is certified 0 or 1: no profile")
        else:
            from verify.boolean import sensitivity_profile

            out.append(
                profile_text("sensitivity profile:", sensitivity_profile(self.function()), total)
            )
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        """Notebook display: how the bits were certified, and the profile when all are."""
        total = self.label.size
        lines = [
            f"**certified truth table**, N = {self.n}, margin {self.margin:g}: "
            + ", ".join(f"{k} {v}" for k, v in self.counts.items()),
        ]
        if self.tier_counts:
            lines.append("tiers: " + ", ".join(f"{k} {v}" for k, v in self.tier_counts.items()))
        if self.n_uncertain or self.n_undecided:
            lines.append("not every bit is certified 0 or 1: no profile")
            return "\n\n".join(lines)
        return (
            "\n\n".join(lines)
            + "\n\n"
            + self.function()
            ._repr_markdown_()
            .replace(f"on N = {self.n} bits", f"on N = {self.n} bits ({total} strings)")
        )

    def function(self) -> BooleanFunction:
        """The computed Boolean function; raises if any bit is uncertain or undecided."""
        if self.n_uncertain or self.n_undecided:
            raise ValidationError(
                "truth table",
                "every bit certified 0 or 1",
                f"{self.n_uncertain} uncertain, {self.n_undecided} undecided",
            )
        return BooleanFunction(self.label.astype(np.uint8))


def certified_float64(
    params: Params,
    bits: np.ndarray,
    engine: str = "numba",
    tables: Any = None,
    radius: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(midpoint, radius) of T for each string by a rigorous float64 pass: the Numba kernel
    (``engine="numba"``) or the vectorised numpy MidRad pass (``"numpy"``, which also takes
    parameter balls ``radius``: name -> radius array). Parameter balls run the MidRad pass
    whatever ``engine`` says."""
    if engine == "numpy" or radius:
        res = run_generic(MidRadContext(), params, bits, readout_only=True, radius=radius)
        return res.T.mid, res.T.rad
    from verify.model.per_string.per_string_pass import fast_T  # loads (or compiles) the kernels

    return fast_T(params, bits, bounds=True, tables=tables)


def _float64_stage(
    params: Params,
    n: int,
    xi: float,
    engine: str,
    skip_to_dd: bool = False,
    ev: Float64Pass | None = None,
    lo: int = 0,
    hi: int | None = None,
    radius: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T, label, tier) of the strings of index lo..hi-1 (default all 2^n) from the rigorous
    float64 passes; label -2 (and tier TIER_UNCERTAIN) where they do not settle the string.
    ``ev``: the memoised kernel passes of engine "numba" (``verify.model.certified.float64_pass``; a
    new one if None), shared across margins. A range is routed on its own (its first block is the
    probe); each string's (T, radius) is the one a whole-cube pass gives it.

    engine "numba": first the exhaustive kernel (one radius per vector, layer 0 from tables:
    ``verify.model.exhaustive.exhaustive_pass``), then, for the strings its radius leaves open, the
    per-string kernel with componentwise radii (``verify.model.per_string``), which is slower and
    tighter. When most strings of a probe block or of a chunk need the second pass (deep or badly
    conditioned models), the following strings go to it directly. With ``skip_to_dd`` (the
    double-double tier runs next), when the per-string kernel too settles at most half of a
    probe block (D = 64 at depth >= 5 in the depth grid of docs/model.md), no float64 pass runs
    at all: every string is left open with T = NaN for the double-double tier, which then
    supplies every midpoint. engine "numpy": the MidRad arrays pass for every string."""
    hi = (1 << n) if hi is None else hi
    size = hi - lo
    thr = params.config.threshold
    t = np.empty(size)
    label = np.empty(size, dtype=np.int8)
    tier = np.full(size, TIER_UNCERTAIN, dtype=np.int8)

    def settle(start: int, stop: int, mid: np.ndarray, rad: np.ndarray) -> np.ndarray:
        """Labels of the strings lo + start .. lo + stop - 1; their open ones (local indices)."""
        t[start:stop] = mid
        if engine == "numpy":
            label[start:stop] = _labels_from_midrad(mid, rad, xi, thr)
            tier[start:stop][label[start:stop] != LABEL_UNCERTAIN] = TIER_EXHAUSTIVE
        else:  # the same labels, one parallel pass (certified.midrad_labels)
            from verify.model.certified.midrad_labels import midrad_labels

            # up to _CHUNK strings: ~0.3 ms on one thread, not worth waking another
            d, r = relative_to_threshold(mid, rad, thr)
            with numba_threads_for(stop - start, _CHUNK + 1):
                n_open = midrad_labels(d, r, xi, TIER_EXHAUSTIVE, label[start:stop],
                                       tier[start:stop])  # fmt: skip
            if n_open == 0:
                return np.arange(0)
        return np.flatnonzero(label[start:stop] == LABEL_UNCERTAIN) + start

    if engine == "numpy":
        for start in range(0, size, _CHUNK):
            stop = min(size, start + _CHUNK)
            bits = all_bit_strings(n, lo + start, lo + stop)
            mid, rad = certified_float64(params, bits, engine, radius=radius)
            settle(start, stop, mid, rad)
        tier[label != LABEL_UNCERTAIN] = TIER_PER_STRING
        return t, label, tier
    ev = float64_pass_for(params, n, ev)
    if size <= _WHOLE_PROBE:  # one call for all: the probe block is read from it
        ev.exhaustive(lo, hi)
    # probe one block: models whose radii settle little go to the per-string kernel
    mid, rad = ev.exhaustive(lo, lo + min(size, 1 << ev.lo_bits))
    open_probe = np.count_nonzero(_labels_from_midrad(mid, rad, xi, thr) == LABEL_UNCERTAIN)
    first_pass = open_probe <= mid.size // 2
    if not first_pass and skip_to_dd:
        mid, rad = ev.per_string(lo + np.arange(min(size, 1 << ev.lo_bits)))
        lab = _labels_from_midrad(mid, rad, xi, thr)
        if np.count_nonzero(lab == LABEL_UNCERTAIN) > mid.size // 2:
            t.fill(np.nan)
            label.fill(LABEL_UNCERTAIN)
            return t, label, tier
    for start in range(0, size, EXHAUSTIVE_CHUNK):
        stop = min(size, start + EXHAUSTIVE_CHUNK)
        if first_pass:
            mid, rad = ev.exhaustive(lo + start, lo + stop)
            open_idx = settle(start, stop, mid, rad)
            first_pass = open_idx.size <= (stop - start) // 2
        else:
            open_idx = np.arange(start, stop)
        if open_idx.size:
            mid, rad = ev.per_string(lo + open_idx)
            t[open_idx] = mid
            label[open_idx] = lab = _labels_from_midrad(mid, rad, xi, thr)
            tier[open_idx[lab != LABEL_UNCERTAIN]] = TIER_PER_STRING
    return t, label, tier


def _double_double_stage(
    params: Params,
    n: int,
    xi: float,
    t: np.ndarray,
    label: np.ndarray,
    tier: np.ndarray,
    lo: int = 0,
) -> None:
    """Settle what label leaves open (-2) with the double-double kernel, in place; the arrays
    hold the strings lo, lo + 1, ..."""
    from verify.model.double_double.dd_pass import dd_T, prepare_dd

    todo = np.flatnonzero(label == LABEL_UNCERTAIN)
    if todo.size == 0:
        return
    inputs = prepare_dd(params, n)
    for start in range(0, todo.size, _CHUNK):
        idx = todo[start : start + _CHUNK]
        mid, rad = dd_T(params, bits_of(idx + lo, n), inputs=inputs)
        lab = _labels_from_midrad(mid, rad, xi, params.config.threshold)
        done = lab != LABEL_UNCERTAIN
        label[idx[done]] = lab[done]
        tier[idx[done]] = TIER_DOUBLE_DOUBLE
        # the settled strings, and those no float64 pass ran on (T NaN), take the DD midpoint
        fill = done | np.isnan(t[idx])
        t[idx[fill]] = mid[fill]


@one_blas_thread
def truth_table(
    params: Params,
    N: int,
    margin: float = 0.0,
    *,
    precisions: Sequence[int] = DEFAULT_PRECISIONS,
    engine: str = "numba",
    double_double: bool = True,
    subcube: bool = False,
    radius: Mapping[str, np.ndarray] | None = None,
) -> CertifiedTruthTable:
    """Certified labels of all 2^N strings (see module doc). ``engine``: the rigorous float64
    pass, "numba" (fast kernel) or "numpy" (MidRad arrays; a cross-check). ``double_double``:
    run the double-double tier before arb (engine "numba" only). ``subcube``: the sub-cube
    pass first (label-only callers: sub-cube-settled strings have T = NaN). ``radius``:
    parameter balls (name -> radius array, see :func:`truth_tables`)."""
    return truth_tables(
        params, N, (margin,), precisions=precisions, engine=engine,
        double_double=double_double, subcube=subcube, radius=radius,
    )[0]  # fmt: skip


@one_blas_thread
def truth_tables(
    params: Params,
    N: int,
    margins: Sequence[float],
    *,
    precisions: Sequence[int] = DEFAULT_PRECISIONS,
    engine: str = "numba",
    double_double: bool = True,
    subcube: bool = False,
    passes: Float64Pass | None = None,
    radius: Mapping[str, np.ndarray] | None = None,
) -> list[CertifiedTruthTable]:
    """``truth_table(params, N, xi)`` for each xi of ``margins``, equal table for table to
    separate calls, with the float64 kernels run once for all of them: their (T, radius) do not
    depend on the margin (``verify.model.certified.float64_pass``); each margin's labels, routing
    between the float64 passes and higher tiers are its own. ``passes``: the memoised float64 passes
    of (params, N) to read from and add to (engine "numba"), e.g. kept from a constancy test.
    ``radius``: parameter balls, name -> radius array (the exact parameters lie within them
    of the stored ones, e.g. a product or difference rounded when a model was converted):
    every label then holds for every parameter in the balls; only the MidRad pass and arb
    take balls, so a non-zero radius runs those tiers alone, as the annotated form does."""
    if not isinstance(params, Params):
        raise ValidationError("params", "a verify.model.Params", type(params).__name__)
    n = check_int("N", N, minimum=1, maximum=MAX_BIT_STRINGS_N, hint="2^N strings are evaluated")
    params.config.check_n_bits(n)
    xis = [check_real("margin", margin, minimum=0.0) for margin in margins]
    precs = [check_int("precisions", p, minimum=53) for p in precisions]
    check_choice("engine", engine, ("numba", "numpy"))
    if not isinstance(subcube, bool):
        raise ValidationError("subcube", "True or False", subcube)
    radius = _checked_radius(params, radius)
    if radius is not None:  # the kernels and the sub-cube pass take no parameter balls
        engine, double_double, subcube = "numpy", False, False
    ev = float64_pass_for(params, n, passes) if engine == "numba" else None
    return [
        _truth_table(params, n, xi, precs, engine, double_double, subcube, ev, radius) for xi in xis
    ]


def _checked_radius(
    params: Params, radius: Mapping[str, np.ndarray] | None
) -> dict[str, np.ndarray] | None:
    """The non-zero parameter radii as float64 arrays of their parameters' shapes (None when
    there are none); a name that is no array of the model, a negative or NaN radius raises."""
    if radius is None:
        return None
    out: dict[str, np.ndarray] = {}
    for name, r in radius.items():
        if name not in params:
            raise ValidationError("radius", "names of the model's arrays", name)
        arr = np.broadcast_to(np.asarray(r, dtype=np.float64), params[name].shape)
        if not np.all(arr >= 0) or not np.all(np.isfinite(arr)):
            raise ValidationError("radius", f"finite radii >= 0 for {name}", "negative or NaN")
        if np.any(arr > 0):
            out[name] = np.array(arr)
    return out or None


def _truth_table(
    params: Params,
    n: int,
    xi: float,
    precs: list[int],
    engine: str,
    double_double: bool,
    subcube: bool,
    ev: Float64Pass | None,
    radius: dict[str, np.ndarray] | None = None,
) -> CertifiedTruthTable:
    """One margin's table (arguments validated by ``truth_tables``)."""
    use_dd = double_double and engine == "numba" and (1 << n) >= DOUBLE_DOUBLE_MIN_OPEN
    sub = None
    if subcube:
        from verify.model.subcube.subcube_pass import certify_subcubes

        sub = certify_subcubes(params, n, xi).label
    if sub is not None and np.all(sub != LABEL_UNCERTAIN):
        t = np.full(sub.size, np.nan)
        label, tier = sub.copy(), np.full(sub.size, TIER_SUBCUBE, dtype=np.int8)
        method = _method_of(tier)
    else:
        t, label, tier = _float64_stage(params, n, xi, engine, use_dd, ev, radius=radius)
        if sub is not None:
            take = (label == LABEL_UNCERTAIN) & (sub != LABEL_UNCERTAIN)
            label[take], tier[take] = sub[take], TIER_SUBCUBE
        method = _higher_tiers(params, n, xi, precs, use_dd, t, label, tier, radius=radius)
    return CertifiedTruthTable(
        n=n, margin=xi, T=t, label=label, certified=method != METHOD_UNCERTAIN, method=method,
        tier=tier,
    )  # fmt: skip


def _method_of(tier: np.ndarray) -> np.ndarray:
    """METHOD_* of each string from the tier that settled it."""
    method = np.full(tier.shape, METHOD_UNCERTAIN, dtype=np.int8)
    method[(tier <= TIER_PER_STRING) | (tier == TIER_SUBCUBE)] = METHOD_FLOAT64
    method[tier == TIER_DOUBLE_DOUBLE] = METHOD_HIGH_PRECISION
    return method


def _higher_tiers(
    params: Params,
    n: int,
    xi: float,
    precs: list[int],
    use_dd: bool,
    t: np.ndarray,
    label: np.ndarray,
    tier: np.ndarray,
    lo: int = 0,
    radius: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Double-double, then arb at rising precision, on what the float64 passes left open
    (label -2), in place; the arrays hold the strings lo, lo + 1, ...; returns METHOD_*.
    ``radius``: parameter balls (arb takes them; callers do not run double-double with them)."""
    n_open = np.count_nonzero(label == LABEL_UNCERTAIN)
    if use_dd and n_open >= DOUBLE_DOUBLE_MIN_OPEN:
        _double_double_stage(params, n, xi, t, label, tier, lo)
    method = _method_of(tier)
    thr = params.config.threshold
    # strings float64 could not settle: arb balls at rising precision, many strings per call
    todo = np.flatnonzero(label == LABEL_UNCERTAIN)
    for prec in precs:
        still: list[np.ndarray] = []
        for start in range(0, todo.size, _ARB_BATCH):
            idx = todo[start : start + _ARB_BATCH]
            balls = enclose_output(params, bits_of(idx + lo, n), prec=prec, radius=radius)
            labs = np.array([label_arb(ball, xi, thr) for ball in balls], dtype=np.int8)
            done = labs != LABEL_UNCERTAIN
            label[idx[done]] = labs[done]
            method[idx[done]] = METHOD_HIGH_PRECISION
            tier[idx[done]] = TIER_ARB
            with arb_precision(prec):
                for k in np.flatnonzero(done):
                    t[idx[k]] = float(balls[k].mid())
            still.append(idx[~done])
        todo = np.concatenate(still) if still else todo[:0]
        if todo.size == 0:
            break
    return method
