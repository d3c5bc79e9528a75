"""The named axioms of probability, measure and counting (union and Markov bounds, total
probability, densities and volumes, dominance, Borel-Cantelli, Anderson, packing) and the
elementary facts on integrals and logarithms their steps use, each with its attack
(:mod:`verify.proofs.axioms`)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from verify.proofs.axiom_draws import _events, _scale, _vectors, violation, worst_of
from verify.proofs.axiom_schemas import schema
from verify.proofs.core import axiom

_cat = np.concatenate
_R = {"real": True}


def _union_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    k = int(rng.integers(1, 7))
    p, ev = _events(rng, n, int(rng.integers(1, 12)), k)
    return {"pu": (p * ev.any(1)).sum(1), "s": (p[:, None, :] * ev).sum((1, 2))}


def _union(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _union_scalars(rng, n)
    return violation(s["pu"], s["s"])


_pu, _s = sp.symbols("pu s", **_R)


axiom(
    "axiom.union_bound",
    "Union bound",
    "P[A_1 or ... or A_m] <= P[A_1] + ... + P[A_m] for events A_i of one probability space.",
    "Any probability text, e.g. Durrett, Probability: Theory and Examples, Sec 1.1",
    _union,
    schema=schema(
        {"pu": "P[A_1 or ... or A_m]", "s": "P[A_1] + ... + P[A_m]"},
        [],
        _pu <= _s,
        _union_scalars,
    ),
)


def _markov_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    k = int(rng.integers(1, 8))
    x = np.abs(_vectors(rng, n, k))  # X >= 0
    x[rng.random((n, k)) < 0.2] = 0.0
    p = rng.dirichlet(np.ones(k), n)
    a = np.where(rng.random(n) < 0.5, x[:, 0], _scale(rng, n))  # a at an atom: equality cases
    a = np.where(a > 0, a, 1.0)  # a > 0
    return {"pr": (p * (x >= a[:, None])).sum(1), "ex": (p * x).sum(1), "a": a}


def _markov(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _markov_scalars(rng, n)
    return violation(s["pr"], s["ex"] / s["a"])


_pr, _ex, _a = sp.symbols("pr ex a", **_R)


axiom(
    "axiom.markov",
    "Markov's inequality",
    "P[X >= a] <= E[X] / a for X >= 0 and a > 0.",
    "Durrett, Probability: Theory and Examples, Thm 1.6.4",
    _markov,
    schema=schema(
        {"pr": "P[X >= a]", "ex": "E[X] (X >= 0)", "a": "the threshold"},
        [_a > 0, _ex >= 0],
        _a * _pr <= _ex,
        _markov_scalars,
    ),
)


def _tp_draws(rng: np.random.Generator, n: int):
    atoms, cells = int(rng.integers(2, 12)), int(rng.integers(1, 5))
    p = rng.dirichlet(np.ones(atoms), n)
    cell = rng.integers(0, cells, (n, atoms))
    a = rng.random((n, atoms)) < 0.5
    return atoms, cells, p, cell, a


def _tp_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """The attack's draws on the two-cell partition {C, not C}, C = atom 0's cell: P[A],
    w_1 = P[C], q_1 = P[A | C], w_2 = P[not C], q_2 = P[A | not C] (0 when P[not C] = 0)."""
    _, _, p, cell, a = _tp_draws(rng, n)
    inside = cell == cell[:, :1]
    w1 = (p * inside).sum(1)
    w2 = (p * ~inside).sum(1)
    q1 = (p * a * inside).sum(1) / w1
    q2 = np.divide((p * a * ~inside).sum(1), w2, out=np.zeros(n), where=w2 > 0)
    return {"pa": (p * a).sum(1), "w1": w1, "q1": q1, "w2": w2, "q2": q2}


def _total_probability(rng: np.random.Generator, n: int) -> np.ndarray:
    atoms, cells, p, cell, a = _tp_draws(rng, n)
    out = np.empty(n)
    for i in range(n):
        total = 0.0
        for c in range(cells):
            pc = p[i][cell[i] == c].sum()
            if pc > 0:  # cells of probability 0 are dropped
                total += pc * (p[i] * a[i] * (cell[i] == c)).sum() / pc
        # a uniform law on the atoms restricted to a cell of positive mass is uniform on it
        u = np.full(atoms, 1.0 / atoms)
        c0 = cell[i] == cell[i][0]
        cond = u * c0 / (u * c0).sum()
        unif = np.abs(cond[c0] - 1.0 / c0.sum()).max()
        out[i] = max(
            violation((p[i] * a[i]).sum(), total, equality=True),
            violation(unif, 0.0, equality=True),
        )
    return out


axiom(
    "axiom.total_probability",
    "Total probability over a partition",
    "For a finite or countable partition of the space into measurable cells C_i, those with"
    " P[C_i] > 0 (cells of probability 0 are dropped): P[A] = sum_i P[C_i] P[A | C_i]; the"
    " uniform law on a set of finite positive volume, conditioned on a measurable cell of"
    " positive volume, is the uniform law on that cell.",
    "Durrett, Probability: Theory and Examples, Sec 4.1",
    _total_probability,
    schema=schema(
        {
            "pa": "P[A]",
            "w1": "P[C_1]",
            "q1": "P[A | C_1]",
            "w2": "P[C_2]",
            "q2": "P[A | C_2] (any value when P[C_2] = 0)",
        },
        [sp.Symbol("w1", **_R) >= 0, sp.Symbol("w2", **_R) >= 0],
        sp.Eq(
            sp.Symbol("pa", **_R),
            sp.Symbol("w1", **_R) * sp.Symbol("q1", **_R)
            + sp.Symbol("w2", **_R) * sp.Symbol("q2", **_R),
        ),
        _tp_scalars,
    ),
)


def _fubini_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """b uniform on [0, a]^2, P b onto 1^perp with coordinate s = (b_1 - b_2)/sqrt(2): the
    density int_line f = (chord length through s) / a^2, integrated to s0 (``lint``), equals
    the law of s (``dens``, integrated to s0: the difference of two uniforms, triangular)."""
    a = _scale(rng, n)
    s0 = rng.uniform(-1, 1, n) * a / math.sqrt(2)
    r = a / math.sqrt(2)
    # chord(s) = sqrt(2) (a - sqrt(2)|s|) = 2 (r - |s|); its integral from -r to s0 over a^2
    integral = np.where(s0 <= 0, (r + s0) ** 2, 2 * r**2 - (r - s0) ** 2) / a**2
    u0 = s0 * math.sqrt(2)  # P[b_1 - b_2 <= u0]
    law = np.where(u0 <= 0, (a + u0) ** 2 / (2 * a**2), 1 - (a - u0) ** 2 / (2 * a**2))
    return {"dens": law, "lint": integral}


def _fubini(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _fubini_scalars(rng, n)
    return violation(s["lint"], s["dens"], equality=True)


axiom(
    "axiom.fubini_density",
    "Density of a projection (Fubini)",
    "If b has density f on R^D, the projection Pb onto a hyperplane has density"
    " int_line f, the integral of f along the line through the point orthogonal to it.",
    "Folland, Real Analysis, Thm 2.37",
    _fubini,
    schema=schema(
        {
            "dens": "the density of Pb at a point (compared through its integral up to s0)",
            "lint": "int_line f, the integral of b's density along the line through it",
        },
        [],
        sp.Eq(sp.Symbol("dens", **_R), sp.Symbol("lint", **_R)),
        _fubini_scalars,
    ),
)


def _ball_volume_parts(rng: np.random.Generator, n: int):
    """V_k from Cavalieri's slices, V_k = V_{k-1} int_{-1}^{1} (1 - t^2)^{(k-1)/2} dt
    = V_{k-1} B(1/2, (k+1)/2); the ellipsoid by the linear map u = L^{-T} v (G = L L^T)."""
    from scipy.special import beta, gammaln

    k = rng.integers(1, 80, n)
    r = _scale(rng, n)
    log_vk = 0.5 * k * np.log(np.pi) - gammaln(k / 2 + 1)
    log_vk1 = 0.5 * (k - 1) * np.log(np.pi) - gammaln((k - 1) / 2 + 1)
    v1 = violation(log_vk, log_vk1 + np.log(beta(0.5, (k + 1) / 2)), equality=True)
    # the ellipsoid {u^T G u <= c} in R^2: the image of the disc of radius sqrt(c)
    g = rng.standard_normal((n, 2, 2))
    gm = np.einsum("nij,nkj->nik", g, g) + 1e-3 * np.eye(2)
    c = _scale(rng, n)
    lchol = np.linalg.cholesky(gm)
    vol = np.pi * c / np.abs(np.linalg.det(lchol))  # |det L^{-T}| times the disc's area
    formula = np.pi * c / np.sqrt(np.linalg.det(gm))
    # k = 1, 2, 3: the length 2r, the area pi r^2, the volume 4/3 pi r^3
    known = np.stack([2 * r, np.pi * r**2, 4 / 3 * np.pi * r**3], axis=1)
    kk = np.arange(1, 4)
    formula_k = np.exp(0.5 * kk * np.log(np.pi) - gammaln(kk / 2 + 1)) * r[:, None] ** kk
    v3 = violation(formula_k, known, equality=True).max(1)
    scalars = {"vol": known.T.ravel(), "r": np.tile(r, 3), "k": np.repeat(kk, n)}
    return np.maximum.reduce([v1, violation(vol, formula, equality=True), v3]), scalars


def _ball_volume(rng: np.random.Generator, n: int) -> np.ndarray:
    return _ball_volume_parts(rng, n)[0]


def _ball_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """The attack's radii r at k = 1, 2, 3 with the known volumes 2r, pi r^2, 4/3 pi r^3."""
    return _ball_volume_parts(rng, n)[1]


