"""The double-double tier's 2-norm radius rules against an independent implementation (issue
41: ``tests/_l2_reference.py``) on constructions where each term weighs
(``tests/_l2_constructions.py``): the kernel's radius must be at least the reference's (1 - REL),
so a kernel that lost a term, used the wrong norm's gain or the wrong block's norm falls below
it. Printed: kernel / reference (the report's ratios).

- ``attention_l2`` with zero input radii (its whole radius is rounding; the softmax's rounding
  at the score midpoints, sum_j p0_j |v_j|, is its largest part) and with radii 1e-6 and 1e-3
  (the propagated terms);
- ``layer_norm_lipschitz`` on a ball of radius 0.6 |P v| with gains ~30 (the constant on the
  ball is 2.5x the one at the midpoint);
- the whole driver ``certified_T_dd`` with the embeddings' radii widened by R = 1e-9 (so that
  the propagated terms, not its ~1e-31 rounding, make the radius), every construction, post-LN
  and pre-LN (with a final norm), eps 0 and 1e-5, L = 2.

Runs with and without the JIT (``tests/test_radius_mutations.py`` runs it against the radius
mutants).
"""

from __future__ import annotations

import dataclasses
import math

import _l2_reference as ref
import numpy as np
import pytest
from _l2_constructions import assert_at_least, construct, ln_case, settings

from verify.model.arithmetic.matrix_norms import l2_upper, spectral_norm_upper
from verify.model.double_double.dd_l2 import attention_l2, layer_norm_lipschitz, matvec_radius
from verify.model.double_double.dd_pass import dd_T, prepare_dd

R = 1e-9  # the double-double kernel's embedding radius, added to its tables' own


def _attention_case(seed: int, radius: float) -> tuple:
    rng = np.random.default_rng(seed)
    s, n_heads, dh = 5, 2, 4
    d = n_heads * dh
    qkv = rng.normal(size=(s, 3 * d)) * np.repeat([2.0, 2.0, 1.0], d)  # scores up to ~10
    rq = radius * rng.uniform(0.5, 1.0, size=(s, 3 * n_heads))
    return qkv, rq, n_heads


@pytest.mark.parametrize(("seed", "radius"), [(0, 0.0), (1, 0.0), (2, 1e-3), (3, 1e-6)])
def test_attention_l2_at_least_the_reference(seed: int, radius: float) -> None:
    """Zero input radii: the radius is the rounding (the softmax's rounding at the score
    midpoints, sum_j p0_j |v_j|, its largest part); radii 1e-3: the propagated terms."""
    qkv, rq, n_heads = _attention_case(seed, radius)
    s, d3 = qkv.shape
    d = d3 // 3
    qh = np.ascontiguousarray(qkv[:, :, None])
    ath, atl, rat = np.zeros((d, 1)), np.zeros((d, 1)), np.zeros(1)
    ph, pl, pr = np.zeros((s, 1)), np.zeros((s, 1)), np.zeros((s, 1))
    for i in (0, s - 1):
        attention_l2(qh, np.zeros_like(qh), np.ascontiguousarray(rq[:, :, None]), i, n_heads,
                     0.5, 0.0, 0.0, ath, atl, rat, ph, pl, pr)  # fmt: skip
        want = ref.dd_attention(qkv, rq, i, n_heads, 0.5)
        assert_at_least(rat, np.array([want]), f"attention_l2 seed {seed} radius {radius} i {i}")


@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_double_double_layer_norm_lipschitz_at_least_the_reference(eps: float) -> None:
    v, gain, _ = ln_case(12)
    nb = 8
    vh = np.ascontiguousarray(v[:, :nb])
    rho = 0.6 * np.linalg.norm(vh - vh.mean(axis=0), axis=0)
    out = np.zeros(nb)
    layer_norm_lipschitz(vh, np.zeros_like(vh), rho, eps, False, float(np.abs(gain).max()), out)
    want = np.array(
        [ref.lipschitz(vh[:, k], rho[k], eps, float(np.abs(gain).max())) for k in range(nb)]
    )
    assert_at_least(out, want, f"layer_norm_lipschitz eps {eps}")
    assert math.isfinite(out.max())


