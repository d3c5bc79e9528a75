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
from verify.theory import trivial
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


# --------------------------------------------------------------------------------------------
# Every trivial bound is attained by a construction, so a wrong (too small) trivial bound fails
# here (tests/test_mutations.py runs these against halved bounds). At D = 2, eps = 0 the last
# layer norm maps every input v with v_1 != v_2 to u = +-(1, -1) (|u|^2 = D exactly); with
# w * g proportional to (1, -1) and two strings of opposite sign of v_1 - v_2 at the readout:
#   swing      |T(x) - T(x')| = |(w * g) . 2(1, -1)| = 2 sqrt(D) |w * g|,
#   |T|        max |T| = sqrt(D) |w * g| + |w . b + omega|,
#   readout    |y - y'| = |g * 2(1, -1)| = 2 sqrt(D) max|g|  (|g_1| = |g_2|).
# --------------------------------------------------------------------------------------------
ATTAINING = ModelConfig(d_model=2, n_layers=1, n_heads=1, ln_eps=0.0)


def attaining_params(gain: float = 1.5, weight: float = 0.75, centred: bool = False):
    """A D = 2, eps = 0 model whose readout reads u = (1, -1) on some string of length 4 and
    u = (-1, 1) on another, with g = (gain, gain), w = (weight, -weight), b = (0.3, -0.1),
    omega = 0.2 (b = 0, omega = 0 when ``centred``: then T = +-swing/2 on every string): it
    attains each trivial bound (section comment)."""
    bias = np.zeros(2) if centred else np.array([0.3, -0.1])
    for seed in range(200):
        base = init_params(ATTAINING, "gaussian", seed, 1.0)
        params = base.with_arrays(
            {
                "layers.0.norm2.weight": np.array([gain, gain]),
                "layers.0.norm2.bias": bias,
                "readout.weight": np.array([weight, -weight]),
                "readout.bias": np.array(0.0 if centred else 0.2),
            }
        )
        res = forward(params, all_bit_strings(4), diagnostics=True)
        u = (res.y_readout - bias) / gain
        if np.isfinite(res.T).all() and (u[:, 0] > 0).any() and (u[:, 0] < 0).any():
            return params, res
    raise AssertionError("no seed gave both signs of v_1 - v_2 at the readout")


def test_output_swing_bound_is_attained():
    params, res = attaining_params()
    measured = float(res.T.max() - res.T.min())
    bound = trivial.output_swing_bound(params)
    print(f"swing {measured!r} vs 2 sqrt(D) |w * g| = {bound!r}")
    assert measured <= bound * (1 + 1e-12)
    assert measured >= bound * (1 - 1e-12)  # attained: a smaller trivial bound is false


def test_output_abs_bound_is_attained():
    params, res = attaining_params()
    measured = float(np.abs(res.T).max())
    bound = trivial.output_abs_bound(params)
    print(f"max |T| {measured!r} vs sqrt(D) |w * g| + |w . b + omega| = {bound!r}")
    assert bound * (1 - 1e-12) <= measured <= bound * (1 + 1e-12)


def test_readout_swing_bound_is_attained():
    params, res = attaining_params()
    y = res.y_readout
    measured = float(np.linalg.norm(y[:, None, :] - y[None, :, :], axis=-1).max())
    bound = trivial.readout_swing_bound(params)
    print(f"max |y - y'| {measured!r} vs 2 sqrt(D) max|g| = {bound!r}")
    assert bound * (1 - 1e-12) <= measured <= bound * (1 + 1e-12)


def test_sensitivity_swing_bound_is_attained():
    """Centred, T = +-swing/2 on every string: the margin xi = swing/2, so 2 xi as_N(f) equals
    swing * as_N(f) (H&R Cor 5's trivial bound), and every sensitive edge moves T by the
    swing (the edge form's trivial bound)."""
    from verify.boolean import BooleanFunction, average_sensitivity, sensitivity

    params, res = attaining_params(centred=True)
    f = BooleanFunction((res.T > 0).astype(np.uint8))
    xi = float(np.abs(res.T).min())
    as_n = float(average_sensitivity(f))
    measured = 2 * xi * as_n
    bound = trivial.sensitivity_swing_bound(params, as_n)
    print(f"2 xi as_N {measured!r} vs swing as_N = {bound!r}")
    assert as_n > 0 and bound * (1 - 1e-12) <= measured <= bound * (1 + 1e-12)
    edges = float(np.sum(sensitivity(f))) * 2 * xi  # |dT| = 2 xi = swing on each edge
    assert edges == pytest.approx(trivial.sensitivity_swing_bound(params, as_n, 16), rel=1e-12)


def test_number_of_functions_is_attained_by_enumeration():
    """2^(2^N) Boolean functions on N bits: every truth table on N = 2, 3, enumerated."""
    for n in (2, 3):
        tables = {t for t in itertools.product((0, 1), repeat=1 << n)}
        assert math.log10(len(tables)) == pytest.approx(trivial.log10_all_functions(n), rel=1e-14)
