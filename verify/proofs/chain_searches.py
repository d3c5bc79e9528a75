"""The chain to the code for the searches and estimates that had none (issue 42):
``smallest_biting_n`` (Thm 4.5: where N^e <= 2^N starts), ``bad_event_series_order`` (Thm 4.5:
the order and convergence of the bad-event series) and ``monte_carlo_cover`` (Lemma 4.4: the
Monte Carlo cover's estimate, aggregated by volume).

- smallest_biting_n(e): the first N >= 2 with N^e <= 2^N, decided here in arb (exact ties
  N^e = 2^N, at N = 2^j and e = N/j, in integers), with every N below it failing; over every
  exponent theorem_exponent(D, L) the toolkit uses (D = 2..256, L = 1..8) and edge exponents.
- bad_event_series_order(D, L): the exponent e = (D-1)/(2L) - 5, zeta = (D-2)/(D-1), the order
  p = e + 1 + K - zeta (D-1)/2 and q = K - 1 (K = 2L) of thm_4_5.series_order, the verdict
  "convergent iff p < -1" (thm_4_5.summable_iff) and e* = zeta (D-1)/2 - 2L - 2, on the grids
  of Thm 4.5's check.
- monte_carlo_cover: the model's forward pass replaced by an exact oracle whose bad set is a
  known half-plane of the slice box (measure 1/3 for k = 1, 25/72 for k = 2, as for the
  certified cover): the estimate is the volume-weighted mean of the per-cube fractions, each
  CI is Clopper-Pearson's of its counts, and the pooled 95% interval holds the exact measure
  (seeded draws).
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import sympy as sp
from flint import arb, ctx

from verify.proofs.chain import CODE, code
from verify.proofs.core import Verdict
from verify.proofs.coverage_common import DOC4
from verify.proofs.methods import custom_step

__all__: list[str] = []

DOC5 = "docs/derivations_eps_zero.md#5-thm-45-and-borel-cantelli"
T45 = "Thm 4.5"


# ----------------------------------------------------------------------------- smallest_biting_n
def _bites(n: int, e: Fraction) -> bool:
    """N^e <= 2^N, decided exactly: e log N vs N log 2 in arb, ties in integers."""
    fe = e
    j = n.bit_length() - 1
    if n == 1 << j and j > 0 and fe == Fraction(n, j):
        return True  # N^e = 2^(j e) = 2^N exactly
    old = ctx.prec
    try:
        for prec in (128, 512, 2048):
            ctx.prec = prec
            lhs = arb(fe.numerator) / arb(fe.denominator) * arb(n).log()
            rhs = arb(n) * arb(2).log()
            if lhs < rhs:
                return True
            if lhs > rhs:
                return False
    finally:
        ctx.prec = old
    raise ArithmeticError(f"N^e vs 2^N undecided at N = {n}, e = {e}")


def _biting_exponents() -> list[tuple[float, Fraction]]:
    """(what the code is given, the exponent it stands for): the exact (D-1)/(2L) - 5 for
    D <= 256, L <= 8 (as Thm 4.5's check passes it), and edge floats (their exact values)."""
    used = {(e, e) for e in (Fraction(d - 1, 2 * ll) - 5 for d in range(2, 257)
                             for ll in range(1, 9))}  # fmt: skip
    edges = {(e, Fraction(e)) for e in (0.0, -1.0, 2.0, 4.0, 1e-9, 100.0, 1000.0)}
    return sorted(used | edges, key=lambda x: x[1])


def _biting_check(shift: int = 0) -> tuple[int, dict | None, str]:
    n_max = 100_000
    exps = _biting_exponents()
    for e, exact in exps:
        got = code("thm_4_5.chain_smallest_biting_n")(e)
        got = None if got is None else got + shift
        want = next((n for n in range(2, n_max + 1) if _bites(n, exact)), None)
        if got != want:
            return 0, {"e": str(exact)}, f"coded {got}, first N >= 2 with N^e <= 2^N: {want}"
    return len(exps), None, ""


def _biting_prove() -> Verdict:
    n, pt, msg = _biting_check()
    if pt is not None:
        return Verdict("failed", f"{CODE['thm_4_5.chain_smallest_biting_n']}: {msg}", pt)
    return Verdict("proved", f"the first N with N^e <= 2^N, decided in arb, at {n} exponents")


def _biting_twin() -> Verdict:
    _, pt, msg = _biting_check(1)
    if pt is None:
        return Verdict("not refuted", "the answer plus one passed")
    return Verdict("refuted", f"the answer plus one caught: {msg}", pt)


custom_step(
    "thm_4_5.chain_smallest_biting_n",
    T45,
    "Where it has content",
    DOC5,
    "chain",
    f"{CODE['thm_4_5.chain_smallest_biting_n']}(e) = min{{N >= 2 : N^e <= 2^N}} (every smaller"
    " N has N^e > 2^N: K_0 <= 2^N), decided exactly (arb, ties in integers), at every exact"
    " e = (D-1)/(2L) - 5 with D <= 256, L <= 8 (an instance: every exponent of Thm 4.5's grids,"
    " D <= 128, L <= 3, the only calls the toolkit makes) and 7 edge float exponents",
    f"{CODE['thm_4_5.chain_smallest_biting_n']} plus one",
    _biting_prove,
    _biting_twin,
    facts=("thm_4_5.chain_exponent", "trivial_bounds.function_count"),
    evidence="sizes",
)


# ----------------------------------------------------------------------------- series order
def _series_grid() -> list[tuple[int, int]]:
    from verify.statements.thm_4_5 import SERIES_GRID

    return sorted({(a[0], a[1]) for level in SERIES_GRID for a in level})


def _series_composed(d: int, ll: int) -> dict[str, Any]:
    k = 2 * ll
    e = sp.Rational(d - 1, 2 * ll) - 5
    zeta = sp.Rational(d - 2, d - 1)
    p = e + 1 + k - zeta * (d - 1) / 2
    return {
        "exponent": e,
        "zeta": zeta,
        "order": p,
        "log_power": k - 1,
        "convergent": bool(p < -1),  # thm_4_5.summable_iff: N^p log^q N summable iff p < -1
        "exponent_limit": float(zeta * (d - 1) / 2 - k - 2),
    }


def _series_check(weaken: Any = 1) -> tuple[int, dict | None, str]:
    grid = _series_grid()
    for d, ll in grid:
        got = code("thm_4_5.chain_series_order")(d, ll, 1.0)
        want = _series_composed(d, ll)
        for name, w in want.items():
            g = getattr(got, name)
            if name == "order":
                g = g * weaken
            if (g != w) if not isinstance(w, float) else not math.isclose(g, w, rel_tol=1e-12):
                return 0, {"D": d, "L": ll}, f"{name}: coded {g}, composed {w}"
        ratio = got.limit_ratio
        if not (ratio.is_finite and ratio.is_positive):
            return 0, {"D": d, "L": ll}, f"lim a_N / (N^p log^q N) = {ratio}: not the order"
    return len(grid), None, ""


def _series_prove() -> Verdict:
    n, pt, msg = _series_check()
    if pt is not None:
        return Verdict("failed", f"{CODE['thm_4_5.chain_series_order']}: {msg}", pt)
    return Verdict("proved", f"e, zeta, p, q, convergence and e* composed, at {n} (D, L)")


def _series_twin() -> Verdict:
    _, pt, msg = _series_check(sp.Rational(1, 2))
    if pt is None:
        return Verdict("not refuted", "the halved order passed")
    return Verdict("refuted", f"the halved order caught: {msg}", pt)


custom_step(
    "thm_4_5.chain_series_order",
    T45,
    "Series",
    DOC5,
    "chain",
    f"{CODE['thm_4_5.chain_series_order']}(D, L): e = (D-1)/(2L) - 5, zeta = (D-2)/(D-1),"
    " p = e + 1 + K - zeta (D-1)/2, q = K - 1, lim a_N / (N^p log^q N) finite > 0, convergent"
    " iff p < -1, e* = zeta (D-1)/2 - 2L - 2, at every (D, L) of Thm 4.5's series grids (an"
    " instance: the only calls the toolkit makes, box = 1)",
    f"{CODE['thm_4_5.chain_series_order']} with the order halved",
    _series_prove,
    _series_twin,
    facts=(
        "thm_4_5.series_order",
        "thm_4_5.series_convergence",
        "thm_4_5.summable_iff",
        "thm_4_5.chain_series",
    ),
    evidence="sizes",
)


# ----------------------------------------------------------------------------- Monte Carlo cover
_HALF = 0.5
_ORACLES = (  # (k, measure, coefficients, rhs): the bad set {a . (u - c) <= rhs} of the box
    (1, Fraction(1, 3), (1.0,), -_HALF / 3),
    (2, Fraction(25, 72), (1.0, 1.0), -_HALF / 3),
)


def _cover_check(weaken: float = 1.0) -> tuple[bool, dict | None, str]:
    from verify.boolean.sampling import clopper_pearson
    from verify.model import ModelConfig, Params, init_params
    from verify.theory import cube_covering

    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=0.0, eos=True,
                      pos_encoding="none", max_len=4)  # fmt: skip
    params = init_params(cfg, "gaussian", seed=0)
    theta = params.flatten()
    delta = 1e-3
    for k, measure, coef, rhs in _ORACLES:
        free = np.arange(k)
        a, c0 = np.asarray(coef), theta[free].copy()

        def oracle(p: Params, bits: Any, keep: bool, a=a, c0=c0, rhs=rhs, free=free) -> Any:
            u = p.flatten()[free]
            return SimpleNamespace(var=np.full((1, 1, 1), float(a @ (u - c0)) - rhs + delta))

        saved = cube_covering.forward
        cube_covering.forward = oracle
        try:
            mc = code("lemma_4_4.chain_monte_carlo_cover")(
                params, np.zeros((1, 2)), free, _HALF, delta,
                cubes_per_axis=3, draws_per_cube=1500, seed=7,
            )  # fmt: skip
        finally:
            cube_covering.forward = saved
        pt = {"k": k, "measure": str(measure)}
        est = mc.estimate * weaken
        hits = np.rint(mc.per_cube * mc.draws / mc.per_cube.size).astype(int)
        n_cubes = 3**k
        if mc.per_cube.size != n_cubes or mc.draws != n_cubes * 1500:
            return False, pt, f"{mc.per_cube.size} cubes, {mc.draws} draws"
        if not math.isclose(est, float(np.mean(mc.per_cube)), rel_tol=1e-12, abs_tol=1e-15):
            return False, pt, f"estimate {est} != the mean of the per-cube fractions"
        for h, ci in zip(hits, mc.per_cube_ci, strict=True):
            if tuple(ci) != tuple(clopper_pearson(int(h), 1500, 0.95)):
                return False, pt, f"a cube's interval {tuple(ci)} is not Clopper-Pearson's"
        lo, hi = mc.ci
        if (lo, hi) != tuple(clopper_pearson(int(hits.sum()), mc.draws, 0.95)) or not (
            lo <= est <= hi and lo <= float(measure) <= hi
        ):
            return False, pt, f"pooled [{lo}, {hi}], estimate {est}, exact measure {measure}"
    return True, None, ""


