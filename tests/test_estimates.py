"""verify.checks.estimates: estimated probabilities as rows of the statistical policy -- the
point estimate is the measurement, the interval stands beside it, and a failing row is decisive
only when the (Bonferroni) interval excludes the bound; so the checks built on it (H&R Thm 6,
Sec 6, Cor 4.6) can report violated, and an unlucky seed among many rows cannot."""

from __future__ import annotations

import pytest

from verify.checks.estimates import ci_contains_rows, family_confidence, frequency_row
from verify.registry import Policy, Status, decide_status, get_statement
from verify.theory.probability import ProbabilityError


def test_point_estimate_is_the_measurement_and_the_ci_decides():
    # 18 of 300 = 0.06 > 0.05, interval contains 0.05: fails, not decisive -> undecided
    row = frequency_row("p", 18, 300, 0.05, confidence=0.999, family=4)
    assert row.measured == pytest.approx(0.06) and not row.ok and not row.decisive
    assert row.ci[0] < 0.05 < row.ci[1]
    assert decide_status(Policy.STATISTICAL, [row]) is Status.UNDECIDED
    # 60 of 300 = 0.2 against 0.05: the interval lies above -> violated
    far = frequency_row("p", 60, 300, 0.05, confidence=0.999, family=4)
    assert far.decisive and decide_status(Policy.STATISTICAL, [far]) is Status.VIOLATED


def test_bonferroni_widens_the_decisive_interval():
    assert family_confidence(0.999, 10) == pytest.approx(0.9999)
    # just outside the 99.9% interval but inside the family-wise one: undecided
    rows = ci_contains_rows("mc", 5500, 10_000, 0.53, confidence=0.999, family=1)
    assert not rows[0].ok and rows[0].decisive
    rows = ci_contains_rows("mc", 5200, 10_000, 0.5, confidence=0.999, family=1000)
    assert not rows[0].ok and not rows[0].decisive


def test_probabilities_outside_unit_interval_are_errors():
    with pytest.raises(ProbabilityError):
        frequency_row("p", 1, 2, 1.5, confidence=0.99)


@pytest.mark.parametrize(
    ("statement", "check"),
    [
        ("Cor 4.6", "conclusion: PARITY, sparse PARITY, FIRST, DICTATOR not recognised"),
        ("H&R Thm 6", "noise on one bias, constant norm input (equality case)"),
        ("Sec 6 random functions", "exact P[K_0>=1] vs Monte Carlo"),
        ("Sec 6 random functions", "Monte Carlo vs 1 - 1/e within the Chen-Stein radius"),
    ],
)
def test_statistical_checks_can_report_violated(statement, check):
    """Each of these checks has the statistical policy, under which a decisive row violates."""
    stmt = get_statement(statement)
    (c,) = [c for c in stmt.checks if c.name.startswith(check)]
    assert c.policy is Policy.STATISTICAL
