"""Rows of estimated probabilities under the statistical policy: the point estimate is the
measurement, its Clopper-Pearson interval (the one shared helper,
:func:`verify.boolean.sampling.clopper_pearson`) stands beside it, and a row that fails is
*decisive* only when the interval excludes the bound; with several rows in a check the decisive
interval is the Bonferroni one (confidence 1 - (1 - c) / family), so one unlucky seed among many
rows makes the check undecided, not violated.
"""

from __future__ import annotations

from typing import Any

from verify.boolean.sampling import clopper_pearson
from verify.registry import Row
from verify.theory.probability import checked_probability

__all__ = ["ci_contains_rows", "family_confidence", "frequency_row"]


def family_confidence(confidence: float, family: int) -> float:
    """Bonferroni: each of ``family`` intervals at 1 - (1 - confidence) / family."""
    return 1.0 - (1.0 - confidence) / max(1, int(family))


def frequency_row(
    label: str,
    hits: int,
    trials: int,
    bound: float,
    *,
    confidence: float,
    family: int = 1,
    extra: dict[str, Any] | None = None,
    trivial: float | None = None,
) -> Row:
    """'<=' row: the frequency hits / trials against ``bound`` (a probability), its interval at
    ``confidence`` beside it; decisive when the family-wise interval lies above the bound."""
    p = checked_probability(label, hits / trials)
    ci = clopper_pearson(hits, trials, confidence)
    wide = clopper_pearson(hits, trials, family_confidence(confidence, family))
    return Row(
        label,
        p,
        checked_probability(f"{label}: bound", bound),
        ci=ci,
        extra={**(extra or {}), "hits": hits, "trials": trials, "decisive interval": wide},
        decisive=wide[0] > bound,
        trivial=trivial,
    )


def ci_contains_rows(
    label: str,
    hits: int,
    trials: int,
    low: float,
    high: float | None = None,
    *,
    confidence: float,
    family: int = 1,
    extra: dict[str, Any] | None = None,
) -> list[Row]:
    """Two rows saying the interval of hits / trials is consistent with [low, high] (a value
    when ``high`` is None): "CI lower <= high" and "low <= CI upper"; each decisive when the
    family-wise interval excludes that side."""
    high = low if high is None else high
    ci = clopper_pearson(hits, trials, confidence)
    wide = clopper_pearson(hits, trials, family_confidence(confidence, family))
    info = {**(extra or {}), "estimate": hits / trials, "trials": trials, "decisive interval": wide}
    return [
        Row(
            f"{label}: CI lower <= {high:.6g}",
            ci[0],
            high,
            ci=ci,
            extra=info,
            decisive=wide[0] > high,
        ),  # fmt: skip
        Row(
            f"{label}: {low:.6g} <= CI upper", low, ci[1], ci=ci, extra=info, decisive=low > wide[1]
        ),  # fmt: skip
    ]
