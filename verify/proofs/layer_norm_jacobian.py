"""Lemma 3.1's layer-norm Jacobian and its eigenvalues, for every width D >= 2
(docs/derivations.md#lemma-31, step 2), by aggregates (:mod:`verify.proofs.aggregates`).

g(u) = z(u) (u - mean(u) 1), var = |u - mean 1|^2 / D, z = (var + eps)^{-1/2}. The claim:
J = dg/du = z (P - g g^T / D), P = I - 11^T/D, symmetric, with J 1 = 0,
J g = z eps/(var + eps) g and J v = z v for v orthogonal to 1 and g; these three spaces span
R^D (g is orthogonal to 1), so ||J||_2 = z (lemma_3_1.ln_jacobian_norm). The rest entries
J_1k (k >= 3) in the eigenvector rows are the off-diagonal entry just proved, at x_k.

sympy differentiates the layer norm itself; the derivatives are then written with
s = (var + eps)^{1/2} > 0 a free symbol (z = 1/s, eps = s^2 - var), which makes every identity
rational in (x1, x2, R, Q, D, s) and decided by ``cancel`` in well under a second.
"""

from __future__ import annotations

import sympy as sp

from verify.proofs.aggregates import X1, X2, D, X, aggregate_step, sum_all, sum_rest

__all__: list[str] = []

EPS = sp.Symbol("epsilon", positive=True)
S = sp.Symbol("s", positive=True)  # (var + eps)^{1/2}
V1, V2 = sp.symbols("v1 v2", real=True)
_mean = sum_all(X) / D
_var = sum_all((X - _mean) ** 2) / D
_base = _var + EPS


def _radical_free(e: sp.Expr) -> sp.Expr:
    """(var + eps)^k -> s^{2k}, then eps -> s^2 - var."""
    e = e.replace(lambda p: p.is_Pow and p.base == _base, lambda p: S ** (2 * p.exp))
    return e.subs(EPS, S**2 - _var)


_j11, _j12, _j21 = (
    _radical_free(sp.diff(_base ** sp.Rational(-1, 2) * (xi - _mean), xj))
    for xi, xj in ((X1, X1), (X1, X2), (X2, X1))
)
_z = 1 / S
_g1, _g2, _gx = ((x - _mean) / S for x in (X1, X2, X))
_p11, _p12 = 1 - 1 / D, -1 / D


def _off(gk: sp.Expr) -> sp.Expr:
    """J_1k for k != 1 (the proved off-diagonal entry, at coordinate k)."""
    return _z * (_p12 - _g1 * gk / D)


aggregate_step(
    "lemma_3_1.ln_jacobian",
    "Lemma 3.1",
    "Step 2: layer norm, input and parameters (the Jacobian z (P - g g^T/D))",
    "docs/derivations.md#lemma-31",
    "for every D >= 2, eps > 0: J = z (P - g g^T/D), symmetric; J 1 = 0, J g = z eps/(var +"
    " eps) g, J v = z v for v orthogonal to 1 and g (eigenvalues 0, z eps/(var + eps), z)"
    " [symbolic D: entries (1,1), (1,2) on the aggregates of x_3..x_D, every (i, j) by"
    " symmetry; z = 1/s, eps = s^2 - var]",
    {
        "J_11 = z (P_11 - g_1^2/D)": (_j11, _z * (_p11 - _g1**2 / D)),
        "J_12 = z (P_12 - g_1 g_2/D)": (_j12, _off(_g2)),
        "J_12 = J_21": (_j12, _j21),
        "(J 1)_1 = 0": (_j11 + _j12 + sum_rest(_off(_gx)), sp.S.Zero),
        "(J g)_1 = z eps/(var + eps) g_1": (
            _j11 * _g1 + _j12 * _g2 + sum_rest(_off(_gx) * _gx),
            _z * (S**2 - _var) / S**2 * _g1,
        ),
        # v orthogonal to 1 and g: sum_{k>=3} v_k = -v1 - v2, sum_{k>=3} g_k v_k = -g1 v1 - g2 v2
        "(J v)_1 = z v_1": (
            _j11 * V1 + _j12 * V2 + _z * _p12 * (-V1 - V2) - _z * _g1 / D * (-_g1 * V1 - _g2 * V2),
            _z * V1,
        ),
    },
    ("J = z P (the g g^T/D term dropped)", _j12, _z * _p12),
    extra={S: (1, 4), V1: (-3, 3), V2: (-3, 3)},
    domain=S**2 > _var,  # eps = s^2 - var > 0
)
