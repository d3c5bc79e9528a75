"""The paper's random-initialisation experiment: P[K_0 >= 1] per init scheme vs random functions.

Default run: a handful of models per scheme at N = 8; ``--runslow`` (budget full): 1000 models per
scheme at N = 12 (about an hour on 2 cores; or run ``python -m verify.experiments.random_init``).
"""

from __future__ import annotations

from verify.lemmas import Status


def test_random_init_experiment(run_statement_check) -> None:
    # Not a bound of the paper but its experiment: "holds" = every scheme's P[K_0 >= 1] is at
    # least the random-function value; a scheme below it is reported as undecided.
    res = run_statement_check(
        "Thm 4.5",
        "random-init experiment: P[K_0 >= 1] per scheme vs random f",
        allow=(Status.HOLDS, Status.UNDECIDED),
    )
    assert len(res.rows) == 4
    for row in res.rows:
        lo, hi = row.ci
        assert lo <= row.measured <= hi
        assert 0.55 < row.bound < 0.7  # the random-function baseline near 1 - 1/e
    names = {f.name for f in res.figures}
    assert names == {"random_init_p_k0", "random_init_mean_profile"}
