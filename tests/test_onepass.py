"""check-model's one pass (``verify.model.certified.onepass``): the exhaustive kernel with its
diagnostics on gives the certified table bit for bit, and diagnostics equal to the reference
forward pass to rounding.

Tolerances: every variance, y_readout, T, beta and beta_hr within a relative 1e-12 of
``forward(..., engine="numpy")`` (measured: at most 2.4e-15 on these layouts); the
certified T, radius, labels, methods and tiers identical (``np.array_equal``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, forward, init_params, truth_table
from verify.model.certified.onepass import fused, table_and_diagnostics
from verify.model.exhaustive.exhaustive_pass import (
    diagnostics_arrays,
    exhaustive_T,
    prepare_exhaustive,
)

RTOL = 1e-12


def _hr(d: int, n: int, **kw) -> ModelConfig:
    """Hahn & Rofin's layout: concatenated embedding, N learned positions, post-LN, no eos."""
    return ModelConfig(
        d_model=d, n_layers=2, n_heads=2, d_ff=d, ln_eps=1e-5, norm_first=False,
        final_norm=False, eos=False, pos_encoding="learned", embedding="concat", max_len=n, **kw,
    )  # fmt: skip


N = 7
LAYOUTS = {
    "hr-post-no-eos": _hr(16, N),
    "hr-D128": _hr(128, N),
    "spec-pre-eos": ModelConfig(d_model=16, n_layers=2, n_heads=2, ln_eps=1e-5, norm_first=True),
    "spec-post-eos": ModelConfig(d_model=16, n_layers=2, n_heads=2, ln_eps=1e-5),
    "L1-post": ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=1e-5),
    "L1-pre": ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=1e-5, norm_first=True),
    "L3-pre-H4": ModelConfig(d_model=16, n_layers=3, n_heads=4, ln_eps=1e-5, norm_first=True),
    "post-eps0": ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=0.0),
    "annotated-pre": ModelConfig(
        d_model=16, n_layers=2, n_heads=2, ln_eps=1e-5, norm_first=True, ln_form="annotated"
    ),
}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def model(request):
    return request.param, init_params(LAYOUTS[request.param], "xavier_normal", seed=3)


def _close(a: np.ndarray, b: np.ndarray, what: str) -> None:
    """Equal within RTOL of the largest magnitude of b (NaN where b is NaN)."""
    assert a.shape == b.shape, what
    assert np.array_equal(np.isnan(a), np.isnan(b)), what
    ok = ~np.isnan(b)
    scale = max(float(np.max(np.abs(b[ok]), initial=0.0)), 1e-300)
    err = float(np.max(np.abs(a[ok] - b[ok]), initial=0.0)) / scale
    assert err <= RTOL, f"{what}: {err:.3g} > {RTOL}"


def test_the_certified_pass_is_the_same_with_diagnostics(model):
    """T and its radius bit for bit with and without the diagnostics, in one call and in
    chunks; the table of table_and_diagnostics is truth_table's."""
    _, p = model
    t_plain, r_plain = exhaustive_T(p, N)
    tables = prepare_exhaustive(p, N, all_positions=True)
    dg = diagnostics_arrays(tables, p.config.n_norms, 1 << N)
    t, r = exhaustive_T(p, N, tables=tables, diagnostics=dg)
    assert np.array_equal(t, t_plain, equal_nan=True)
    assert np.array_equal(r, r_plain, equal_nan=True)
    ref = truth_table(p, N)
    for chunk in (64, 1 << 15):
        tt, res = table_and_diagnostics(p, N, chunk=chunk)
        for name in ("T", "label", "method", "tier", "certified"):
            assert np.array_equal(getattr(tt, name), getattr(ref, name), equal_nan=True), name
        assert np.array_equal(res.T, t_plain, equal_nan=True)  # the certified pass's midpoints


def test_diagnostics_match_the_reference_pass(model):
    """Every norm's variance at every position, the readout vectors, T, beta and beta_hr
    against the numpy forward pass."""
    name, p = model
    ref = forward(p, all_bit_strings(N), diagnostics=True)
    tables = prepare_exhaustive(p, N, all_positions=True)
    dg = diagnostics_arrays(tables, p.config.n_norms, 1 << N)
    exhaustive_T(p, N, tables=tables, diagnostics=dg)
    for k in range(p.config.n_norms):
        for j in range(dg.var.shape[2]):
            _close(dg.var[:, k, j], ref.var[:, k, j], f"{name}: var of norm {k} at {j}")
    _close(dg.y_readout, ref.y_readout, f"{name}: y_readout")
    _, res = table_and_diagnostics(p, N)
    _close(res.T, ref.T, f"{name}: T")
    _close(res.y_readout, ref.y_readout, f"{name}: y_readout (chunked)")
    _close(res.beta, ref.beta, f"{name}: beta")
    _close(res.beta_hr, ref.beta_hr, f"{name}: beta_hr")


def test_a_wrong_variance_is_caught():
    """The comparison can fail: one norm's variances swapped with another's are reported."""
    p = init_params(LAYOUTS["hr-post-no-eos"], "xavier_normal", seed=3)
    ref = forward(p, all_bit_strings(N), diagnostics=True)
    tables = prepare_exhaustive(p, N, all_positions=True)
    dg = diagnostics_arrays(tables, p.config.n_norms, 1 << N)
    exhaustive_T(p, N, tables=tables, diagnostics=dg)
    with pytest.raises(AssertionError):
        _close(dg.var[:, 2], ref.var[:, 3], "swapped")


def _same(a, b, path: str = "") -> None:
    """Nested dicts/lists equal; floats within RTOL (relative), strings equal."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=RTOL) or (math.isnan(a) and math.isnan(b)), path
    else:
        assert a == b, path


@pytest.mark.parametrize(
    "name", ["hr-post-no-eos", "spec-pre-eos", "spec-post-eos", "annotated-pre"]
)
def test_check_model_numbers_are_those_of_the_two_passes(name, monkeypatch):
    """check-model's analysis (profile, K_0, blowups, every statement) from the one pass equals
    the two passes' within RTOL."""
    from verify.commands import check_model
    from verify.model.certified import onepass

    p = init_params(LAYOUTS[name], "xavier_normal", seed=3)
    assert fused(p)
    one = check_model.analyse(p, N)
    monkeypatch.setattr(onepass, "fused", lambda params, radius=None: False)
    two = check_model.analyse(p, N)
    _same(one, two)
