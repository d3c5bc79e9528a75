"""The named axioms of linear algebra and analysis (norms, projections, variances, the mean
value theorem) and the model's positionwise embedding, each with its attack
(:mod:`verify.proofs.axioms`)."""

from __future__ import annotations

import numpy as np

from verify.proofs.axiom_draws import _scale, _vectors, violation
from verify.proofs.core import axiom


def _cauchy_schwarz(rng: np.random.Generator, n: int) -> np.ndarray:
    d = int(rng.integers(1, 9))
    x, y = _vectors(rng, n, d), _vectors(rng, n, d)
    y[: n // 4] = x[: n // 4] * rng.uniform(-3, 3, (n // 4, 1))  # equality: y parallel to x
    p = rng.dirichlet(np.ones(d), n)  # l2(p) for a probability vector p
    v1 = violation(np.abs((x * y).sum(1)), np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))
    v2 = violation(
        np.abs((p * x * y).sum(1)),
        np.sqrt((p * x * x).sum(1)) * np.sqrt((p * y * y).sum(1)),
    )
    return np.maximum(v1, v2)


axiom(
    "axiom.cauchy_schwarz",
    "Cauchy-Schwarz",
    "|<x, y>| <= ||x|| ||y|| in every inner-product space (R^D, l2(p) for a probability vector"
    " p, the sum over parameter groups).",
    "Horn & Johnson, Matrix Analysis (2nd ed.), Thm 5.1.4",
    _cauchy_schwarz,
)


def _triangle(rng: np.random.Generator, n: int) -> np.ndarray:
    d = int(rng.integers(1, 9))
    x, y = _vectors(rng, n, d), _vectors(rng, n, d)
    v1 = violation(
        np.linalg.norm(x + y, axis=1), np.linalg.norm(x, axis=1) + np.linalg.norm(y, axis=1)
    )
    h, g = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    c = rng.standard_normal((n, h, g)) * _scale(rng, n)[:, None, None]
    dg = np.abs(rng.standard_normal((n, g))) * _scale(rng, n)[:, None]  # d_g >= 0
    dg[rng.random((n, g)) < 0.2] = 0.0
    lhs = np.linalg.norm(np.einsum("nhg,ng->nh", c, dg), axis=1)
    rhs = (dg * np.linalg.norm(c, axis=1)).sum(1)
    return np.maximum(v1, violation(lhs, rhs))


axiom(
    "axiom.triangle",
    "Triangle and Minkowski inequalities",
    "||x + y|| <= ||x|| + ||y||; for vectors of per-head changes and weights d_g >= 0,"
    " ||(sum_g c_hg d_g)_h||_2 <= sum_g d_g ||(c_hg)_h||_2.",
    "Horn & Johnson, Matrix Analysis, Sec 5.1 (norm axioms); Hardy, Littlewood & Polya,"
    " Inequalities, Thm 25",
    _triangle,
)


