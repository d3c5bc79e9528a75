"""Shared float64 passes (verify.model.certified.float64_pass): memoised kernel output equals fresh
calls bit for bit; truth tables at several margins from one pass equal separate single-margin tables
field for field; the K_0 survey equals k0_table / k0_at_margin call by call."""

from __future__ import annotations

import numpy as np
import pytest

from verify.boolean.function import all_bit_strings
from verify.checks.certified_k0 import (
    certified_nonconstant,
    k0_at_margin,
    k0_survey,
    k0_table,
    sample_nonconstant,
)
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.certified.float64_pass import Float64Pass
from verify.model.certified.truth_table import CertifiedTruthTable, truth_table, truth_tables
from verify.model.exhaustive.exhaustive_pass import (
    exhaustive_T,
    exhaustive_weights,
    prepare_exhaustive,
)
from verify.model.per_string.per_string_pass import fast_T

CONFIGS = (
    ModelConfig(d_model=16, n_layers=1, n_heads=2, ln_eps=0.0),
    ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-5),
    ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=0.0, norm_first=True, max_len=16),
    ModelConfig(d_model=6, n_layers=3, n_heads=1, ln_eps=1e-3, pos_encoding="sinusoidal"),
)


def _models() -> list[tuple[Params, int]]:
    out = []
    for ci, cfg in enumerate(CONFIGS):
        for seed in range(4):
            out.append((init_params(cfg, "uniform", 100 * ci + seed, 1.0), 7 + (seed % 3)))
    return out


def _same(a: CertifiedTruthTable, b: CertifiedTruthTable) -> bool:
    return (
        a.n == b.n
        and a.margin == b.margin
        and np.array_equal(a.T, b.T, equal_nan=True)
        and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("label", "certified"))
        and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("method", "tier"))
    )


@pytest.mark.parametrize("mi", range(0, 16, 3))
def test_weights_shared_across_n_give_the_same_tables(mi: int) -> None:
    p, n = _models()[mi]
    w = exhaustive_weights(p)
    for m in (n, n + 2):
        t_fresh, r_fresh = exhaustive_T(p, m, tables=prepare_exhaustive(p, m))
        t_w, r_w = exhaustive_T(p, m, tables=prepare_exhaustive(p, m, w))
        assert np.array_equal(t_fresh, t_w, equal_nan=True)
        assert np.array_equal(r_fresh, r_w, equal_nan=True)


@pytest.mark.parametrize("mi", range(16))
def test_memoised_ranges_and_strings_equal_fresh_calls(mi: int) -> None:
    """Block independence: a range served from a larger one, and strings of the per-string
    kernel evaluated in another batch, carry the numbers of a fresh call."""
    p, n = _models()[mi]
    t_all, r_all = exhaustive_T(p, n)
    ev = Float64Pass(p, n)
    t, r = ev.exhaustive_all()
    assert np.array_equal(t, t_all, equal_nan=True) and np.array_equal(r, r_all, equal_nan=True)
    for a, b in ((0, 64), (64, 128)):
        t_sub, r_sub = exhaustive_T(p, n, start=a, stop=b)  # a fresh, smaller call
        t_m, r_m = ev.exhaustive(a, b)  # served from the memoised full range
        assert np.array_equal(t_sub, t_m, equal_nan=True)
        assert np.array_equal(r_sub, r_m, equal_nan=True)
    rng = np.random.default_rng(mi)
    first = rng.choice(1 << n, 20, replace=False)
    second = rng.choice(1 << n, 30, replace=False)
    ev.per_string(first)
    t2, r2 = ev.per_string(second)  # partly memoised
    t_ref, r_ref = fast_T(p, all_bit_strings(n)[second], bounds=True)
    assert np.array_equal(t2, t_ref, equal_nan=True) and np.array_equal(r2, r_ref, equal_nan=True)


def test_multi_margin_tables_equal_single_margin_tables() -> None:
    margins = (0.0, 0.05, 0.3)
    differ = 0
    for p, n in _models():
        many = truth_tables(p, n, margins)
        single = [truth_table(p, n, xi) for xi in margins]
        for a, b in zip(many, single, strict=True):
            assert _same(a, b)
        # the test has teeth: labelling xi > 0 with margin 0's rule would fail it
        differ += any(not np.array_equal(single[0].label, s.label) for s in single[1:])
    assert differ >= 4


def test_passes_kept_from_a_constancy_test_give_the_same_tables() -> None:
    for p, n in _models()[::2]:
        ev = Float64Pass(p, n)
        assert certified_nonconstant(p, n, ev) == certified_nonconstant(p, n)
        ev.compact()
        kept = truth_tables(p, n, (0.0, 0.05), passes=ev)
        assert all(_same(a, truth_table(p, n, xi)) for a, xi in zip(kept, (0.0, 0.05), strict=True))


def test_a_pass_of_other_params_or_n_is_refused() -> None:
    (p, n), (q, _) = _models()[:2]
    with pytest.raises(ValidationError):
        truth_tables(p, n, (0.0,), passes=Float64Pass(q, n))
    with pytest.raises(ValidationError):
        truth_tables(p, n, (0.0,), passes=Float64Pass(p, n + 1))


def test_k0_survey_equals_the_per_call_k0() -> None:
    cfg = CONFIGS[0]
    ns, cond = range(5, 10), [8, 9]
    sample = sample_nonconstant(cfg, cond, 4, seed=7)
    assert len(sample.passes) == len(sample.models) == 4
    survey = k0_survey(sample.models, ns, 0.05, [8, 9], sample.passes)
    for mi, p in enumerate(sample.models):
        for j, n in enumerate(ns):
            lo, hi, _ = k0_table(p, n)
            assert (survey.lo[mi, j], survey.hi[mi, j]) == (lo, hi)
        for n in (8, 9):
            assert survey.at_margin[n][mi] == k0_at_margin(p, n, 0.05)
    assert survey.n_uncertain == sum(k0_table(p, n)[2] for p in sample.models for n in ns)
