"""Root pytest configuration: budgets, the --runslow option and Hypothesis profiles.

- ``pytest``: the fast default run (statement checks at budget "quick").
- ``pytest --runslow``: also the tests marked ``slow`` (long sweeps, paper-size experiments).
- ``pytest --budget default|full``: bigger statement-check budgets.
- Hypothesis: with CI=true its built-in ``ci`` profile is loaded; ``HYPOTHESIS_PROFILE=dev`` or
  ``thorough`` select ours.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):
    settings.load_profile("dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")
    parser.addoption(
        "--budget",
        choices=("quick", "default", "full"),
        default=None,
        help="budget of the statement checks (default: quick, or full with --runslow)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def check_budget(request: pytest.FixtureRequest) -> str:
    """Budget for statement checks: --budget, else 'full' with --runslow, else 'quick'."""
    chosen = request.config.getoption("--budget")
    if chosen:
        return chosen
    return "full" if request.config.getoption("--runslow") else "quick"


@pytest.fixture(scope="session", autouse=True)
def _private_trained_model_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The trained-model cache (verify.experiments.train_cache) of a test session is a fresh
    temporary folder (subprocesses inherit it): tests neither read nor fill the user's."""
    os.environ["VERIFY_CACHE_DIR"] = str(tmp_path_factory.mktemp("verify-cache"))
