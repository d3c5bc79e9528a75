"""Coverage (issue 42): Sec 5 MAJORITY, Sec 6 random functions and Lemma 4.4's certified
covering have obligations, and the weakenings issue 42 found uncaught now fail `prove`: the
Chen-Stein b_2 term halved, MAJORITY's pi -> 4, the covering's bad measure halved."""

from __future__ import annotations

import math

import pytest

from verify.cli import main
from verify.proofs import load
from verify.proofs.core import OBLIGATIONS
from verify.theory import cube_covering, majority, random_functions

load()


def _chen_stein_b2_halved(n: int) -> float:
    pairs = 1 + n + math.comb(n, 2)
    near = n + math.comb(n, 2)
    return random_functions.ONE_MINUS_INV_E * (pairs + near) / 2.0**n


def _majority_pi_4(n: int, c: int) -> bool:
    gap = (1 << n) - n**c
    return gap > 0 and gap * gap * 4 * n > 8 * (1 << (2 * n))


_certify = cube_covering.certify_bad_measure


def _bad_measure_halved(*args, **kwargs):
    """certify_bad_measure with `bad_fraction += cube_fraction / 2`: every certified bad
    fraction halved, the open cubes' share kept."""
    res = _certify(*args, **kwargs)
    res.upper = [u - lo / 2 for lo, u in zip(res.lower, res.upper, strict=True)]
    res.lower = [lo / 2 for lo in res.lower]
    return res


def _threshold_off_by_one(c: int, tie: str = "zero") -> tuple[int, int]:
    n_star, n_tail = _threshold(c, tie)
    return n_star - 1, n_tail


_threshold = majority.majority_polynomial_threshold

ISSUE_WEAKENINGS = [
    (
        random_functions,
        "chen_stein_radius",
        _chen_stein_b2_halved,
        "sec_6_random_functions.chain_radius",
    ),
    (majority, "majority_lower_bound_exceeds", _majority_pi_4, "sec_5_majority.chain_predicate"),
    (
        majority,
        "majority_polynomial_threshold",
        _threshold_off_by_one,
        "sec_5_majority.chain_threshold",
    ),
    (cube_covering, "certify_bad_measure", _bad_measure_halved, "lemma_4_4.chain_certified_cover"),
    (
        majority,
        "majority_k0_formula",
        lambda n, tie="zero": (1 << n) - math.comb(n, n // 2),
        "sec_5_majority.chain_k0",
    ),
    (
        random_functions,
        "biased_k0_mean",
        lambda n, p: 2.0**n * p ** (n + 1),
        "sec_6_random_functions.chain_biased_mean",
    ),
]


@pytest.mark.parametrize(
    "module, name, weaker, ob_id", ISSUE_WEAKENINGS, ids=[w[1] for w in ISSUE_WEAKENINGS]
)
def test_the_issues_unchained_weakenings_fail_prove(
    monkeypatch, capsys, module, name, weaker, ob_id
) -> None:
    assert OBLIGATIONS[ob_id].prove().status == "proved"
    monkeypatch.setattr(module, name, weaker)
    verdict = OBLIGATIONS[ob_id].prove()
    assert verdict.status == "failed" and verdict.point is not None, verdict
    assert main(["prove", "--only", ob_id]) == 1
    assert f"NOT OK {ob_id}" in capsys.readouterr().out


def test_the_new_statements_are_proved_with_teeth(capsys) -> None:
    assert main(["prove", "--only", "Sec 5 MAJORITY", "--only", "Sec 6 random functions"]) == 0
    out = capsys.readouterr().out
    assert "sec_5_majority.lower_bound" in out and "sec_6_random_functions.chain_radius" in out


@pytest.mark.parametrize("slack", [1e-6, 1e-9, 1e-12])
def test_a_probability_check_with_slack_fails_its_chain(monkeypatch, slack) -> None:
    """Issue 42: a check accepting up to 1 + 1e-6 passed (no point probed it); the chain now
    probes the floats next to 0 and 1 and the usual tolerances on both sides."""
    from verify.theory import probability

    def loose(name: str, value: float) -> float:
        v = float(value)
        if math.isnan(v) or not -slack <= v <= 1 + slack:
            raise probability.ProbabilityError(name)
        return v

    monkeypatch.setattr(probability, "checked_probability", loose)
    assert OBLIGATIONS["trivial_bounds.chain_probability"].prove().status == "failed"


def test_a_family_with_a_zero_sensitivity_string_fails_its_corollarys_premise(monkeypatch) -> None:
    """Cor 5.1-5.4 link to Cor 4.6 through their premise K_0 = 0, checked on the toolkit's
    families: a sensitivity that loses one flip everywhere (or a wrong truth table) fails."""
    import numpy as np

    import verify.boolean as boolean

    orig = boolean.sensitivity
    monkeypatch.setattr(boolean, "sensitivity", lambda f: np.maximum(orig(f) - 1, 0))
    for k in (1, 2, 3, 4):
        assert OBLIGATIONS[f"cor_5_{k}.chain_premise"].prove().status == "failed"
    assert "cor_4_6.bound" in OBLIGATIONS["cor_5_1.from_cor_4_6"].facts
