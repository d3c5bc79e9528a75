"""Rigorous bounds fail closed (issue 41): a bound that is not a finite number never reaches a
radius as a number, and weights at the ends of float64's range (subnormal, huge, exactly zero)
give truth tables whose every certified label is the sign of arb's exact ball.

- ``spectral_norm_upper`` of W = [[1, 1e-300, 1, 1e-310], [1, 1e-300, -1, -1e-310]] (|W|_2 =
  sqrt 2): the subnormal entries send it to the arb fallback, whose Gram powers have entries
  that straddle 0; python-flint 0.9 answers nan for ``x ** 2`` of such a ball, and that nan
  was the bound. It is now finite and >= sqrt 2 (the exact value, in rationals);
- ``finite_or_inf``: every bound is checked where it is produced (matrix norms, the
  double-double tier's embedding radii and matrix norms, the exhaustive kernel's weight
  bounds): NaN, -inf or a negative value become +inf, which makes the radius vacuous;
- end to end: models with subnormal, huge and zero weights (and the W above planted in a
  W_2), every tier of ``truth_table`` against arb's ball of the exact T at 512 bits.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, Params, init_params, truth_table
from verify.model.arithmetic.contexts import arb_precision
from verify.model.arithmetic.matrix_norms import (
    _spectral_norm_upper_arb,
    finite_or_inf,
    l2_upper,
    spectral_norm_upper,
    spectral_norms_upper,
)
from verify.model.certified.truth_table import LABEL_UNCERTAIN, TIER_NAMES
from verify.model.double_double.dd_pass import _to_dd, dd_T, layer_norms, prepare_dd
from verify.model.exhaustive.exhaustive_pass import exhaustive_T, exhaustive_weights
from verify.model.generic.enclosure import enclose_output
from verify.model.per_string.per_string_pass import fast_T

W_STRADDLE = np.array([[1, 1e-300, 1, 1e-310], [1, 1e-300, -1, -1e-310]])


def _sigma_sq_lower(w: np.ndarray) -> Fraction:
    """A lower bound of |W|_2^2 in exact rationals: the largest squared row norm (the largest
    diagonal entry of the Gram matrix W W^T; here 2 + 1e-600)."""
    return max(sum(Fraction(float(v)) ** 2 for v in row) for row in w)


def test_spectral_norm_of_balls_straddling_zero_is_finite_and_an_upper_bound() -> None:
    for bound in (spectral_norm_upper(W_STRADDLE), _spectral_norm_upper_arb(W_STRADDLE)):
        assert math.isfinite(bound), bound
        assert Fraction(bound) ** 2 >= _sigma_sq_lower(W_STRADDLE)  # >= sqrt 2
        assert bound <= math.sqrt(2) * 2 ** (1 / 64) * (1 + 1e-12)  # and within n^(1/64)
    # the same matrix among others of its shape, and transposed
    together = spectral_norms_upper([W_STRADDLE, W_STRADDLE.T, np.zeros((2, 4))])
    assert np.all(np.isfinite(together)) and together[2] == 0.0
    assert together[0] == together[1]


def test_finite_or_inf_turns_every_non_number_into_a_vacuous_bound() -> None:
    x = finite_or_inf(np.array([1.0, np.nan, -np.inf, -1.0, np.inf, 0.0]))
    assert x.tolist() == [1.0, np.inf, np.inf, np.inf, np.inf, 0.0]
    assert l2_upper(np.array([1e200, 1e200])) == np.inf  # the sum of squares overflows
    assert l2_upper(np.array([3.0, 4.0])) >= 5.0


def test_double_double_embedding_beyond_float64_is_a_vacuous_ball() -> None:
    with arb_precision(192):
        hi, lo, rad = _to_dd(arb(1e308) * 10)
        assert rad == np.inf
        hi, lo, rad = _to_dd(arb.nan())
        assert rad == np.inf
        hi, lo, rad = _to_dd(arb(0.1))
        assert math.isfinite(rad) and abs(arb(hi) + arb(lo) - arb(0.1)) <= arb(rad)


def _planted(p: Params, kind: str) -> Params:
    """Weights at the ends of float64's range in every layer (kind: subnormal, huge, zero)."""
    cfg = p.config
    rng = np.random.default_rng({"subnormal": 1, "huge": 2, "zero": 3, "overflow": 4}[kind])
    arrays = {}
    for name, value in p.items():
        a = np.array(value, dtype=np.float64)
        if a.ndim == 0 or name in ("token_embedding", "pos_embedding"):
            continue
        flat = a.reshape(-1)
        idx = rng.choice(flat.size, size=max(1, flat.size // 4), replace=False)
        if kind == "subnormal":
            flat[idx] = rng.choice([1e-310, -5e-324, 2.2e-308, -1e-300], size=idx.size)
        elif kind == "zero":
            flat[idx] = 0.0
        arrays[name] = flat.reshape(a.shape)
    if kind == "subnormal":  # W (its arb fallback) planted in layer 0's W_2
        w2 = arrays["layers.0.linear2.weight"]
        w2[:2, :4] = W_STRADDLE
    if kind == "huge":
        for layer in range(cfg.n_layers):
            w = arrays[f"layers.{layer}.linear2.weight"]
            w[0, :] *= 1e150  # FFN outputs near 1e150, squared 1e300 in the norms' variance
            arrays[f"layers.{layer}.self_attn.out_proj.bias"][1] = -3e153
        arrays["readout.weight"] = arrays["readout.weight"] * 1e100
    if kind == "overflow":  # |T| beyond float64 for some strings: inf midpoints, arb settles
        arrays["readout.weight"] = arrays["readout.weight"] * 1e308
    if kind == "zero":
        arrays["layers.0.linear1.weight"] = np.zeros_like(arrays["layers.0.linear1.weight"])
        w_in = arrays["layers.1.self_attn.in_proj_weight"]
        w_in[cfg.d_model : 2 * cfg.d_model] = 0.0  # every key 0: uniform attention in layer 1
        arrays["layers.1.self_attn.out_proj.bias"][:] = 0.0
        g = arrays["layers.0.norm1.weight"]
        g[::2] = 0.0  # gains exactly 0 on half the coordinates
    return p.with_arrays(arrays)


def test_bounds_are_checked_where_they_are_produced() -> None:
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, d_ff=16, max_len=8)
    p = _planted(init_params(cfg, "gaussian", seed=4), "huge")
    w1 = p["layers.1.linear1.weight"].copy()
    w1[0, 0] = 1e300  # its Frobenius norm overflows: +inf, never NaN
    p = p.with_arrays({"layers.1.linear1.weight": w1})
    norms = layer_norms(p)
    assert not np.isnan(norms).any() and np.isinf(norms[1, 1, 3 * cfg.n_heads + 1])
    wb = exhaustive_weights(p).bounds
    for arr in (wb.head, wb.out, wb.layer, wb.l2):
        assert not np.isnan(arr).any() and (arr >= 0).all()
    inp = prepare_dd(p, 4)
    assert not np.isnan(inp.tables.y0_rad).any() and not np.isnan(inp.matrix_norms).any()


@pytest.mark.parametrize("kind", ["subnormal", "huge", "zero", "overflow"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_table_of_extreme_weights_agrees_with_arb(kind: str, norm_first: bool) -> None:
    """Every tier's (midpoint, radius) holds arb's ball of the exact T (512 bits) wherever
    both are finite, and every certified label of the table is the sign of that ball; a
    string arb settles is settled by the table (its last tier is arb); an undefined layer
    norm (eps = 0, a constant input: zero weights) is uncertain in both."""
    cfg = ModelConfig(
        d_model=8, n_layers=2, n_heads=2, d_ff=16, norm_first=norm_first, ln_eps=0.0,
        max_len=8, pos_encoding="learned",
    )  # fmt: skip
    p = _planted(init_params(cfg, "gaussian", seed=5, scale=0.8), kind)
    n = 6  # 64 strings: enough open strings for the double-double tier to run
    tt = truth_table(p, n)
    exact = enclose_output(p, all_bit_strings(n), prec=512)
    counts = dict(zip(TIER_NAMES, np.bincount(tt.tier, minlength=len(TIER_NAMES)), strict=True))
    print(kind, norm_first, {k: int(v) for k, v in counts.items() if v})
    bits = all_bit_strings(n)
    tiers = {
        "exhaustive": exhaustive_T(p, n),
        "per-string": fast_T(p, bits),
        "double-double": dd_T(p, bits),
    }
    with arb_precision(512):
        for name, (mid, rad) in tiers.items():
            ok = np.isfinite(mid) & np.isfinite(rad)
            print(name, "finite balls:", int(ok.sum()), "of", mid.size)
            for k in np.flatnonzero(ok):
                if exact[k].is_finite():
                    lo = arb(float(mid[k])) - arb(float(rad[k]))
                    hi = arb(float(mid[k])) + arb(float(rad[k]))
                    assert lo <= exact[k] <= hi, (name, k, mid[k], rad[k], exact[k])
        for k, ball in enumerate(exact):
            want = LABEL_UNCERTAIN
            if ball.is_finite():
                want = 1 if ball > 0 else 0 if ball <= 0 else LABEL_UNCERTAIN
            if tt.label[k] != LABEL_UNCERTAIN:
                assert want == tt.label[k], (k, tt.label[k], tt.tier[k], ball)
            else:
                assert want == LABEL_UNCERTAIN, (k, ball)