def _cover_prove() -> Verdict:
    ok, pt, msg = _cover_check()
    if not ok:
        return Verdict("failed", f"{CODE['lemma_4_4.chain_monte_carlo_cover']}: {msg}", pt)
    return Verdict("proved", "volume-weighted estimate, Clopper-Pearson intervals, exact measure")


def _cover_twin() -> Verdict:
    ok, pt, msg = _cover_check(0.5)
    if ok:
        return Verdict("not refuted", "the halved estimate passed")
    return Verdict("refuted", f"the halved estimate caught: {msg}", pt)


custom_step(
    "lemma_4_4.chain_monte_carlo_cover",
    "Lemma 4.4",
    "Certified slices",
    DOC4,
    "chain",
    f"{CODE['lemma_4_4.chain_monte_carlo_cover']} on an exact oracle (bad set a half-plane of"
    " the slice box, measure 1/3 for k = 1, 25/72 for k = 2; 3^k cubes, 1500 seeded draws"
    " each): estimate = the volume-weighted mean of the per-cube fractions, each interval"
    " Clopper-Pearson's, and the pooled 95% interval holds the exact measure",
    f"{CODE['lemma_4_4.chain_monte_carlo_cover']} with the estimate times 1/2",
    _cover_prove,
    _cover_twin,
    facts=("lemma_4_4.volume_average", "lemma_4_4.chain_certified_cover"),
    evidence="points",
)
