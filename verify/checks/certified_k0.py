"""K_0 (the number of zero-sensitivity strings) and recognition, read off certified truth tables
(Thm 4.5, Cor 4.6, Conj 5.5 and Cor 5.1-5.4 in action, the random-init experiment), and the
growth fit of K_0(N).

A certified table labels each string 1 / 0, certified undecided inside the margin, or uncertain
(``LABEL_UNCERTAIN``); nothing here guesses an uncertain bit: K_0 comes as (lower, upper) bounds
and recognition as True / False / None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from verify.model import ModelConfig, Params, init_params
from verify.model.certified.float64_pass import Float64Pass, float64_pass_for
from verify.model.certified.truth_table import (
    LABEL_UNCERTAIN,
    LABEL_UNDECIDED,
    CertifiedTruthTable,
    truth_table,
    truth_tables,
)
from verify.model.spec.label_rule import _labels_from_midrad

__all__ = [
    "K0Survey",
    "NonConstantSample",
    "fit_growth",
    "k0_at_margin",
    "k0_bounds",
    "k0_over_models",
    "k0_survey",
    "k0_table",
    "recognises",
    "sample_nonconstant",
]


def k0_bounds(table: CertifiedTruthTable) -> tuple[int, int]:
    """(lower, upper) bounds on K_0 of the computed function from certified labels: x is
    certainly zero-sensitive if x and its N neighbours are certified with one label, possibly
    so if no certified neighbour disagrees. Equal when every bit is certified."""
    n = table.n
    lab = table.label.astype(np.int16)
    cert = table.certified & (lab != LABEL_UNCERTAIN)
    idx = np.arange(1 << n)
    sure = cert.copy()
    possible = np.ones(1 << n, dtype=bool)
    for bit in range(n):
        nb = idx ^ (1 << bit)
        both = cert & cert[nb]
        sure &= both & (lab == lab[nb])
        possible &= ~(both & (lab != lab[nb]))
    return int(np.count_nonzero(sure)), int(np.count_nonzero(possible))


def k0_table(params: Params, n: int) -> tuple[int, int, int]:
    """(K_0 lower, K_0 upper, uncertain bits) of the certified truth table at margin 0."""
    table = truth_table(params, n)
    lo, hi = k0_bounds(table)
    return lo, hi, table.n_uncertain


def k0_at_margin(params: Params, n: int, margin: float) -> tuple[bool | None, int, int]:
    """(recognised, K_0 lower, K_0 upper): whether T(theta, .) recognises its own function with
    margin xi (every string certified with |T| >= xi: True; some certified inside: False; else
    None) and, if it does, the K_0 bounds of that function (else (0, 0))."""
    return margin_verdict(truth_table(params, n, margin=margin))


def margin_verdict(table: CertifiedTruthTable) -> tuple[bool | None, int, int]:
    """``k0_at_margin`` read off a certified table at the margin."""
    lab = table.label
    if np.any(table.certified & (lab == LABEL_UNDECIDED)):
        return False, 0, 0
    if not bool(np.all(table.certified & (lab >= 0))):
        return None, 0, 0
    lo, hi = k0_bounds(table)
    return True, lo, hi


def k0_over_models(
    models: Sequence[Params], ns: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """(K_0 lower, K_0 upper) arrays of shape (models, len(ns)) and the total number of uncertain
    bits, from each model's certified truth table at margin 0 at each N (models in order)."""
    s = k0_survey(models, ns)
    return s.lo, s.hi, s.n_uncertain


@dataclass
class K0Survey:
    """``k0_over_models`` (``lo``, ``hi``: shape (models, len(ns)); uncertain bits) and, per N
    of ``margin_ns``, ``k0_at_margin`` of each model (``at_margin[N]``, models in order)."""

    lo: np.ndarray
    hi: np.ndarray
    n_uncertain: int
    at_margin: dict[int, list[tuple[bool | None, int, int]]]


def k0_survey(
    models: Sequence[Params],
    ns: Sequence[int],
    margin: float = 0.0,
    margin_ns: Sequence[int] = (),
    passes: Sequence[dict[int, Float64Pass]] | None = None,
) -> K0Survey:
    """K_0 bounds of each model's certified table at margin 0 at each N of ``ns``, and its
    verdict at ``margin`` at each N of ``margin_ns`` (a subset of ``ns``): the same numbers as
    ``k0_table`` and ``k0_at_margin`` call by call, with one float64 stage per (model, N) for
    both margins (``truth_tables``) and the N-independent weights once per model. ``passes``:
    per model, float64 passes already run (``NonConstantSample.passes``), read instead of rerun."""
    k0_lo = np.zeros((len(models), len(ns)), dtype=np.int64)
    k0_hi = np.zeros_like(k0_lo)
    n_unc = 0
    at_margin: dict[int, list[tuple[bool | None, int, int]]] = {n: [] for n in margin_ns}
    for mi, params in enumerate(models):
        kept = passes[mi] if passes is not None else {}
        weights = next((p.weights for p in kept.values()), None)
        for j, n in enumerate(ns):
            ev = kept.get(n) or Float64Pass(params, n, weights)
            weights = ev.weights
            margins = (0.0, margin) if n in at_margin else (0.0,)
            tables = truth_tables(params, n, margins, passes=ev)
            k0_lo[mi, j], k0_hi[mi, j] = k0_bounds(tables[0])
            n_unc += tables[0].n_uncertain
            if n in at_margin:
                at_margin[n].append(margin_verdict(tables[1]))
    return K0Survey(k0_lo, k0_hi, n_unc, at_margin)


