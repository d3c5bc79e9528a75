"""Tests of verify.theory.norms and verify.theory.bounds: the algebraic steps of the derivations
(sympy), the numerical inequalities they rest on, and the properties of the constants (monotone,
box >= theta, validation). Derivations: docs/derivations.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params, n_params
from verify.theory import bounds, norms, packing

# ----------------------------------------------------------------------------- sympy: layer norm


def test_layer_norm_jacobian_formula_sympy():
    """J = dg/dv = z (P - g g^T / D) with g = z P v, P the centring projector (D = 3).
    (var + eps is renamed W after differentiating, so that expand() sees the powers of W.)"""
    d = 3
    v = sp.Matrix(sp.symbols(f"v0:{d}", real=True))
    eps, big_w = sp.symbols("epsilon W", positive=True)
    c = v - sp.ones(d, 1) * sum(v) / d
    var = (c.T * c)[0] / d
    z = 1 / sp.sqrt(var + eps)
    g = z * c
    proj = sp.eye(d) - sp.ones(d, d) / d
    diff = (g.jacobian(v) - z * (proj - g * g.T / d)).subs(var + eps, big_w)
    assert diff.applyfunc(sp.expand) == sp.zeros(d, d)


def test_layer_norm_jacobian_spectrum_sympy():
    """For J = z (P - g g^T / D), g = z c, c centred, z = W^{-1/2}: J 1 = 0,
    J g = z (1 - var/W) g (= z eps/(var+eps) g at W = var + eps), J w = z w for w orthogonal to
    1 and c: so ||J||_2 = z (D >= 3)."""
    d = 3
    a, b = sp.symbols("a b", real=True)
    big_w = sp.symbols("W", positive=True)
    c = sp.Matrix([a, b, -a - b])
    var = (c.T * c)[0] / d
    z = 1 / sp.sqrt(big_w)
    g = z * c
    proj = sp.eye(d) - sp.ones(d, d) / d
    jac = z * (proj - g * g.T / d)
    assert (jac * sp.ones(d, 1)).applyfunc(sp.expand) == sp.zeros(d, 1)
    assert (jac * g - z * (1 - var / big_w) * g).applyfunc(sp.expand) == sp.zeros(d, 1)
    w = c.cross(sp.ones(d, 1))
    assert (c.T * w)[0].expand() == 0 and sum(w).expand() == 0
    assert (jac * w - z * w).applyfunc(sp.expand) == sp.zeros(d, 1)


def test_unit_vector_inequality_identity_sympy():
    """|A/|A| - B/|B|| (|A| + |B|) <= 2 |A - B|: 4|A-B|^2 - |Â-B̂|^2 (s+t)^2 = (2+2c)(s-t)^2."""
    s, t, cos = sp.symbols("s t c", real=True)
    lhs = 4 * (s**2 + t**2 - 2 * s * t * cos) - (2 - 2 * cos) * (s + t) ** 2
    assert sp.expand(lhs - (2 + 2 * cos) * (s - t) ** 2) == 0


def test_harmonic_factor_below_blowup_product_sympy():
    """2 z z'/(z + z') <= (1+z)(1+z')/4 via (1+a^2) >= 2a, (1+b^2) >= 2b, a^2+b^2 >= 2ab."""
    a, b = sp.symbols("a b", positive=True)
    for big, small in ((1 + a**2, 2 * a), (1 + b**2, 2 * b), (a**2 + b**2, 2 * a * b)):
        assert sp.factor(big - small) in ((a - 1) ** 2, (b - 1) ** 2, (a - b) ** 2)
    z, zp = a**2, b**2
    gap = (1 + z) * (1 + zp) / 4 - 2 * z * zp / (z + zp)
    # numerator of the gap is the product of the three AM-GM factors minus 8 a^2 b^2 >= 0
    num = sp.numer(sp.together(gap))
    assert sp.expand(num - ((1 + z) * (1 + zp) * (z + zp) - 8 * z * zp)) == 0


def test_layer_norm_endpoint_lipschitz_numerically():
    """||g(u) - g(v)|| <= 2 z_u z_v / (z_u + z_v) ||P(u - v)||, incl. near-zero variance."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3000):
        d = int(rng.integers(2, 9))
        eps = float(10.0 ** rng.uniform(-8, 1))
        u = rng.normal(size=d) * 10.0 ** rng.uniform(-5, 1)
        v = rng.normal(size=d) * 10.0 ** rng.uniform(-5, 1)
        if rng.random() < 0.3:
            v = -u * rng.uniform(0.1, 2)
        cu, cv = u - u.mean(), v - v.mean()
        zu, zv = 1 / np.sqrt(cu @ cu / d + eps), 1 / np.sqrt(cv @ cv / d + eps)
        lhs = np.linalg.norm(zu * cu - zv * cv)
        rhs = 2 * zu * zv / (zu + zv) * np.linalg.norm(cu - cv)
        worst = max(worst, lhs / rhs)
    assert worst <= 1 + 1e-12
    assert worst > 0.99  # the factor is attained (equal variances)


# ----------------------------------------------------------------------------- sympy: softmax


def test_softmax_jacobian_and_l1_bound_sympy():
    """dp/ds = diag(p) - p p^T, so ||dp||_1 = sum_j p_j |ds_j - p.ds| <= 2 sum_j p_j |ds_j|."""
    s = sp.symbols("s0:3", real=True)
    ex = [sp.exp(si) for si in s]
    p = sp.Matrix([e / sum(ex) for e in ex])
    jac = p.jacobian(sp.Matrix(s))
    assert sp.simplify(jac - (sp.diag(*p) - p * p.T)) == sp.zeros(3, 3)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        n = int(rng.integers(2, 40))
        logits = rng.normal(size=n) * rng.uniform(0, 5)
        pn = np.exp(logits - logits.max())
        pn /= pn.sum()
        ds = rng.normal(size=n)
        dp = pn * ds - pn * (pn @ ds)
        assert np.abs(dp).sum() <= 2 * (pn * np.abs(ds)).sum() + 1e-12


def test_softmax_weight_bound_sympy():
    """With logits in [-R, R], p_j <= 1/(1 + (S-1) e^{-2R}) <= e^{2R}/S."""
    r, n = sp.symbols("R S", positive=True)
    gap = sp.exp(2 * r) / n - 1 / (1 + (n - 1) * sp.exp(-2 * r))
    # gap * S * (1 + (S-1) e^{-2R}) = e^{2R} - 1 >= 0
    assert sp.simplify(gap * n * (1 + (n - 1) * sp.exp(-2 * r)) - (sp.exp(2 * r) - 1)) == 0


def _softmax(v: np.ndarray) -> np.ndarray:
    w = np.exp(v - v.max())
    return w / w.sum()


def _reweighting_cases(seed: int, shift: bool):
    """3000 random (ds, ||sum_j dp_j u_j||, max_j ||u_j||): logits at scales 0..5, logit changes
    at scales 1e-3 to 10 (plus a common shift when ``shift``), u random in the unit ball or
    aligned with the sign of ds - p.ds (the covariance's extremal direction)."""
    rng = np.random.default_rng(seed)
    for i in range(3000):
        n = int(rng.integers(2, 40))
        s = rng.normal(size=n) * rng.uniform(0, 5)
        ds = rng.normal(size=n) * 10.0 ** rng.uniform(-3, 1)
        if shift:
            ds = ds + rng.normal() * (i % 3)
        if i % 2:
            u = rng.normal(size=(n, 3))
            u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1.0)
        else:
            u = np.outer(np.sign(ds - _softmax(s) @ ds), [1.0, 0.0, 0.0])
        dp = _softmax(s + ds) - _softmax(s)
        yield ds, float(np.linalg.norm(dp @ u)), float(np.linalg.norm(u, axis=1).max())


def test_softmax_reweighting_covariance_bound():
    """Lemma 3.1, step 3: ||sum_j (softmax(s + ds) - softmax(s))_j u_j|| <= max_j |ds_j|
    max_j ||u_j|| for any vectors u_j (the integral along the segment of Cov_p(ds, u), by
    Cauchy-Schwarz with Var_p ds <= max ds^2): the factor 2 of ||dp||_1 is not needed. Random
    cases (``_reweighting_cases``) and the attaining case: uniform p, ds = +-delta and u = +-e_1
    on two halves (ratio tanh(d)/d)."""
    worst = 0.0
    for ds, meas, umax in _reweighting_cases(2, shift=False):
        bound = float(np.abs(ds).max()) * umax
        assert meas <= bound * (1 + 1e-12) + 1e-15
        worst = max(worst, meas / bound)
    assert worst > 0.5  # the factor-1 bound is approached well past the old factor 2's half
    for delta in (1e-3, 1e-2, 0.1):
        sign = np.tile([1.0, -1.0], 8)
        dp = _softmax(delta * sign) - _softmax(np.zeros(16))
        ratio = float(np.linalg.norm(dp @ np.outer(sign, [1.0, 0.0]))) / delta
        assert ratio == pytest.approx(math.tanh(delta) / delta, rel=1e-9)
        assert 0.99 < ratio <= 1.0


def test_softmax_reweighting_range_bound():
    """Lemma 2.9, step 3 at the flipped position: ||sum_j (softmax(s + ds) - softmax(s))_j u_j||
    <= (max_j ds_j - min_j ds_j) / 2 max_j ||u_j|| (the covariance bound with Popoviciu's
    Var_p ds <= range^2 / 4). Random cases with a shifted ds (the bound does not move, max |ds|
    does), and the attaining case: p = (1/2, 1/2), ds = (2d, -d), u = +-e_1."""
    worst = 0.0
    for ds, meas, umax in _reweighting_cases(3, shift=True):
        bound = float(ds.max() - ds.min()) / 2 * umax
        assert meas <= bound * (1 + 1e-12) + 1e-15
        worst = max(worst, meas / bound)
    assert worst > 0.5
    for d in (1e-4, 1e-3, 1e-2):
        dp = _softmax(np.array([2 * d, -d])) - _softmax(np.zeros(2))
        ratio = float(np.linalg.norm(dp @ np.array([[1.0], [-1.0]]))) / (1.5 * d)
        assert ratio == pytest.approx(math.tanh(1.5 * d) / (1.5 * d), rel=1e-9)
        assert 0.9999 < ratio <= 1.0


# ----------------------------------------------------------------------------- composition


def _one_layer_post_ln(seed: int) -> Params:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, d_ff=4, ln_eps=0.1, pos_encoding="none")
    return init_params(cfg, "gaussian", seed)