@pytest.mark.parametrize("rho", [0.0, 1e-30, 1e-9])
def test_matvec_radius_at_least_the_reference(rho: float) -> None:
    """|W|_2 rho + the product's rounding (n + 2)^2 UU (|b|_2 + |W|_F |a|_2): at rho = 0 and
    1e-30 (comparable to the rounding) the rounding weighs; at 1e-9 the propagated term."""
    rng = np.random.default_rng(9)
    w, b = rng.normal(size=(16, 8)), rng.normal(size=16)
    a = np.abs(rng.normal(size=(8, 4)))
    na = np.array([ref.norm(a[:, k]) for k in range(4)]) * (1 + 1e-15)
    out = np.zeros(4)
    matvec_radius(np.full(4, rho), na, 8, 16, spectral_norm_upper(w), l2_upper(w), l2_upper(b),
                  out)  # fmt: skip
    want = np.array([ref.matvec_radius_dd(rho, a[:, k], w, b) for k in range(4)])
    assert_at_least(out, want, f"dd matvec_radius rho {rho}")


@pytest.mark.parametrize(("name", "norm_first", "eps"), settings())
def test_double_double_radius_at_least_the_reference(
    name: str, norm_first: bool, eps: float
) -> None:
    p = construct(name, norm_first, eps)
    bits = np.array([[0, 1, 1], [1, 1, 0]], dtype=np.uint8)
    inputs = prepare_dd(p, 3)
    tables = inputs.tables._replace(y0_rad=inputs.tables.y0_rad + R)
    _, r = dd_T(p, bits, inputs=dataclasses.replace(inputs, tables=tables))
    assert_at_least(r, ref.dd_radius(p, bits, tables.y0_rad), f"dd {name} {norm_first} {eps}")


@pytest.mark.parametrize("name", ["gains_30_003", "out_proj", "ffn_w1", "values"])
def test_double_double_box_corner_inside_the_radius(name: str) -> None:
    """The exact error at a corner of the embeddings' box (token and position rows each moved
    by R/2 along the sign of T's gradient, T of the moved model in arb at 256 bits) is inside
    the double-double radius of the box, post-LN at eps = 0. Printed: error / radius (how much
    of the worst-case chain of Lipschitz constants one corner realises)."""
    from flint import arb

    from verify.model.arithmetic.contexts import arb_precision
    from verify.model.generic.enclosure import enclose_output
    from verify.model.plain.forward import forward

    p = construct(name, False, 0.0)
    bits = np.array([[0, 1, 1], [1, 1, 0]], dtype=np.uint8)
    inputs = prepare_dd(p, 3)
    tables = inputs.tables._replace(y0_rad=inputs.tables.y0_rad + R)
    t, r = dd_T(p, bits, inputs=dataclasses.replace(inputs, tables=tables))
    names = ("token_embedding", "pos_embedding")
    base = forward(p, bits).T
    for b in range(bits.shape[0]):
        moved = {}
        for nm in names:
            grad = np.zeros(p[nm].size)
            for q in range(grad.size):
                step = np.zeros(p[nm].size)
                step[q] = 1e-6
                pq = p.with_arrays({nm: p[nm] + step.reshape(p[nm].shape)})
                grad[q] = (forward(pq, bits[b : b + 1]).T[0] - base[b]) / 1e-6
            moved[nm] = p[nm] + (0.5 * R * np.sign(grad)).reshape(p[nm].shape)
        exact = enclose_output(p.with_arrays(moved), bits[b : b + 1], prec=256)[0]
        with arb_precision(256):
            err = abs(exact - arb(float(t[b])))
            assert err <= arb(float(r[b])), (name, b, err, r[b])
            print(
                f"dd box corner {name} string {b}: error / radius {float(err.upper()) / r[b]:.3e}"
            )