_vol, _r, _k = sp.symbols("vol r k", **_R)


axiom(
    "axiom.ball_volume",
    "Volume of a ball and of an ellipsoid",
    "vol{u in R^k : |u| <= r} = V_k r^k with V_k = pi^{k/2} / Gamma(k/2 + 1);"
    " vol{u : u^T G u <= c} = V_k c^{k/2} / sqrt(det G) for G positive definite, c > 0.",
    "Folland, Real Analysis, Prop 2.54 and Thm 2.44 (linear change of variables)",
    _ball_volume,
    schema=schema(
        {"vol": "vol{u in R^k : |u| <= r}", "r": "the radius", "k": "the dimension"},
        [_r >= 0, _k >= 1],
        sp.Eq(_vol, sp.pi ** (_k / 2) / sp.gamma(_k / 2 + 1) * _r**_k),
        _ball_scalars,
    ),
)


def _dominance_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Exact on finite supports, K = 2: X_1 and X_2 | X_1 with tails dominated by Y's;
    P[X_1 + X_2 > s] <= P[Y_1 + Y_2 > s] for every s. And the Erlang tail: a sum of K
    independent Exp(lam) has P[> y] = e^{-lam y} sum_{j<K} (lam y)^j / j!."""
    from scipy.stats import gamma as gamma_law

    out = {k: np.empty(n) for k in ("tx", "ty", "law", "erlang")}
    m = int(rng.integers(2, 7))
    for i in range(n):
        q = rng.dirichlet(np.ones(m))
        sy = 1 - np.cumsum(q)  # P[Y > s], s = 0..m-1

        def dominated(sy: np.ndarray = sy) -> np.ndarray:
            own = 1 - np.cumsum(rng.dirichlet(np.ones(m)))
            s = np.minimum(sy, own)  # a survival function below Y's
            return -np.diff(np.concatenate([[1.0], s]))  # its pmf on 0..m-1

        p1 = dominated()
        joint_x = np.zeros(2 * m - 1)
        for v in range(m):
            joint_x[v : v + m] += p1[v] * dominated()  # X_2 | X_1 = v
        joint_y = np.convolve(q, q)
        tail_x = 1 - np.cumsum(joint_x)
        tail_y = 1 - np.cumsum(joint_y)
        kk, lam, y = int(rng.integers(1, 9)), _scale(rng, 1)[0], rng.uniform(0, 20)
        erlang = math.exp(-lam * y) * sum((lam * y) ** j / math.factorial(j) for j in range(kk))
        j = int(np.argmax(violation(tail_x, tail_y)))  # the s nearest a violation
        out["tx"][i], out["ty"][i] = tail_x[j], tail_y[j]
        out["law"][i], out["erlang"][i] = gamma_law.sf(y, kk, scale=1 / lam), erlang
    return out


def _dominance(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _dominance_scalars(rng, n)
    return np.maximum(violation(s["tx"], s["ty"]), violation(s["law"], s["erlang"], equality=True))


_tx, _ty = sp.symbols("tx ty", **_R)


axiom(
    "axiom.stochastic_dominance",
    "Dominated adapted sums",
    "If X_k >= 0 is adapted and P[X_k > s | F_{k-1}] <= P[Y > s] for every s, then"
    " sum_k X_k is stochastically dominated by a sum of independent copies of Y; a sum of K"
    " independent Exp(lambda) is Gamma(K, lambda).",
    "Shaked & Shanthikumar, Stochastic Orders, Thm 6.B.3; Durrett, Sec 2.1",
    _dominance,
    schema=schema(
        {"tx": "P[sum_k X_k > s]", "ty": "P[sum of independent copies of Y > s]"},
        [],
        _tx <= _ty,
        _dominance_scalars,
    ),
)


def _borel_cantelli(rng: np.random.Generator, n: int) -> np.ndarray:
    """The finite form the lemma rests on: P[some E_N, N >= n0] <= sum_{N >= n0} P[E_N]."""
    k = int(rng.integers(2, 9))
    p, ev = _events(rng, n, int(rng.integers(1, 12)), k)
    n0 = int(rng.integers(k))
    return violation((p * ev[:, n0:].any(1)).sum(1), (p[:, None, :] * ev[:, n0:]).sum((1, 2)))


axiom(
    "axiom.borel_cantelli",
    "Borel-Cantelli",
    "If sum_N P[E_N] < inf then almost surely only finitely many E_N occur"
    " (P[E_N i.o.] <= inf_n sum_{N >= n} P[E_N] = 0).",
    "Durrett, Probability: Theory and Examples, Thm 2.3.1",
    _borel_cantelli,
    no_schema="its conclusion (almost surely only finitely many E_N occur) is about a limit of"
    " events, not an inequality between scalars; the finite form its attack draws is"
    " axiom.union_bound's schema",
)


def _anderson_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    from scipy.stats import chi2, ncx2, norm

    k = int(rng.integers(1, 9))
    sig = _scale(rng, n)[:, None] * rng.uniform(0.1, 1, (n, k))
    v = rng.standard_normal((n, k)) * sig * rng.uniform(0, 3)
    c = _scale(rng, n)[:, None]
    box = (norm.cdf((c - v) / sig) - norm.cdf((-c - v) / sig)).prod(1)
    box0 = (norm.cdf(c / sig) - norm.cdf(-c / sig)).prod(1)
    x = _scale(rng, n)
    lam = _scale(rng, n)
    return {"pv": _cat([box, ncx2.cdf(x, k, lam)]), "p0": _cat([box0, chi2.cdf(x, k)])}


def _anderson(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _anderson_scalars(rng, n)
    return worst_of(violation(s["pv"], s["p0"]), n)


_pv, _p0 = sp.symbols("pv p0", **_R)


axiom(
    "axiom.anderson",
    "Anderson's inequality (noncentral chi-square)",
    "For a centred Gaussian vector and a symmetric convex set C, P[X + v in C] <= P[X in C];"
    " a noncentral chi-square is stochastically larger than the central one.",
    "T. W. Anderson, Proc. AMS 6 (1955) 170-176",
    _anderson,
    schema=schema(
        {"pv": "P[X + v in C] (or the noncentral chi^2 cdf)", "p0": "P[X in C] (the central)"},
        [],
        _pv <= _p0,
        _anderson_scalars,
    ),
)


def _range_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    p, ev = _events(rng, n, int(rng.integers(1, 12)), 2)
    a, b = ev[:, 0], ev[:, 0] | ev[:, 1]  # A subset of B
    return {"pa": (p * a).sum(1), "pb": (p * b).sum(1)}


def _probability_range(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _range_scalars(rng, n)
    pa, pb = s["pa"], s["pb"]
    return np.maximum.reduce(
        [violation(-pa, 0.0), violation(pa, 1.0), violation(pa, pb), violation(pb, 1.0)]
    )


_pa, _pb = sp.symbols("pa pb", **_R)


axiom(
    "axiom.probability_range",
    "Probabilities lie in [0, 1]; monotonicity",
    "0 <= P[A] <= 1 for every event A, and A subset of B implies P[A] <= P[B].",
    "Kolmogorov's axioms; Durrett, Probability: Theory and Examples, Sec 1.1",
    _probability_range,
    schema=schema(
        {"pa": "P[A]", "pb": "P[B] (A a subset of B)"},
        [],
        sp.And(_pa >= 0, _pa <= _pb, _pb <= 1),
        _range_scalars,
    ),
)