def test_c_infl_composition_matches_symbolic_recursion():
    """For one post-LN layer the recursion of docs/derivations.md, written out in sympy,
    evaluates to the number c_infl computes."""
    syms = sp.symbols("a0 g1 g2 F Wo V Q K Y bq bk dh", nonnegative=True)
    a0, g1, g2, ff, wo, vv, qq, kk, yy, bq, bk, dh = syms
    qn, kn, vc = qq * yy + bq, kk * yy + bk, vv * yy
    gq, gk, big_e = (
        qq * kn / sp.sqrt(dh),
        qn * kk / sp.sqrt(dh),
        sp.exp(2 * qn * kn / sp.sqrt(dh)),
    )
    # at the flipped position (bt = 0 before layer 1): v_c times half the logit-change range
    m_n = wo * (vv + vc * (gq + gk / 2)) * a0
    m_o = wo * big_e * (vv + 2 * vc * gk) * a0  # S * at every other position
    lam = (g1 / 4) * (g2 / 4) * (1 + ff)
    c_sym = sp.Max(lam * (a0 + m_n), lam * m_o)
    fn = sp.lambdify(syms, c_sym, "mpmath")
    for seed in range(5):
        p = _one_layer_post_ln(seed)
        nm = norms.parameter_norms(p)
        lay, hd = nm.layers[0], nm.layers[0].heads[0]
        values = {
            a0: nm.token_diff,
            g1: lay.g1,
            g2: lay.g2,
            ff: lay.w2 * lay.w1,
            wo: lay.wo,
            vv: hd.wv,
            qq: hd.wq,
            kk: hd.wk,
            yy: nm.emb_max,
            bq: hd.bq,
            bk: hd.bk,
            dh: 4,
        }
        assert fn(*(values[k] for k in syms)) == pytest.approx(bounds.c_infl(p), rel=1e-12)


