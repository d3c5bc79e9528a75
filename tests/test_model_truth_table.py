"""Certified truth tables: every certified bit equals the sign of the 100-digit value."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.certified.truth_table import truth_table
from verify.model.generic.reference import reference_forward

SMALL = ModelConfig(d_model=4, n_layers=1, n_heads=2, d_ff=6)


def _exact_labels(p: Params, n: int, margin: float = 0.0) -> list[int | None]:
    ref = reference_forward(p, all_bit_strings(n), dps=100)
    out: list[int | None] = []
    for t in ref.T:
        if mpmath.isnan(t):
            out.append(None)
        elif margin == 0:
            out.append(1 if t > 0 else 0)
        else:
            out.append(1 if t >= margin else 0 if t <= -margin else -1)
    return out


def test_certified_bits_equal_the_exact_sign() -> None:
    p = init_params(SMALL, "gaussian", seed=3)
    tt = truth_table(p, 5)
    exact = _exact_labels(p, 5)
    assert tt.n_float64 == 32  # a well-conditioned model: float64 radii settle every bit
    assert tt.label.tolist() == exact
    assert tt.function().table.tolist() == exact


def test_near_tie_is_settled_at_high_precision() -> None:
    p = init_params(SMALL, "gaussian", seed=5)
    first = truth_table(p, 4)
    # move the readout bias so that T(x) of string 6 is the float64 rounding error away from 0
    arrays = dict(p)
    arrays["readout.bias"] = np.array(float(p["readout.bias"]) - first.T[6])
    q = Params(SMALL, arrays)
    tt = truth_table(q, 4)
    exact = _exact_labels(q, 4)
    print(tt.counts, "T[6] =", tt.T[6])
    assert tt.method[6] == 1  # float64 could not settle it, arb did
    for i in np.flatnonzero(tt.certified):
        assert tt.label[i] == exact[i]


def test_exact_tie_at_zero_is_label_zero() -> None:
    arrays = dict(init_params(SMALL, "gaussian", seed=1))
    arrays["readout.weight"] = np.zeros(4)
    arrays["readout.bias"] = np.array(0.0)
    tt = truth_table(Params(SMALL, arrays), 3)
    assert np.all(tt.label == 0) and np.all(tt.certified)
    assert np.all(tt.method == 1)  # T = 0 exactly is proven by arb, not by float64 radii


def test_undefined_layer_norm_is_uncertain_never_guessed() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, pos_encoding="none")
    arrays = dict(init_params(cfg, "gaussian", seed=0))
    arrays["token_embedding"] = np.ones((3, 4))
    arrays["layers.0.self_attn.out_proj.weight"] = np.zeros((4, 4))
    arrays["layers.0.self_attn.out_proj.bias"] = np.full(4, 0.25)
    tt = truth_table(Params(cfg, arrays), 3, precisions=(64, 128))
    assert tt.n_uncertain == 8 and not np.any(tt.certified) and np.all(tt.label == -2)
    with pytest.raises(ValidationError, match="uncertain"):
        tt.function()


def test_margin_labels() -> None:
    p = init_params(SMALL, "gaussian", seed=3)
    plain = truth_table(p, 5)
    xi = float(np.median(np.abs(plain.T)))
    tt = truth_table(p, 5, margin=xi)
    assert tt.label.tolist() == _exact_labels(p, 5, xi)
    assert 0 < tt.n_undecided < 32
    with pytest.raises(ValidationError, match="undecided"):
        tt.function()


def test_truth_table_rejects_bad_input() -> None:
    p = init_params(ModelConfig(pos_encoding="learned", max_len=8), "gaussian", seed=0)
    with pytest.raises(ValidationError, match="max_len"):
        truth_table(p, 9)
    with pytest.raises(ValidationError, match="N"):
        truth_table(p, 25)
    with pytest.raises(ValidationError, match="margin"):
        truth_table(p, 3, margin=-1.0)


@pytest.mark.parametrize(
    "cfg",
    [
        ModelConfig(d_model=1, n_layers=2, n_heads=1, ln_eps=1e-3),  # D = 1: var = 0 always
        ModelConfig(d_model=2, n_layers=2, n_heads=2, eos=False, d_ff=1),
        ModelConfig(d_model=4, n_layers=3, n_heads=2, norm_first=True, eos=False),
    ],
)
def test_numba_and_numpy_engines_agree(cfg: ModelConfig) -> None:
    p = init_params(cfg, "gaussian", seed=1)
    for n in (1, 4):
        fast = truth_table(p, n)
        slow = truth_table(p, n, engine="numpy")
        assert np.array_equal(fast.label, slow.label)
        assert np.array_equal(fast.certified, slow.certified)
        np.testing.assert_allclose(fast.T, slow.T, rtol=1e-12, atol=1e-14)
