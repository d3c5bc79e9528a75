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


ISSUE_WEAKENINGS = [
    (
        random_functions,
        "chen_stein_radius",
        _chen_stein_b2_halved,
        "sec_6_random_functions.chain_radius",
    ),
    (majority, "majority_lower_bound_exceeds", _majority_pi_4, "sec_5_majority.chain_predicate"),
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