def test_c_infl_attention_off_is_exact_layer_norm_product():
    """W_o = 0 and W_2 = 0: C_infl = ||E1 - E0|| g1 g2 / 16 (only the two layer norms act)."""
    p = _one_layer_post_ln(0)
    p = p.with_arrays(
        {
            "layers.0.self_attn.out_proj.weight": np.zeros((4, 4)),
            "layers.0.linear2.weight": np.zeros((4, 4)),
        }
    )
    tok = p["token_embedding"]
    g1 = np.abs(p["layers.0.norm1.weight"]).max()
    g2 = np.abs(p["layers.0.norm2.weight"]).max()
    assert bounds.c_infl(p) == pytest.approx(np.linalg.norm(tok[1] - tok[0]) * g1 * g2 / 16)


# ----------------------------------------------------------------------------- properties


def _configs():
    yield ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2)
    yield ModelConfig(
        d_model=8,
        n_layers=2,
        n_heads=2,
        ln_eps=1e-2,
        norm_first=True,
        pos_encoding="learned",
        embedding="concat",
        max_len=16,
    )
    yield ModelConfig(
        d_model=4,
        n_layers=1,
        n_heads=1,
        ln_eps=1.0,
        ln_affine=False,
        eos=False,
        pos_encoding="none",
    )


