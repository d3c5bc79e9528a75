"""The trivial bounds behind vacuous rows (verify.theory.trivial) hold on every string: the
output swing, |T| and the readout-vector swing, for post-/pre-LN, eps = 0 and > 0, with and
without affine layer norms; and they are what makes a loose bound's row vacuous."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from verify.boolean import all_bit_strings
from verify.model import ModelConfig, forward, init_params
from verify.registry import Row
from verify.theory.trivial import (
    log10_all_functions,
    output_abs_bound,
    output_swing_bound,
    readout_swing_bound,
)

CONFIGS = [
    ModelConfig(d_model=8, n_layers=1, n_heads=2, ln_eps=0.0),
    ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, norm_first=True),
    ModelConfig(d_model=6, n_layers=1, n_heads=1, ln_eps=1e-5, ln_affine=False),
    ModelConfig(d_model=4, n_layers=2, n_heads=1, ln_eps=0.0, pos_encoding="none"),
]


@pytest.mark.parametrize(
    ("cfg", "scheme"), list(itertools.product(CONFIGS, ("uniform", "gaussian")))
)
def test_trivial_bounds_hold_on_every_string(cfg: ModelConfig, scheme: str) -> None:
    for seed in range(3):
        params = init_params(cfg, scheme, seed, 2.0)
        res = forward(params, all_bit_strings(6), diagnostics=True)
        t, y = res.T[np.isfinite(res.T)], res.y_readout[np.isfinite(res.T)]
        slack = 1 + 1e-12
        assert t.max() - t.min() <= output_swing_bound(params) * slack
        assert np.abs(t).max() <= output_abs_bound(params) * slack
        dist = np.linalg.norm(y[:, None, :] - y[None, :, :], axis=-1).max()
        assert dist <= readout_swing_bound(params) * slack


def test_trivial_bounds_make_loose_rows_vacuous() -> None:
    params = init_params(CONFIGS[0], "uniform", 0, 1.0)
    swing = output_swing_bound(params)
    assert Row("|dT|", 0.1, 10 * swing, trivial=swing).vacuous
    assert not Row("|dT|", 0.1, swing / 2, trivial=swing).vacuous
    assert log10_all_functions(4) == pytest.approx(16 * math.log10(2))
