"""Issue 40: the model's label rule, 1 iff T(x) > threshold (``ModelConfig.threshold``), is
certified as the comparison of T with the threshold itself in every tier; and a learned table of
N rows serves N bits without eos (the padded row of the file is never read)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params, truth_table
from verify.model.generic.enclosure import enclose_output
from verify.model.spec.label_rule import (
    LABEL_UNCERTAIN,
    _labels_from_midrad,
    label_arb,
    relative_to_threshold,
)

# the enclosure of T - threshold in exact arithmetic: tests/test_radius_threshold.py (a
# soundness file of the radius mutation suite)


def test_config_field_is_an_extension() -> None:
    """Default 0 (the spec); written only when nonzero; -0.0 is 0; non-finite refused."""
    cfg = ModelConfig(d_model=8, n_heads=2)
    assert cfg.threshold == 0.0 and "threshold" not in cfg.to_dict()
    assert "threshold" not in ModelConfig(d_model=8, n_heads=2, threshold=-0.0).to_dict()
    half = dataclasses.replace(cfg, threshold=0.5)
    assert json.loads(half.to_json())["threshold"] == 0.5
    assert ModelConfig.from_json(half.to_json()) == half
    for bad in (float("nan"), float("inf"), "0.5", True):
        with pytest.raises(ValidationError, match="threshold"):
            dataclasses.replace(cfg, threshold=bad)


def test_threshold_zero_is_the_spec_unchanged() -> None:
    mid, rad = np.array([1.0, -2.0]), np.array([0.5, 0.1])
    d, r = relative_to_threshold(mid, rad, 0.0)
    assert d is mid and r is rad


def test_labels_at_a_threshold_on_its_edges() -> None:
    """One ulp above the threshold is 1, one below 0 (radius 0); exactly at it the float64
    label stays open (its bounds are rounded outward) and arb settles it 0 (T > t is false);
    NaN is uncertain."""
    from flint import arb

    t = 0.5
    mid = np.array([t, np.nextafter(t, 1), np.nextafter(t, 0), np.nan, 0.7, 0.3])
    rad = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.1])
    lab = _labels_from_midrad(mid, rad, 0.0, t)
    assert list(lab) == [LABEL_UNCERTAIN, 1, 0, LABEL_UNCERTAIN, 1, 0]
    assert [label_arb(arb(m), 0.0, t) for m in mid[:3]] == [0, 1, 0]
    assert _labels_from_midrad(np.array([0.5]), np.array([0.0]), 0.1, 0.45)[0] == -1


@pytest.fixture(scope="module")
def model_at_median():
    """A random eps > 0 model whose threshold is the median of its T: a balanced function."""
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-5, eos=False,
                      pos_encoding="learned", embedding="concat", max_len=6)  # fmt: skip
    params = init_params(cfg, "xavier_normal", 3)
    t = forward(params, all_bit_strings(6)).T
    thr = float(np.median(t)) + 1e-9
    return Params(dataclasses.replace(cfg, threshold=thr), dict(params.items())), t, thr


def test_every_tier_labels_at_the_threshold(model_at_median) -> None:
    """The numba tiers, the numpy MidRad pass, the sub-cube pass and the arb enclosure give the
    same certified table, equal to 1[T > t] of the float64 pass and not to 1[T > 0]."""
    params, t, thr = model_at_median
    want = (t > thr).astype(np.int8)
    assert 0 < want.sum() < want.size and not np.array_equal(want, (t > 0).astype(np.int8))
    tables = [
        truth_table(params, 6),
        truth_table(params, 6, engine="numpy"),
        truth_table(params, 6, subcube=True),
    ]
    for table in tables:
        assert table.n_uncertain == 0
        np.testing.assert_array_equal(table.label, want)
    balls = enclose_output(params, all_bit_strings(6), prec=128)
    np.testing.assert_array_equal([label_arb(b, 0.0, thr) for b in balls], want)


def test_double_double_tier_at_the_threshold(model_at_median) -> None:
    from verify.model.certified.truth_table import TIER_DOUBLE_DOUBLE, _double_double_stage

    params, t, thr = model_at_median
    n = 6
    label = np.full(1 << n, LABEL_UNCERTAIN, dtype=np.int8)
    tier = np.zeros(1 << n, dtype=np.int8)
    tt = np.full(1 << n, np.nan)
    _double_double_stage(params, n, 0.0, tt, label, tier)
    assert np.all(tier == TIER_DOUBLE_DOUBLE)
    np.testing.assert_array_equal(label, (t > thr).astype(np.int8))


def test_the_padded_position_row_is_never_read(model_at_median) -> None:
    """Without eos a table of max_len + 1 rows serves N <= max_len bits from rows 0..N-1: two
    files differing only in row max_len give the same T to the bit in every pass."""
    params, _, _ = model_at_median
    cfg = params.config
    n = cfg.max_len
    pos = params["pos_embedding"].copy()
    pos[n] = 1e3
    other = params.with_arrays({"pos_embedding": pos})
    bits = all_bit_strings(n)
    assert np.array_equal(forward(params, bits).T, forward(other, bits).T)
    assert np.array_equal(
        forward(params, bits, engine="numba").T, forward(other, bits, engine="numba").T
    )
    a, b = truth_table(params, n), truth_table(other, n)
    assert np.array_equal(a.T, b.T) and np.array_equal(a.label, b.label)
    a, b = truth_table(params, n, engine="numpy"), truth_table(other, n, engine="numpy")
    assert np.array_equal(a.T, b.T)
    ea, eb = enclose_output(params, bits[:4], prec=64), enclose_output(other, bits[:4], prec=64)
    assert all(x.mid() == y.mid() and x.rad() == y.rad() for x, y in zip(ea, eb, strict=True))
    # the same file with eos reads row N: the row matters there
    eos = Params(dataclasses.replace(cfg, eos=True), dict(params.items()))
    eos_other = Params(dataclasses.replace(cfg, eos=True), dict(other.items()))
    assert not np.array_equal(forward(eos, bits).T, forward(eos_other, bits).T)


def test_sharpness_uses_the_models_target_convention() -> None:
    """Threshold 0.5: the MSE is against 0/1 targets (H&R's); threshold 0: +-1; another
    threshold does not say its targets (refused unless given)."""
    from verify.boolean import make_family
    from verify.checks.hahn_rofin import gaussian_sharpness, target_values

    assert target_values(0.5) == (0.0, 1.0) and target_values(0.0) == (-1.0, 1.0)
    with pytest.raises(ValidationError, match="threshold"):
        target_values(0.25)
    cfg = ModelConfig(d_model=8, n_layers=1, ln_eps=0.1)
    params = init_params(cfg, "uniform", seed=0)
    half = Params(dataclasses.replace(cfg, threshold=0.5), dict(params.items()))
    bits = all_bit_strings(4)
    y = make_family("parity", 4).table
    t = forward(params, bits).T
    _, _, base = gaussian_sharpness(half, bits, y, repeats=2)
    assert base == pytest.approx(np.mean((t - y) ** 2), rel=1e-12)
    _, _, base = gaussian_sharpness(params, bits, y, repeats=2)
    assert base == pytest.approx(np.mean((t - (2.0 * y - 1.0)) ** 2), rel=1e-12)
    _, _, base = gaussian_sharpness(params, bits, y, repeats=2, values=(0.0, 1.0))
    assert base == pytest.approx(np.mean((t - y) ** 2), rel=1e-12)


def test_train_settings_targets_set_the_threshold() -> None:
    from verify.experiments.train import TrainSettings

    assert TrainSettings().model_config().threshold == 0.0
    assert TrainSettings(targets="01").model_config().threshold == 0.5
    with pytest.raises(ValidationError, match="targets"):
        TrainSettings(targets="pm")