def recognises(table: CertifiedTruthTable, target: np.ndarray) -> bool | None:
    """True if every string is certified with the target's label (margin of ``table``), False if
    some certified label (or certified 'undecided') differs, None if only uncertain bits stop
    it."""
    lab = table.label
    wrong = table.certified & (lab != target)
    if np.any(wrong):
        return False
    return True if bool(np.all(table.certified)) else None


def fit_growth(ns: Sequence[int], k0: Sequence[float]) -> dict[str, float]:
    """Least-squares fits of log K_0 against N (exponential, K_0 ~ A b^N) and against log N
    (polynomial, K_0 ~ A N^c), with their residual sums of squares (on log K_0)."""
    from scipy.stats import linregress

    n = np.asarray(ns, dtype=float)
    y = np.log(np.asarray(k0, dtype=float))
    out: dict[str, float] = {}
    for name, x in (("exponential", n), ("polynomial", np.log(n))):
        fit = linregress(x, y)
        resid = y - (fit.intercept + fit.slope * x)
        out[f"{name}_rate"] = float(fit.slope)
        out[f"{name}_rate_stderr"] = float(fit.stderr) if n.size > 2 else math.nan
        out[f"{name}_sse"] = float(resid @ resid) if n.size > 2 else 0.0
    out["exponential_base"] = math.exp(out["exponential_rate"])
    return out


def certified_nonconstant(params: Params, n: int, passes: Float64Pass | None = None) -> bool | None:
    """Is the computed function 1[T > t] (t the model's threshold, 0 in the spec) on {0,1}^n
    non-constant? True when some string is certified 1 and some certified 0
    (``verify.model.spec.label_rule``); False when every string is certified on one side; None when
    uncertain bits leave it open. From the exhaustive kernel's (T, r) (of ``passes`` when given:
    it keeps them for later tables)."""
    t, r = float64_pass_for(params, n, passes).exhaustive_all()
    lab = _labels_from_midrad(t, r, 0.0, params.config.threshold)
    pos, neg = lab == 1, lab == 0
    if pos.any() and neg.any():
        return True
    return False if bool(np.all(pos | neg)) else None


@dataclass
class NonConstantSample:
    """Models theta ~ Unif[-box, box]^M conditioned on computing a non-constant function at
    every N of ``ns`` (rejection sampling): the accepted models, the draws it took, and per N
    how many draws were rejected as certified constant there (the N are tried in increasing
    order and a draw is rejected at the first N where it is constant). ``passes``: per
    accepted model, its float64 passes at the N of ``ns`` (for ``k0_survey``)."""

    models: list[Params]
    draws: int
    constant_at: dict[int, int]
    undetermined: int
    passes: list[dict[int, Float64Pass]] = field(default_factory=list, repr=False, compare=False)

    @property
    def acceptance_rate(self) -> float:
        return len(self.models) / self.draws if self.draws else math.nan


def sample_nonconstant(
    config: ModelConfig,
    ns: Sequence[int],
    want: int,
    seed: int,
    *,
    box: float = 1.0,
    max_draws: int | None = None,
) -> NonConstantSample:
    """Rejection sampling: draw theta ~ Unif[-box, box]^M (seeds seed, seed + 1, ...) until
    ``want`` models compute a certified non-constant function at every N of ``ns`` (or
    ``max_draws``, default 100 want, draws are spent). Conditioning on a positive-probability
    event keeps every almost-sure property of Unif(Theta); a draw whose constancy stays
    uncertain is rejected and counted as undetermined."""
    sample = NonConstantSample([], 0, dict.fromkeys(ns, 0), 0)
    limit = 100 * want if max_draws is None else max_draws
    while len(sample.models) < want and sample.draws < limit:
        params = init_params(config, "uniform", seed + sample.draws, box)
        sample.draws += 1
        verdicts = []
        passes: dict[int, Float64Pass] = {}
        weights = None
        for n in sorted(ns):  # the cheapest N first; stop at the first constant one
            passes[n] = ev = Float64Pass(params, n, weights)
            verdicts.append(certified_nonconstant(params, n, ev))
            weights = ev.weights
            if verdicts[-1] is False:
                sample.constant_at[n] += 1
                break
        if all(v is True for v in verdicts):
            sample.models.append(params)
            for ev in passes.values():
                ev.compact()  # keep the kernel's output, drop its largest tables
            sample.passes.append(passes)
        elif None in verdicts and False not in verdicts:
            sample.undetermined += 1
    return sample
