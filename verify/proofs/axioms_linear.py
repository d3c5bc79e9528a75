"""The named axioms of linear algebra and analysis (norms, projections, variances, the mean
value theorem) and the model's positionwise embedding, each with its attack
(:mod:`verify.proofs.axioms`)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from verify.proofs.axiom_draws import _scale, _vectors, violation, worst_of
from verify.proofs.axiom_schemas import schema
from verify.proofs.core import axiom

_cat = np.concatenate


def _cs_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """<x, y>, ||x||, ||y|| in R^D, then in l2(p) (two blocks of n)."""
    d = int(rng.integers(1, 9))
    x, y = _vectors(rng, n, d), _vectors(rng, n, d)
    y[: n // 4] = x[: n // 4] * rng.uniform(-3, 3, (n // 4, 1))  # equality: y parallel to x
    p = rng.dirichlet(np.ones(d), n)  # l2(p) for a probability vector p
    return {
        "dot": _cat([(x * y).sum(1), (p * x * y).sum(1)]),
        "nx": _cat([np.linalg.norm(x, axis=1), np.sqrt((p * x * x).sum(1))]),
        "ny": _cat([np.linalg.norm(y, axis=1), np.sqrt((p * y * y).sum(1))]),
    }


def _cauchy_schwarz(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _cs_scalars(rng, n)
    return worst_of(violation(np.abs(s["dot"]), s["nx"] * s["ny"]), n)


_dot, _nx, _ny = sp.symbols("dot nx ny", real=True)


axiom(
    "axiom.cauchy_schwarz",
    "Cauchy-Schwarz",
    "|<x, y>| <= ||x|| ||y|| in every inner-product space (R^D, l2(p) for a probability vector"
    " p, the sum over parameter groups).",
    "Horn & Johnson, Matrix Analysis (2nd ed.), Thm 5.1.4",
    _cauchy_schwarz,
    schema=schema(
        {"dot": "<x, y>", "nx": "||x||", "ny": "||y||"},
        [_nx >= 0, _ny >= 0],
        sp.Abs(_dot) <= _nx * _ny,
        _cs_scalars,
    ),
)


def _triangle_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """||x + y|| <= 1 ||x|| + 1 ||y||, then Minkowski's ||sum_g d_g c_g|| <= d_1 ||c_1|| +
    1 (sum_{g >= 2} d_g ||c_g||) (two blocks of n)."""
    d = int(rng.integers(1, 9))
    x, y = _vectors(rng, n, d), _vectors(rng, n, d)
    h, g = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    c = rng.standard_normal((n, h, g)) * _scale(rng, n)[:, None, None]
    dg = np.abs(rng.standard_normal((n, g))) * _scale(rng, n)[:, None]  # d_g >= 0
    dg[rng.random((n, g)) < 0.2] = 0.0
    cn, one = np.linalg.norm(c, axis=1), np.ones(n)
    return {
        "n": _cat(
            [np.linalg.norm(x + y, axis=1), np.linalg.norm(np.einsum("nhg,ng->nh", c, dg), axis=1)]
        ),
        "d1": _cat([one, dg[:, 0]]),
        "n1": _cat([np.linalg.norm(x, axis=1), cn[:, 0]]),
        "d2": _cat([one, one]),
        "n2": _cat([np.linalg.norm(y, axis=1), (dg[:, 1:] * cn[:, 1:]).sum(1)]),
    }


def _triangle(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _triangle_scalars(rng, n)
    return worst_of(violation(s["n"], s["d1"] * s["n1"] + s["d2"] * s["n2"]), n)


_n, _n1, _n2, _d1, _d2 = sp.symbols("n n1 n2 d1 d2", real=True)


axiom(
    "axiom.triangle",
    "Triangle and Minkowski inequalities",
    "||x + y|| <= ||x|| + ||y||; for vectors of per-head changes and weights d_g >= 0,"
    " ||(sum_g c_hg d_g)_h||_2 <= sum_g d_g ||(c_hg)_h||_2.",
    "Horn & Johnson, Matrix Analysis, Sec 5.1 (norm axioms); Hardy, Littlewood & Polya,"
    " Inequalities, Thm 25",
    _triangle,
    schema=schema(
        {
            "n": "||d1 u + d2 v|| (u, v vectors or sums of weighted vectors)",
            "n1": "||u||",
            "n2": "||v||",
            "d1": "a weight >= 0 (1 for the triangle inequality)",
            "d2": "a weight >= 0",
        },
        [_n1 >= 0, _n2 >= 0, _d1 >= 0, _d2 >= 0],
        _n <= _d1 * _n1 + _d2 * _n2,
        _triangle_scalars,
    ),
)


def _submultiplicative_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """||A x|| <= ||A||_2 ||x||, then ||A||_2 <= ||A||_F * 1 (two blocks of n)."""
    m, k = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    a = rng.standard_normal((n, m, k)) * _scale(rng, n)[:, None, None]
    x = _vectors(rng, n, k)
    spec = np.linalg.svd(a, compute_uv=False)[:, 0]
    top = np.linalg.svd(a)[2][:, 0, :]  # equality: x along the top right singular vector
    x[: n // 4] = top[: n // 4] * _scale(rng, n // 4)[:, None]
    return {
        "nax": _cat([np.linalg.norm(np.einsum("nmk,nk->nm", a, x), axis=1), spec]),
        "a": _cat([spec, np.linalg.norm(a, axis=(1, 2))]),
        "nx": _cat([np.linalg.norm(x, axis=1), np.ones(n)]),
    }


def _submultiplicative(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _submultiplicative_scalars(rng, n)
    return worst_of(violation(s["nax"], s["a"] * s["nx"]), n)


_nax, _a = sp.symbols("nax a", real=True)


axiom(
    "axiom.submultiplicative",
    "Operator norm",
    "||A x||_2 <= ||A||_2 ||x||_2 and ||A||_2 <= ||A||_F (spectral and Frobenius norms).",
    "Horn & Johnson, Matrix Analysis, Sec 5.6",
    _submultiplicative,
    schema=schema(
        {"nax": "||A x||_2 (or ||A||_2)", "a": "||A||_2 (or ||A||_F)", "nx": "||x||_2 (or 1)"},
        [_a >= 0, _nx >= 0],
        _nax <= _a * _nx,
        _submultiplicative_scalars,
    ),
)


def _hoelder_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    d = int(rng.integers(1, 9))
    g, w = _vectors(rng, n, d), _vectors(rng, n, d)
    g[: n // 4] = np.abs(g[: n // 4, :1])  # equality: a constant gain
    return {
        "ngw": np.linalg.norm(g * w, axis=1),
        "ginf": np.abs(g).max(1),
        "nw": np.linalg.norm(w, axis=1),
    }


def _hoelder(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _hoelder_scalars(rng, n)
    return violation(s["ngw"], s["ginf"] * s["nw"])


_ngw, _ginf, _nw = sp.symbols("ngw ginf nw", real=True)


axiom(
    "axiom.hoelder_gain",
    "Hoelder for elementwise products",
    "||gamma (.) w||_2 <= ||gamma||_inf ||w||_2.",
    "Hardy, Littlewood & Polya, Inequalities, Thm 13",
    _hoelder,
    schema=schema(
        {"ngw": "||gamma (.) w||_2", "ginf": "||gamma||_inf", "nw": "||w||_2"},
        [_ginf >= 0, _nw >= 0],
        _ngw <= _ginf * _nw,
        _hoelder_scalars,
    ),
)


def _projection_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """||P w|| <= ||w|| for P = Q Q^T, then for the centring projector (two blocks of n)."""
    d = int(rng.integers(1, 9))
    k = int(rng.integers(0, d + 1))
    q = np.linalg.qr(rng.standard_normal((n, d, d)))[0][:, :, :k]
    w = _vectors(rng, n, d)
    pw = np.einsum("nij,nkj,nk->ni", q, q, w)  # P = Q Q^T, orthogonal
    centred = w - w.mean(1, keepdims=True)  # the centring projector
    nw = np.linalg.norm(w, axis=1)
    return {
        "npw": _cat([np.linalg.norm(pw, axis=1), np.linalg.norm(centred, axis=1)]),
        "nw": _cat([nw, nw]),
    }


def _projection(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _projection_scalars(rng, n)
    return worst_of(violation(s["npw"], s["nw"]), n)


_npw = sp.Symbol("npw", real=True)


axiom(
    "axiom.projection_contraction",
    "Orthogonal projections contract",
    "||P w|| <= ||w|| for an orthogonal projection P (P = P^T = P^2: the centring projector;"
    " dropping coordinates).",
    "Horn & Johnson, Matrix Analysis, Sec 2.5",
    _projection,
    schema=schema(
        {"npw": "||P w|| (P an orthogonal projection)", "nw": "||w||"},
        [_nw >= 0],
        _npw <= _nw,
        _projection_scalars,
    ),
)


def _popoviciu_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    k = int(rng.integers(1, 7))
    lo = rng.standard_normal(n) * _scale(rng, n)
    hi = lo + _scale(rng, n)
    vals = lo[:, None] + (hi - lo)[:, None] * rng.random((n, k))
    p = rng.dirichlet(np.ones(k), n)
    vals[: n // 4, 0], vals[: n // 4, -1] = lo[: n // 4], hi[: n // 4]  # endpoints in play
    mean = (p * vals).sum(1)
    return {"var": (p * (vals - mean[:, None]) ** 2).sum(1), "m": lo, "M": hi}


def _popoviciu(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _popoviciu_scalars(rng, n)
    return violation(s["var"], (s["M"] - s["m"]) ** 2 / 4)


_var, _m, _M = sp.symbols("var m M", real=True)


axiom(
    "axiom.popoviciu",
    "Popoviciu's inequality on variances",
    "A random variable with values in [m, M] has variance at most (M - m)^2 / 4.",
    "T. Popoviciu, Mathematica (Cluj) 9 (1935) 129-145",
    _popoviciu,
    schema=schema(
        {"var": "the variance of X", "m": "a lower bound of X", "M": "an upper bound of X"},
        [_m <= _M, _var >= 0],
        4 * _var <= (_M - _m) ** 2,
        _popoviciu_scalars,
    ),
)


def _mean_value_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Vector polynomials f of degree <= 5 on a segment: ``gap`` = ||f(1) - f(0) - int_0^1 f'||
    (0: exact for polynomials), ``jump`` = ||f(1) - f(0)||, ``G`` h = max over the Gauss nodes
    of ||f'|| (<= sup ||f'||) for the segment [0, 1] read as one of length h (t = s/h);
    f' = q^2 + c >= 0 on [a, b] gives ``fa`` = f(a) <= ``fb`` = f(b)."""
    from numpy.polynomial import polynomial as P

    nodes, weights = np.polynomial.legendre.leggauss(4)
    t, wt = (nodes + 1) / 2, weights / 2
    out = {k: np.empty(n) for k in ("gap", "jump", "sup", "fa", "fb")}
    m = int(rng.integers(1, 4))
    for i in range(n):
        coef = rng.standard_normal((m, 6)) * _scale(rng, 1)[0]
        der = [P.polyder(c) for c in coef]
        jump = np.array([P.polyval(1.0, c) - P.polyval(0.0, c) for c in coef])
        quad = np.array([(wt * P.polyval(t, d)).sum() for d in der])  # int_0^1 f'
        out["gap"][i] = np.linalg.norm(jump - quad)
        out["jump"][i] = np.linalg.norm(jump)
        out["sup"][i] = max(np.linalg.norm([P.polyval(tj, d) for d in der]) for tj in t)
        q = rng.standard_normal(3)
        mono = P.polyint(P.polyadd(P.polymul(q, q), [abs(rng.standard_normal())]))
        a, b = np.sort(rng.uniform(-3, 3, 2))
        out["fa"][i], out["fb"][i] = P.polyval(a, mono), P.polyval(b, mono)
    out["h"] = 10 ** rng.uniform(-2, 2, n)
    out["G"] = out.pop("sup") / out["h"]
    return out


