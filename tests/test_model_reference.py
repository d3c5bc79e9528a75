"""The generic algorithm in its contexts: float64 == mpmath reference, rigorous float64 and arb
enclosures contain the high-precision value, parameter-ball enclosures contain every point."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verify.model import ModelConfig, Params, forward, init_params
from verify.model.arithmetic.contexts import ArbContext, Float64Context, MidRadContext
from verify.model.generic.enclosure import enclose, enclose_output
from verify.model.generic.reference import reference_forward, run_generic

CONFIGS = [
    ModelConfig(d_model=8, n_layers=2, n_heads=2),
    ModelConfig(d_model=6, n_layers=2, n_heads=3, norm_first=True, ln_eps=1e-5),
    ModelConfig(
        d_model=8,
        n_layers=1,
        n_heads=2,
        embedding="concat",
        pos_encoding="learned",
        eos=False,
        max_len=6,
        ln_affine=False,
    ),
]


def _arb_to_mpf(x: object) -> mpmath.mpf:
    """An exact arb (midpoint or radius) as an exact mpf."""
    man, exp = x.man_exp()
    with mpmath.workprec(100000):
        return mpmath.ldexp(mpmath.mpf(int(man)), int(exp))


def _contains(mid: float, rad: float, exact: mpmath.mpf) -> bool:
    with mpmath.workdps(60):
        return abs(mpmath.mpf(mid) - exact) <= mpmath.mpf(rad)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_contexts_agree_and_enclose_the_reference(cfg: ModelConfig) -> None:
    p = init_params(cfg, "gaussian", seed=4, scale=0.6)
    bits = np.random.default_rng(1).integers(0, 2, size=(3, 5))
    ref = reference_forward(p, bits, dps=60)
    f64 = forward(p, bits, diagnostics=True)
    np.testing.assert_allclose(f64.T, ref.T_float, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(f64.var, ref.var_float, rtol=1e-12)
    gen = run_generic(Float64Context(), p, bits)
    np.testing.assert_allclose(gen.T, f64.T, rtol=1e-13, atol=1e-14)
    mr = run_generic(MidRadContext(), p, bits, readout_only=True)
    enc = enclose(p, bits, prec=128)
    for b in range(bits.shape[0]):
        print(f"T={ref.T[b]}  midrad radius={mr.T.rad[b]:.3g}  arb radius={enc.T[b].rad()}")
        assert _contains(mr.T.mid[b], mr.T.rad[b], ref.T[b])
        mid, rad = _arb_to_mpf(enc.T[b].mid()), _arb_to_mpf(enc.T[b].rad())
        with mpmath.workdps(60):
            assert abs(mid - ref.T[b]) <= rad + mpmath.mpf(10) ** -55  # reference: 60 digits
        assert enc.T_lower[b] <= float(ref.T[b]) <= enc.T_upper[b]
    lows, highs, exact = enc.var_lower.ravel(), enc.var_upper.ravel(), ref.var.ravel()
    assert all(lo <= v <= hi for lo, v, hi in zip(lows, exact, highs, strict=True))
    assert np.all(enc.var_positive)


def test_parameter_ball_encloses_every_point_of_the_cube() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=2, d_ff=8, ln_eps=1e-3)
    p = init_params(cfg, "xavier_uniform", seed=2)
    bits = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.uint8)
    r = 1e-4
    enc = enclose(p, bits, prec=96, radius=r)
    mr = run_generic(MidRadContext(), p, bits, radius=r)
    rng = np.random.default_rng(0)
    theta = p.flatten()
    for corner in range(6):
        delta = (
            rng.choice([-r, r], size=theta.shape) if corner < 3 else rng.uniform(-r, r, theta.shape)
        )
        q = Params.unflatten(cfg, theta + delta)
        # theta + delta is rounded to float64; it may leave the cube by half an ulp, so enclose
        # the point itself and check that the balls overlap (the point ball is ~1e-30 wide)
        point = enclose_output(q, bits, prec=96)
        for b in range(2):
            assert enc.T[b].overlaps(point[b])
            assert abs(mr.T.mid[b] - float(point[b].mid())) <= mr.T.rad[b] + 1e-15
    assert np.all(enc.z_upper() <= 1 / np.sqrt(1e-3) * (1 + 1e-12))


def test_eps_zero_constant_input_is_undefined_everywhere() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, pos_encoding="none")
    arrays = dict(init_params(cfg, "gaussian", seed=0))
    arrays["token_embedding"] = np.ones((3, 4))
    arrays["layers.0.self_attn.out_proj.weight"] = np.zeros((4, 4))
    arrays["layers.0.self_attn.out_proj.bias"] = np.full(4, 0.25)
    p = Params(cfg, arrays)
    bits = np.zeros((1, 3), dtype=np.uint8)
    ref = reference_forward(p, bits, dps=30)
    assert mpmath.isnan(ref.T[0])
    enc = enclose(p, bits)
    assert not enc.T[0].is_finite() and not enc.var_positive[0, 0, 0]
    assert enc.var_upper[0, 0, 0] == 0.0  # exactly zero variance, proven
    mr = run_generic(MidRadContext(), p, bits)
    assert not np.isfinite(mr.T.rad[0]) or np.isnan(mr.T.mid[0])


def test_arb_context_rejects_nothing_silently() -> None:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1)
    p = init_params(cfg, "gaussian", seed=0)
    from verify.errors import ValidationError

    with pytest.raises(ValidationError, match="radius"):
        run_generic(ArbContext(64), p, [[0, 1]], radius=-1.0)
    with pytest.raises(ValidationError, match="prec"):
        enclose(p, [[0, 1]], prec=10)


def test_midrad_exp_bound_survives_underflow() -> None:
    from verify.model.arithmetic.contexts import MidRad

    ctx = MidRadContext()
    x = MidRad(np.array([-800.0, -800.0, 3.0]), np.array([700.0, 1.0, 1e-3]))
    out = ctx.exp(x)
    # the largest exact value in each ball is exp(mid + rad)
    with mpmath.workdps(50):
        for k in range(3):
            top = mpmath.exp(mpmath.mpf(x.mid[k]) + mpmath.mpf(x.rad[k]))
            bottom = mpmath.exp(mpmath.mpf(x.mid[k]) - mpmath.mpf(x.rad[k]))
            for v in (top, bottom):
                assert abs(mpmath.mpf(out.mid[k]) - v) <= mpmath.mpf(out.rad[k]), (k, out)
