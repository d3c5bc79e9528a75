"""The project's extension of the spec (docs/model-spec.md, "Layouts beyond the spec"): pre-LN
without a final norm (nn.TransformerEncoder's default) and post-LN followed by one.

Every certified tier computes them and encloses the exact value: the float64 per-string and
exhaustive kernels, the double-double tier and the arb enclosure, each against the 60-digit
reference (itself checked against the plain oracle in tests/test_spec_oracle.py). The spec's
files and defaults keep their meaning, and the papers' bounds refuse the extended layouts
instead of computing something derived for another model."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import HealthCheck, given, settings

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params, param_shapes, truth_table
from verify.model.arithmetic.contexts import arb_precision
from verify.model.certified.truth_table import LABEL_UNCERTAIN
from verify.model.double_double.dd_pass import dd_T
from verify.model.exhaustive.exhaustive_pass import exhaustive_T
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import reference_forward
from verify.model.per_string.per_string_pass import fast_T
from verify.strategies import adversarial_params, configs
from verify.theory.norms import parameter_norms
from verify.theory.trivial import output_swing_bound

# (norm_first, eps, eos, ln_affine); final_norm = not norm_first (the extended layouts)
GRID = list(itertools.product((False, True), (1e-5, 0.0), (True, False), (True, False)))


def _config(i: int, n_layers: int = 2) -> ModelConfig:
    norm_first, eps, eos, affine = GRID[i]
    return ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, norm_first=norm_first,
        final_norm=not norm_first, ln_eps=eps, eos=eos, ln_affine=affine, max_len=12,
    )  # fmt: skip


def _within(t: float, r: float, exact: mpmath.mpf) -> bool:
    with mpmath.workprec(4000):
        return abs(mpmath.mpf(t) - exact) <= mpmath.mpf(r)


# ---------------------------------------------------------------------- the configuration
def test_default_final_norm_is_the_specs() -> None:
    post, pre = ModelConfig(), ModelConfig(norm_first=True)
    assert (post.final_norm, pre.final_norm) == (False, True)
    assert (post.n_norms, pre.n_norms) == (4, 5)
    # the spec's JSON form is unchanged (no final_norm field) and reads back the same
    assert "final_norm" not in post.to_dict() and "final_norm" not in pre.to_dict()
    assert ModelConfig.from_json(pre.to_json()) == pre


@pytest.mark.parametrize("norm_first", [False, True])
def test_extended_layouts_have_their_own_form(norm_first: bool) -> None:
    cfg = ModelConfig(norm_first=norm_first, final_norm=not norm_first)
    assert cfg.to_dict()["final_norm"] is (not norm_first)
    assert ModelConfig.from_json(cfg.to_json()) == cfg
    assert cfg.n_norms == 2 * cfg.n_layers + (0 if norm_first else 1)
    assert ("final_norm.weight" in param_shapes(cfg)) is (not norm_first)
    assert not cfg.spec_layout


def test_final_norm_must_be_a_bool() -> None:
    with pytest.raises(ValidationError, match="final_norm"):
        ModelConfig(final_norm=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_papers_bounds_refuse_the_extended_layouts(norm_first: bool) -> None:
    """Their constants assume a layer norm in front of the readout (pre-LN) or none after the
    last post-LN norm: computing them here would be wrong, not just loose."""
    cfg = ModelConfig(d_model=4, n_layers=1, norm_first=norm_first, final_norm=not norm_first)
    p = init_params(cfg, "gaussian", seed=0)
    for bound in (parameter_norms, output_swing_bound):
        with pytest.raises(ValidationError, match="spec's layouts"):
            bound(p)


# ---------------------------------------------------------------------- the certified tiers
@pytest.mark.parametrize("i", range(len(GRID)))
def test_every_tier_encloses_the_exact_value(i: int) -> None:
    n = 4
    bits = all_bit_strings(n)
    rng = np.random.default_rng(i)
    pick = rng.choice(1 << n, size=3, replace=False)
    for n_layers in (1, 2):
        p = init_params(_config(i, n_layers), "gaussian", seed=10 * i + n_layers, scale=0.7)
        exact = list(reference_forward(p, bits[pick], dps=60).T)
        t_ex, r_ex = exhaustive_T(p, n)
        t_ps, r_ps = fast_T(p, bits[pick])
        t_dd, r_dd = dd_T(p, bits[pick])
        balls = enclose_output(p, bits[pick], prec=128)
        for k, value in enumerate(exact):
            assert mpmath.isfinite(value)
            for name, t, r in (
                ("exhaustive", t_ex[pick[k]], r_ex[pick[k]]),
                ("per-string", t_ps[k], r_ps[k]),
                ("double-double", t_dd[k], r_dd[k]),
            ):
                assert np.isfinite(t) and np.isfinite(r), name
                assert _within(t, r, value), (name, t, r, value)
            with arb_precision(128):
                assert balls[k].is_finite()
                mid = arb(mpmath.nstr(value, 50))
                assert balls[k].overlaps(mid), (balls[k], value)


@pytest.mark.parametrize("i", range(0, len(GRID), 3))
def test_certified_table_is_the_exact_function(i: int) -> None:
    n = 5
    p = init_params(_config(i), "xavier_normal", seed=i)
    tt = truth_table(p, n)
    exact = reference_forward(p, all_bit_strings(n), dps=60).T
    assert tt.n_uncertain == 0
    assert all(tt.label[k] == (1 if v > 0 else 0) for k, v in enumerate(exact))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=adversarial_params(configs(eps=(0.0, 0.0, 1e-5), layouts="extended"), n_bits=3))
def test_no_certified_bit_is_wrong_on_adversarial_parameters(p: Params) -> None:
    assert not p.config.spec_layout
    tt = truth_table(p, 3, precisions=(128, 256))
    ref = reference_forward(p, all_bit_strings(3), dps=100)
    for k, exact in enumerate(ref.T):
        if mpmath.isnan(exact):
            assert tt.label[k] == LABEL_UNCERTAIN and not tt.certified[k]
        elif tt.certified[k]:
            assert tt.label[k] == (1 if exact > 0 else 0), (k, tt.T[k], exact, tt.method[k])
        else:
            assert tt.label[k] == LABEL_UNCERTAIN