def _submultiplicative(rng: np.random.Generator, n: int) -> np.ndarray:
    m, k = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    a = rng.standard_normal((n, m, k)) * _scale(rng, n)[:, None, None]
    x = _vectors(rng, n, k)
    spec = np.linalg.svd(a, compute_uv=False)[:, 0]
    top = np.linalg.svd(a)[2][:, 0, :]  # equality: x along the top right singular vector
    x[: n // 4] = top[: n // 4] * _scale(rng, n // 4)[:, None]
    v1 = violation(
        np.linalg.norm(np.einsum("nmk,nk->nm", a, x), axis=1), spec * np.linalg.norm(x, axis=1)
    )
    v2 = violation(spec, np.linalg.norm(a, axis=(1, 2)))
    return np.maximum(v1, v2)


axiom(
    "axiom.submultiplicative",
    "Operator norm",
    "||A x||_2 <= ||A||_2 ||x||_2 and ||A||_2 <= ||A||_F (spectral and Frobenius norms).",
    "Horn & Johnson, Matrix Analysis, Sec 5.6",
    _submultiplicative,
)


def _hoelder(rng: np.random.Generator, n: int) -> np.ndarray:
    d = int(rng.integers(1, 9))
    g, w = _vectors(rng, n, d), _vectors(rng, n, d)
    g[: n // 4] = np.abs(g[: n // 4, :1])  # equality: a constant gain
    return violation(np.linalg.norm(g * w, axis=1), np.abs(g).max(1) * np.linalg.norm(w, axis=1))


axiom(
    "axiom.hoelder_gain",
    "Hoelder for elementwise products",
    "||gamma (.) w||_2 <= ||gamma||_inf ||w||_2.",
    "Hardy, Littlewood & Polya, Inequalities, Thm 13",
    _hoelder,
)


def _projection(rng: np.random.Generator, n: int) -> np.ndarray:
    d = int(rng.integers(1, 9))
    k = int(rng.integers(0, d + 1))
    q = np.linalg.qr(rng.standard_normal((n, d, d)))[0][:, :, :k]
    w = _vectors(rng, n, d)
    pw = np.einsum("nij,nkj,nk->ni", q, q, w)  # P = Q Q^T, orthogonal
    centred = w - w.mean(1, keepdims=True)  # the centring projector
    v1 = violation(np.linalg.norm(pw, axis=1), np.linalg.norm(w, axis=1))
    v2 = violation(np.linalg.norm(centred, axis=1), np.linalg.norm(w, axis=1))
    return np.maximum(v1, v2)


axiom(
    "axiom.projection_contraction",
    "Orthogonal projections contract",
    "||P w|| <= ||w|| for an orthogonal projection P (P = P^T = P^2: the centring projector;"
    " dropping coordinates).",
    "Horn & Johnson, Matrix Analysis, Sec 2.5",
    _projection,
)


def _popoviciu(rng: np.random.Generator, n: int) -> np.ndarray:
    k = int(rng.integers(1, 7))
    lo = rng.standard_normal(n) * _scale(rng, n)
    hi = lo + _scale(rng, n)
    vals = lo[:, None] + (hi - lo)[:, None] * rng.random((n, k))
    p = rng.dirichlet(np.ones(k), n)
    vals[: n // 4, 0], vals[: n // 4, -1] = lo[: n // 4], hi[: n // 4]  # endpoints in play
    mean = (p * vals).sum(1)
    var = (p * (vals - mean[:, None]) ** 2).sum(1)
    return violation(var, (hi - lo) ** 2 / 4)


axiom(
    "axiom.popoviciu",
    "Popoviciu's inequality on variances",
    "A random variable with values in [m, M] has variance at most (M - m)^2 / 4.",
    "T. Popoviciu, Mathematica (Cluj) 9 (1935) 129-145",
    _popoviciu,
)


def _mean_value(rng: np.random.Generator, n: int) -> np.ndarray:
    """Vector polynomials f of degree <= 5 on a segment: f(1) - f(0) = int_0^1 f' (exact for
    polynomials), ||f(1) - f(0)|| <= max over the Gauss nodes of ||f'|| (<= sup ||f'||); and
    f' = q^2 + c >= 0 on [a, b] gives f(b) >= f(a)."""
    from numpy.polynomial import polynomial as P

    nodes, weights = np.polynomial.legendre.leggauss(4)
    t, wt = (nodes + 1) / 2, weights / 2
    out = np.empty(n)
    m = int(rng.integers(1, 4))
    for i in range(n):
        coef = rng.standard_normal((m, 6)) * _scale(rng, 1)[0]
        der = [P.polyder(c) for c in coef]
        jump = np.array([P.polyval(1.0, c) - P.polyval(0.0, c) for c in coef])
        quad = np.array([(wt * P.polyval(t, d)).sum() for d in der])  # int_0^1 f'
        sup = max(np.linalg.norm([P.polyval(tj, d) for d in der]) for tj in t)
        q = rng.standard_normal(3)
        mono = P.polyint(P.polyadd(P.polymul(q, q), [abs(rng.standard_normal())]))
        a, b = np.sort(rng.uniform(-3, 3, 2))
        out[i] = max(
            violation(np.linalg.norm(jump - quad), 0.0, equality=True),
            violation(np.linalg.norm(jump), sup),
            violation(P.polyval(a, mono), P.polyval(b, mono)),
        )
    return out


axiom(
    "axiom.mean_value",
    "Mean value theorem / fundamental theorem of calculus",
    "For f continuously differentiable on an open set containing the segment from x to x'"
    " (f(t) := f(x + t (x' - x)), t in [0, 1]): f(1) - f(0) = int_0^1 f'(t) dt, so"
    " ||f(1) - f(0)|| <= sup_{t in [0, 1]} ||f'(t)||; a function differentiable on an interval"
    " with f' >= 0 there is nondecreasing there (f' <= 0: nonincreasing).",
    "Rudin, Principles of Mathematical Analysis, Thm 5.10, 5.11 and 6.21",
    _mean_value,
)


def _positionwise(rng: np.random.Generator, n: int) -> np.ndarray:
    """The model's own embedding (verify.model.plain.forward_numpy.embed): two strings that agree at
    bit j give position j the same embedding."""
    from verify.model import ModelConfig, init_params
    from verify.model.plain.forward_numpy import embed

    out = np.empty(n)
    for i in range(n):
        big = int(rng.integers(2, 9))
        cfg = ModelConfig(
            d_model=4,
            n_layers=1,
            n_heads=1,
            d_ff=4,
            ln_eps=1e-5,
            norm_first=False,
            ln_affine=False,
            eos=bool(rng.integers(2)),
            pos_encoding=str(rng.choice(["learned", "sinusoidal", "none"])),
            embedding=str(rng.choice(["add", "concat"])),
            max_len=8,
        )
        arrays = dict(init_params(cfg, "gaussian", seed=int(rng.integers(2**31))))
        x = rng.integers(0, 2, (2, big)).astype(np.uint8)
        j = int(rng.integers(big))
        x[1, j] = x[0, j]
        y = embed(cfg, arrays, x)
        out[i] = violation(np.abs(y[0, j] - y[1, j]).max(), 0.0, equality=True)
    return out


axiom(
    "axiom.positionwise_embedding",
    "Positionwise embedding (the model's definition)",
    "y^0_j = E[x_j] + P[j] (or the concatenation): position j's embedding depends on bit j only.",
    "docs/model-spec.md (the model contract)",
    _positionwise,
)