@pytest.mark.parametrize("cfg", list(_configs()), ids=lambda c: f"L{c.n_layers}nf{c.norm_first}")
def test_theta_constants_below_box_constants(cfg):
    """Every constant of theta in [-B, B]^M is at most the box's (box_norms is the sup)."""
    for seed in range(5):
        p = init_params(cfg, "uniform", seed, 0.7)
        assert bounds.c_infl(p) <= bounds.c_infl_box(cfg, 0.7)
        assert bounds.c_lip(p) <= bounds.c_lip_box(cfg, 0.7)
        box_beta = bounds.beta_lower_bound(norms.box_norms(cfg, 0.7))
        assert box_beta <= bounds.beta_lower_bound(p) + 1e-12
    # the box supremum is attained by the all-B parameters
    allb = Params.unflatten(cfg, np.full(n_params(cfg), 0.7))
    nb, na = norms.box_norms(cfg, 0.7), norms.parameter_norms(allb)
    assert na.layers[0].wo == pytest.approx(nb.layers[0].wo)
    assert na.layers[0].heads[0].wq == pytest.approx(nb.layers[0].heads[0].wq)
    assert na.w == pytest.approx(nb.w)


def test_k_is_the_number_of_layer_norms():
    for nf, k in ((False, 4), (True, 5)):
        cfg = ModelConfig(d_model=8, n_layers=2, ln_eps=0.25, norm_first=nf)
        assert norms.n_layer_norms(cfg) == k
        assert bounds.lemma_3_2_bound(cfg) == pytest.approx(3.0**k)
        p = init_params(cfg, "xavier_uniform", 0)
        r = forward(p, np.zeros((1, 5), dtype=np.uint8), diagnostics=True)
        assert r.tau.shape[1] == k


def test_diameter_and_prop_3_5_formula():
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.1)
    m = n_params(cfg)
    assert packing.diameter(cfg, 0.5) == pytest.approx(2 * 0.5 * math.sqrt(m))
    expected = m * math.log10(1 + bounds.c_lip_box(cfg, 0.5) * packing.diameter(cfg, 0.5) / 0.1)
    assert packing.log10_prop_3_5(cfg, 0.5, 0.1) == pytest.approx(expected)


def test_n_star_and_cor_3_3_consistent():
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.1)
    p = init_params(cfg, "xavier_normal", 3)
    assert bounds.n_star(p, 0.05) == pytest.approx(bounds.cor_3_3_bound(p) / 0.1, rel=1e-9)
    nb = norms.box_norms(cfg, 1.0)
    expected = math.log10(bounds.cor_3_3_bound(nb) / 0.1)
    assert bounds.log10_n_star(nb, 0.05) == pytest.approx(expected)
    big = ModelConfig(d_model=16, n_layers=2, ln_eps=1e-5)
    assert math.isinf(bounds.c_infl_box(big, 3.0))  # beyond float64 ...
    # ... but its log10 is known
    assert math.isfinite(bounds.log10_c_infl(norms.box_norms(big, 3.0)))


def test_lipschitz_coefficients_cover_every_array():
    cfg = ModelConfig(
        d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, pos_encoding="learned", max_len=8
    )
    groups = bounds.lipschitz_coefficients(init_params(cfg, "gaussian", 0))
    names = set(p for p in init_params(cfg, "gaussian", 0))
    covered = {g for g in groups if g in names}
    # in_proj arrays are split per head into q/k/v groups; every other array has its own group
    assert covered == {n for n in names if "in_proj" not in n}
    assert all(v > 0 for v in groups.values())


def test_validation_errors():
    cfg0 = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.0)
    with pytest.raises(ValidationError, match="ln_eps"):
        bounds.c_lip(init_params(cfg0, "uniform", 0))
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.1, eos=False)
    with pytest.raises(ValidationError, match="config"):
        bounds.n_star(init_params(cfg, "uniform", 0), 0.1)
    with pytest.raises(ValidationError, match="xi"):
        packing.log10_prop_3_5(cfg, 1.0, 0.0)
    with pytest.raises(ValidationError, match="box"):
        norms.box_norms(cfg, -1.0)
    with pytest.raises(ValidationError, match="params"):
        norms.parameter_norms({"not": "params"})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="N"):
        bounds.lemma_2_9_bound(1.0, 1.0, 1.0, 0, False)
