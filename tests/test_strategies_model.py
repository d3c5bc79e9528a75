"""Hypothesis over ordinary and adversarial parameters: float64 == 100-digit reference where
well conditioned, every enclosure contains the 100-digit value, no certified bit is wrong."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, Params, forward, init_params
from verify.model.certified.truth_table import LABEL_UNCERTAIN, truth_table
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import reference_forward
from verify.model.per_string.per_string_pass import fast_T
from verify.strategies import adversarial_params, configs, params

N_BITS = 3
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _warm_kernels() -> None:
    p = init_params(ModelConfig(d_model=2, n_layers=1, n_heads=1), "gaussian", seed=0)
    fast_T(p, np.zeros((1, 2), dtype=np.uint8))
    truth_table(p, 1)


def _arb_contains(ball: object, value: mpmath.mpf) -> bool:
    """Whether the arb ball contains the mpf (both converted exactly)."""
    man, exp = ball.mid().man_exp()
    rman, rexp = ball.rad().man_exp()
    with mpmath.workprec(4000):
        mid = mpmath.ldexp(mpmath.mpf(int(man)), int(exp))
        rad = mpmath.ldexp(mpmath.mpf(int(rman)), int(rexp))
        return abs(mid - value) <= rad


@SETTINGS
@given(p=params(configs(eps=(1e-5, 1e-2)), max_scale=1.0))
def test_float64_equals_reference_when_well_conditioned(p: Params) -> None:
    bits = all_bit_strings(N_BITS)[[0, 5]]
    ref = reference_forward(p, bits, dps=40)
    f = forward(p, bits)
    t, r = fast_T(p, bits)
    for b in range(2):
        exact = float(ref.T[b])
        # the rigorous radius says whether the problem is well conditioned at this point
        if r[b] <= 1e-11 * max(1.0, abs(exact)):
            assert abs(f.T[b] - exact) <= 1e-12 * max(1.0, abs(exact)), (f.T[b], exact, r[b])
            assert abs(t[b] - exact) <= 1e-12 * max(1.0, abs(exact)), (t[b], exact, r[b])


@SETTINGS
@given(p=adversarial_params(n_bits=N_BITS), idx=st.integers(0, 2**N_BITS - 1))
def test_enclosures_contain_the_100_digit_value(p: Params, idx: int) -> None:
    bits = all_bit_strings(N_BITS)[[idx]]
    exact = reference_forward(p, bits, dps=100).T[0]
    t, r = fast_T(p, bits)
    ball = enclose_output(p, bits, prec=128)[0]
    if mpmath.isnan(exact):  # a layer norm of a constant vector at eps = 0: undefined
        assert not ball.is_finite()
        assert not (np.isfinite(t[0]) and np.isfinite(r[0]))
        return
    if ball.is_finite():
        assert _arb_contains(ball, exact)
    if np.isfinite(t[0]) and np.isfinite(r[0]):
        with mpmath.workprec(4000):
            assert abs(mpmath.mpf(t[0]) - exact) <= mpmath.mpf(r[0]), (t[0], r[0], exact)


@SETTINGS
@given(p=adversarial_params(n_bits=N_BITS))
def test_no_certified_bit_is_wrong(p: Params) -> None:
    tt = truth_table(p, N_BITS, precisions=(128, 256))
    ref = reference_forward(p, all_bit_strings(N_BITS), dps=100)
    for i, exact in enumerate(ref.T):
        if mpmath.isnan(exact):
            assert tt.label[i] == LABEL_UNCERTAIN and not tt.certified[i]
        elif tt.certified[i]:
            assert tt.label[i] == (1 if exact > 0 else 0), (i, tt.T[i], exact, tt.method[i])
        else:
            assert tt.label[i] == LABEL_UNCERTAIN
