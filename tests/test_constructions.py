"""The numpy transcriptions of model-spec used by the unit steps (verify.checks.constructions)
agree with the float64 forward pass; the constructions do what their docstrings say; the
Lemma 3.2 rounding allowance is a real allowance; C_Lip does not depend on PYTHONHASHSEED; the
Lemma 3.1 reweighting rows attain the covariance bound."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from verify.checks import constructions as con
from verify.checks import infl_constructions as ic
from verify.checks import lipschitz_constructions as lc
from verify.model import ModelConfig, forward, init_params
from verify.statements.lemma_3_2 import rounded_bounds, rounding_allowance
from verify.theory import bounds


@pytest.mark.parametrize("heads", [1, 2])
def test_numpy_blocks_match_forward(heads):
    cfg = ModelConfig(
        d_model=4, n_layers=1, n_heads=heads, d_ff=8, ln_eps=1e-2, pos_encoding="none"
    )
    p = init_params(cfg, "gaussian", 3)
    x = np.array([1, 0, 1, 1, 0], dtype=np.uint8)
    y = p["token_embedding"][np.append(x, 2)]
    h = con.layer_norm(
        y + con.mha(y, p), p["layers.0.norm1.weight"], p["layers.0.norm1.bias"], 1e-2
    )
    out = con.layer_norm(
        h + con.ffn(h, p), p["layers.0.norm2.weight"], p["layers.0.norm2.bias"], 1e-2
    )
    t = out[-1] @ p["readout.weight"] + p["readout.bias"]
    assert t == pytest.approx(float(forward(p, x[None]).T[0]), rel=1e-12, abs=1e-12)
    rows = slice(2, 4)
    assert np.allclose(con.mha(y, p, rows=rows), con.mha(y, p)[rows], rtol=1e-13, atol=1e-14)


def test_ln_corner_is_nearly_tight_and_mlp_corner_too():
    for build in (con.ln_corner, con.mlp_corner):
        m, b, _ = con.influence(build(64), 64, 63)
        assert 0.98 < m / b <= 1.0


def test_pre_ln_corner_attains_the_layer_norm_factors():
    """Pre-LN, the change through norm2, the MLP and the final norm: ratio -> (1 + s)/(4 + s)
    N/(N + 1) (the plain pre-LN corner stays at 1/16)."""
    m, b, _ = con.influence(ic.pre_ln_corner(1024), 1024, 1023)
    assert 0.99 < m / b <= 1.0
    m, b, _ = con.influence(con.ln_corner(1024, True), 1024, 1023)
    assert m / b < 1 / 16


def test_flipped_position_reweighting_is_attained(monkeypatch):
    """The split query/key turn attains v_c range(Δs)/2 (ratio 1.5x/(1 + 1.5x)); the query
    turn alone reaches 2/3 of it; halving the term is a violation."""
    row = ic.step_attention_at_flip_split()
    assert row.ratio == pytest.approx(150 / 151, rel=1e-4) and row.ratio <= 1.0
    assert ic.step_attention_at_flip(400.0, 4097).ratio == pytest.approx(2 / 3, rel=1e-2)
    original = bounds.infl_reweighting_at_flip
    monkeypatch.setattr(bounds, "infl_reweighting_at_flip", lambda *a: original(*a) / 2)
    assert ic.step_attention_at_flip_split().ratio > 1.9


def test_lipschitz_mlp_weight_rows_are_tight():
    rows = [r for r in lc.lip_group_rows() if "MLP weight" in r.factor or "per-head" in r.factor]
    assert len(rows) == 3 and all(0.999 < r.ratio <= 1.0 for r in rows)


def test_concentrated_attention_needs_the_softmax_factor(monkeypatch):
    """Issue 11's model: the true constant holds; without e^{2R} it fails at N = 1024."""
    import mpmath

    p = con.concentrated_attention(1024)
    m, b, _ = con.influence(p, 1024, 512)
    assert m <= b
    monkeypatch.setattr(bounds, "infl_softmax_weight", lambda q, k, s: mpmath.mpf(1))
    m2, b2, _ = con.influence(p, 1024, 512)
    assert m2 == m and m2 > b2


def test_rounding_allowance_is_real():
    k = 4
    assert rounding_allowance(4 * k + 4) > 1.0
    assert rounding_allowance(20) >= (1 + 2.0**-53) ** 20  # float pow rounds to 1 here
    cfg = ModelConfig(d_model=8, n_layers=2, ln_eps=1e-2)
    z, beta = rounded_bounds(cfg)
    assert z > bounds.z_max(cfg) and beta > bounds.lemma_3_2_bound(cfg)
    assert beta / bounds.lemma_3_2_bound(cfg) - 1 < 1e-14


def test_c_lip_independent_of_hash_seed():
    code = (
        "from verify.model import ModelConfig, init_params; from verify.theory import bounds;"
        "p = init_params(ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2),"
        " 'gaussian', 0); print(repr(bounds.c_lip(p)), list(bounds.lipschitz_coefficients(p)))"
    )
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, check=True).stdout)  # fmt: skip
    assert len(outs) == 1


def test_lipschitz_reweighting_rows_attain_the_covariance_bound(monkeypatch):
    """Lemma 3.1's W_q / W_k rows reach the covariance bound max|Δs| V Y (ratio 1 - 2.5e-5, clear
    of rounding: the same ratio at a 10x smaller step) and fail once it is halved."""
    from verify.checks import lipschitz_constructions as lc

    def ratios() -> list[float]:
        return [r.ratio for r in lc.lip_group_rows() if "reweighting" in r.factor]

    assert len(ratios()) == 2 and all(0.9999 < r <= 1.0 for r in ratios())
    direction = np.outer(np.eye(4)[0], np.ones(4) / 2).reshape(-1)
    x = (np.arange(16) % 2).astype(np.uint8)
    for group in ("layers.0.q0.w", "layers.0.k0.w"):
        coarse, fine = (lc.group_ratio(lc.reweighting_model(), group, direction, x, step)
                        for step in (1e-4, 1e-5))  # fmt: skip
        assert coarse[0] == pytest.approx(fine[0], rel=1e-8)
    original = bounds.lip_reweighting
    monkeypatch.setattr(bounds, "lip_reweighting", lambda *a: 0.5 * original(*a))
    assert all(r > 1.99 for r in ratios())
