
import os
import pytest


@pytest.mark.tier_count
def test_counts_the_tiers() -> None:
    assert os.environ.get("VERIFY_RADIUS_MUTANT") is None  # fails under any mutant


def test_soundness() -> None:
    pass