def _mean_value(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _mean_value_scalars(rng, n)
    return np.maximum.reduce(
        [
            violation(s["gap"], 0.0, equality=True),
            violation(s["jump"], s["G"] * s["h"]),
            violation(s["fa"], s["fb"]),
        ]
    )


_jump, _G, _h = sp.symbols("jump G h", real=True)


axiom(
    "axiom.mean_value",
    "Mean value theorem / fundamental theorem of calculus",
    "For f continuously differentiable on an open set containing the segment from x to x'"
    " (f(t) := f(x + t (x' - x)), t in [0, 1]): f(1) - f(0) = int_0^1 f'(t) dt, so"
    " ||f(1) - f(0)|| <= sup_{t in [0, 1]} ||f'(t)||; a function differentiable on an interval"
    " with f' >= 0 there is nondecreasing there (f' <= 0: nonincreasing).",
    "Rudin, Principles of Mathematical Analysis, Thm 5.10, 5.11 and 6.21",
    _mean_value,
    schema=schema(
        {
            "jump": "||f(x') - f(x)||",
            "G": "sup of ||f'|| along the segment (per unit length)",
            "h": "the segment's length (the monotone form f' >= 0 => f(a) <= f(b) is attacked,"
            " not in the schema)",
        },
        [_G >= 0, _h >= 0],
        _jump <= _G * _h,
        _mean_value_scalars,
    ),
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
    no_schema="an equality of embedding vectors that the model's code defines, not an inequality"
    " between scalars; cited only by the chain lemma_2_9.chain_c_infl, which runs that code",
)
