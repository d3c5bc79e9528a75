"""Unit tests of the eps = 0 suite's helpers (verify.checks.certified_k0, in_action,
neighbourhood; verify.theory.cube_covering, zero_sensitivity; verify.experiments.random_init)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.boolean import make_family, zero_sensitivity_count
from verify.checks.certified_k0 import fit_growth, k0_bounds, recognises
from verify.checks.in_action import majority_params
from verify.checks.neighbourhood import neighbourhood, neighbourhood_bad_event
from verify.errors import ValidationError
from verify.model import ModelConfig, forward, init_params
from verify.model.certified.truth_table import CertifiedTruthTable, truth_table
from verify.theory.cube_covering import (
    certify_bad_measure,
    degenerate_params,
    recover_centred_input,
    slice_small_ball_bound,
    theta_slice,
)
from verify.theory.zero_sensitivity import smallest_biting_n, theorem_exponent


def _table(labels: list[int], certified: list[bool]) -> CertifiedTruthTable:
    lab = np.array(labels, dtype=np.int8)
    cert = np.array(certified)
    n = int(math.log2(lab.size))
    return CertifiedTruthTable(
        n=n,
        margin=0.0,
        T=np.zeros(lab.size),
        label=np.where(cert, lab, -2).astype(np.int8),
        certified=cert,
        method=np.where(cert, 0, 2).astype(np.int8),
    )


def test_k0_bounds_exact_and_with_uncertain_bits() -> None:
    # N = 2, f = x_1 AND x_2 (indices 0..3): zero-sensitive strings are 00 only -> K_0 = 1
    tab = _table([0, 0, 0, 1], [True] * 4)
    assert k0_bounds(tab) == (1, 1) == (zero_sensitivity_count(np.array([0, 0, 0, 1])),) * 2
    # string 3 uncertain: 00 stays certain; 01/10 become possible (their neighbour 11 unknown)
    tab = _table([0, 0, 0, 1], [True, True, True, False])
    assert k0_bounds(tab) == (1, 4)


def test_recognises_three_way() -> None:
    target = np.array([0, 1, 1, 0], dtype=np.int8)
    assert recognises(_table([0, 1, 1, 0], [True] * 4), target) is True
    assert recognises(_table([0, 1, 1, 1], [True] * 4), target) is False
    assert recognises(_table([0, 1, 1, 0], [True, True, True, False]), target) is None


def test_biting_n_matches_engineering_notes_table() -> None:
    # shared/engineering-notes.md, "Where Thm 4.5's bound has content"
    expected = {(16, 1): 8, (32, 2): 9, (32, 3): 2, (64, 1): 204, (64, 2): 65, (64, 3): 26}
    expected.update({(128, 1): 530, (128, 2): 206, (128, 3): 110})
    for (d, layers), n in expected.items():
        assert smallest_biting_n(theorem_exponent(d, layers)) == n
    assert theorem_exponent(16, 1) == 2.5
    with pytest.raises(ValidationError, match="d_model"):
        theorem_exponent(1, 1)


def test_fit_growth_tells_exponential_from_polynomial() -> None:
    ns = list(range(4, 16))
    exp_fit = fit_growth(ns, [3.0 * 1.7**n for n in ns])
    assert exp_fit["exponential_sse"] < exp_fit["polynomial_sse"]
    assert exp_fit["exponential_base"] == pytest.approx(1.7)
    poly_fit = fit_growth(ns, [2.0 * n**3 for n in ns])
    assert poly_fit["polynomial_sse"] < poly_fit["exponential_sse"]
    assert poly_fit["polynomial_rate"] == pytest.approx(3.0)


def test_neighbourhood_and_bad_event() -> None:
    nb = neighbourhood(np.array([1, 0, 1], dtype=np.uint8))
    assert nb.tolist() == [[1, 0, 1], [0, 0, 1], [1, 1, 1], [1, 0, 0]]
    beta = np.array([2.0, 1.0, np.nan, 5.0])
    # bad neighbours: x^{+2} (NaN = infinite blowup) and x^{+3}; S = {1} works for k = 1
    assert not neighbourhood_bad_event(beta, 3.0, k=1)
    assert neighbourhood_bad_event(beta, 3.0, k=2)  # 2 bad > N - k = 1
    assert neighbourhood_bad_event(np.array([4.0, 1.0, 1.0, 1.0]), 3.0, k=0)  # x itself bad


def test_majority_construction_recognises_majority() -> None:
    params = majority_params()
    for n in (3, 5, 7):
        tab = truth_table(params, n, margin=1.0)
        assert recognises(tab, make_family("majority", n).table.astype(np.int8)) is True


def test_degenerate_point_and_slice_bounds() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.0)
    bits = np.array([1, 0, 1], dtype=np.uint8)
    params = init_params(cfg, "uniform", 3, 1.0)
    u = recover_centred_input(params, bits, 0)
    var = forward(params, bits[None], True).var[0, 0, -1]
    assert np.sum(u) == pytest.approx(0.0, abs=1e-9)
    assert np.dot(u, u) / 4 == pytest.approx(var, rel=1e-9)
    deg = degenerate_params(params, bits, 0)
    assert forward(deg, bits[None], True).var[0, 0, -1] < 1e-20
    delta, w = 1e-3, 0.5
    free = theta_slice(deg, 0, 1)
    cover = certify_bad_measure(deg, bits, free, w, delta, max_depth=9)
    # the readout position alone is bad on |u| <= sqrt(D delta / (1 - 1/D)): a lower bound on
    # the true bad measure, so below the certified upper bound
    readout_part = 2 * math.sqrt(4 * delta / 0.75) / (2 * w)
    assert cover.lower[-1] <= cover.upper[-1]
    assert cover.upper[-1] >= readout_part
    assert cover.lower[-1] <= slice_small_ball_bound(delta, 4, 1, w, 4)
    assert all(a >= b for a, b in zip(cover.upper, cover.upper[1:], strict=False))
    with pytest.raises(ValidationError, match="delta"):
        certify_bad_measure(deg, bits, free, w, 0.0)


def test_random_init_pieces() -> None:
    from verify.experiments.random_init import (
        D_CHOICES,
        certify_some_zero_sensitive,
        draw_config,
        run_scheme,
    )

    rng = np.random.default_rng(0)
    for _ in range(20):
        cfg = draw_config(rng)
        assert cfg.d_model in D_CHOICES and cfg.d_model % cfg.n_heads == 0
    params = init_params(ModelConfig(d_model=8, n_layers=1, n_heads=2), "uniform", 1)
    idx = certify_some_zero_sensitive(params, 6)
    tab = truth_table(params, 6)
    if idx is not None:  # the proven string must be zero-sensitive in the certified table
        x = tab.label[idx]
        assert all(tab.label[idx ^ (1 << b)] == x for b in range(6))
    with pytest.raises(ValidationError, match="scheme"):
        run_scheme("he_normal", 1, 4, 0)


def test_in_action_counts_are_memoised_per_budget_and_seed() -> None:
    from verify.checks.in_action import in_action_counts

    assert in_action_counts("quick", 0, "first") is in_action_counts("quick", 0, "first")
    with pytest.raises(ValidationError, match="budget"):
        in_action_counts("huge", 0, "first")


def test_random_init_does_not_import_the_statements() -> None:
    """The experiment reads the shared measurement code, never a statement module (no cycle)."""
    import subprocess
    import sys

    code = (
        "import sys, verify.experiments.random_init;"
        "bad = [m for m in sys.modules if m.startswith(('verify.statements', 'verify.lemmas'))];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_exact_constructions_recognise_their_functions() -> None:
    from verify.boolean import all_bit_strings
    from verify.checks.ball_recognition import count_strings, verdict
    from verify.checks.exact_constructions import (
        dictator_params,
        parity_params,
    )
    from verify.checks.exact_constructions import (
        majority_params as majority,
    )

    for n in (3, 6, 9):
        bits = all_bit_strings(n)
        assert verdict(parity_params(n), bits, bits.sum(1) % 2, 0.5) is True
        assert verdict(parity_params(n, d_model=8), bits, bits.sum(1) % 2, 0.5) is True
        # the PARITY construction of N does not recognise PARITY at N + 1 (the MLP is fitted)
        more = all_bit_strings(n + 1)
        assert verdict(parity_params(n, max_len=16), more, more.sum(1) % 2, 0.5) is not True
        for i in (1, 2):
            p = dictator_params(i, max_len=16)
            assert verdict(p, bits, bits[:, i - 1], 0.5) is True
            assert verdict(p, bits, 1 - bits[:, i - 1], 0.5) is False
        maj = (2 * bits.sum(1) > n).astype(np.int8)
        for pe in ("none", "learned"):
            assert (verdict(majority(pos_encoding=pe, max_len=16), bits, maj, 0.5) is True) == (
                n % 2 == 1
            )
    # without positions the output depends only on the count: N + 1 strings decide
    p = majority()
    assert verdict(p, count_strings(7), (2 * count_strings(7).sum(1) > 7), 0.5) is True


def test_bias_matched_null() -> None:
    from verify.boolean.random_functions import exact_probability_some_zero_sensitive
    from verify.experiments.random_init import bias_matched_null
    from verify.theory.random_functions import biased_k0_mean

    assert biased_k0_mean(7, 0.5) == pytest.approx(1.0)  # the uniform random function
    assert biased_k0_mean(4, 0.0) == 16.0  # constant 0: every string zero-sensitive
    # by brute force at N = 2, p = 0.3: sum over the 16 functions of P(f) K_0(f)
    from itertools import product

    from verify.boolean import sensitivity

    total = 0.0
    for bits in product((0, 1), repeat=4):
        f = np.array(bits, dtype=np.uint8)
        prob = np.prod(np.where(f == 1, 0.3, 0.7))
        total += prob * int(np.count_nonzero(sensitivity(f) == 0))
    assert biased_k0_mean(2, 0.3) == pytest.approx(total)
    mean, p_some = bias_matched_null(5, 0.5, 400, np.random.default_rng(0))
    assert mean == pytest.approx(1.0)
    assert abs(p_some - float(exact_probability_some_zero_sensitive(5))) < 0.08
