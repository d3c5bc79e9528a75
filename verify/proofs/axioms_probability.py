"""The named axioms of probability, measure and counting (union and Markov bounds, total
probability, densities and volumes, dominance, Borel-Cantelli, Anderson, packing) and the
elementary facts on integrals and logarithms their steps use, each with its attack
(:mod:`verify.proofs.axioms`)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from verify.proofs.axiom_draws import _events, _scale, _vectors, violation
from verify.proofs.core import axiom


def _union(rng: np.random.Generator, n: int) -> np.ndarray:
    k = int(rng.integers(1, 7))
    p, ev = _events(rng, n, int(rng.integers(1, 12)), k)
    return violation((p * ev.any(1)).sum(1), (p[:, None, :] * ev).sum((1, 2)))


axiom(
    "axiom.union_bound",
    "Union bound",
    "P[A_1 or ... or A_m] <= P[A_1] + ... + P[A_m] for events A_i of one probability space.",
    "Any probability text, e.g. Durrett, Probability: Theory and Examples, Sec 1.1",
    _union,
)


def _markov(rng: np.random.Generator, n: int) -> np.ndarray:
    k = int(rng.integers(1, 8))
    x = np.abs(_vectors(rng, n, k))  # X >= 0
    x[rng.random((n, k)) < 0.2] = 0.0
    p = rng.dirichlet(np.ones(k), n)
    a = np.where(rng.random(n) < 0.5, x[:, 0], _scale(rng, n))  # a at an atom: equality cases
    a = np.where(a > 0, a, 1.0)  # a > 0
    return violation((p * (x >= a[:, None])).sum(1), (p * x).sum(1) / a)


axiom(
    "axiom.markov",
    "Markov's inequality",
    "P[X >= a] <= E[X] / a for X >= 0 and a > 0.",
    "Durrett, Probability: Theory and Examples, Thm 1.6.4",
    _markov,
)


def _total_probability(rng: np.random.Generator, n: int) -> np.ndarray:
    atoms, cells = int(rng.integers(2, 12)), int(rng.integers(1, 5))
    p = rng.dirichlet(np.ones(atoms), n)
    cell = rng.integers(0, cells, (n, atoms))
    a = rng.random((n, atoms)) < 0.5
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
)


def _fubini(rng: np.random.Generator, n: int) -> np.ndarray:
    """b uniform on [0, a]^2, P b onto 1^perp with coordinate s = (b_1 - b_2)/sqrt(2): the
    density int_line f = (chord length through s) / a^2, integrated to s0, equals the law of
    s (the difference of two uniforms: triangular)."""
    a = _scale(rng, n)
    s0 = rng.uniform(-1, 1, n) * a / math.sqrt(2)
    r = a / math.sqrt(2)
    # chord(s) = sqrt(2) (a - sqrt(2)|s|) = 2 (r - |s|); its integral from -r to s0 over a^2
    integral = np.where(s0 <= 0, (r + s0) ** 2, 2 * r**2 - (r - s0) ** 2) / a**2
    u0 = s0 * math.sqrt(2)  # P[b_1 - b_2 <= u0]
    law = np.where(u0 <= 0, (a + u0) ** 2 / (2 * a**2), 1 - (a - u0) ** 2 / (2 * a**2))
    return violation(integral, law, equality=True)


axiom(
    "axiom.fubini_density",
    "Density of a projection (Fubini)",
    "If b has density f on R^D, the projection Pb onto a hyperplane has density"
    " int_line f, the integral of f along the line through the point orthogonal to it.",
    "Folland, Real Analysis, Thm 2.37",
    _fubini,
)


def _ball_volume(rng: np.random.Generator, n: int) -> np.ndarray:
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
    return np.maximum.reduce([v1, violation(vol, formula, equality=True), v3])


axiom(
    "axiom.ball_volume",
    "Volume of a ball and of an ellipsoid",
    "vol{u in R^k : |u| <= r} = V_k r^k with V_k = pi^{k/2} / Gamma(k/2 + 1);"
    " vol{u : u^T G u <= c} = V_k c^{k/2} / sqrt(det G) for G positive definite, c > 0.",
    "Folland, Real Analysis, Prop 2.54 and Thm 2.44 (linear change of variables)",
    _ball_volume,
)


def _dominance(rng: np.random.Generator, n: int) -> np.ndarray:
    """Exact on finite supports, K = 2: X_1 and X_2 | X_1 with tails dominated by Y's;
    P[X_1 + X_2 > s] <= P[Y_1 + Y_2 > s] for every s. And the Erlang tail: a sum of K
    independent Exp(lam) has P[> y] = e^{-lam y} sum_{j<K} (lam y)^j / j!."""
    from scipy.stats import gamma as gamma_law

    out = np.empty(n)
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
        law = gamma_law.sf(y, kk, scale=1 / lam)
        out[i] = max(
            float(violation(tail_x, tail_y).max()), float(violation(law, erlang, equality=True))
        )
    return out


axiom(
    "axiom.stochastic_dominance",
    "Dominated adapted sums",
    "If X_k >= 0 is adapted and P[X_k > s | F_{k-1}] <= P[Y > s] for every s, then"
    " sum_k X_k is stochastically dominated by a sum of independent copies of Y; a sum of K"
    " independent Exp(lambda) is Gamma(K, lambda).",
    "Shaked & Shanthikumar, Stochastic Orders, Thm 6.B.3; Durrett, Sec 2.1",
    _dominance,
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
)


def _anderson(rng: np.random.Generator, n: int) -> np.ndarray:
    from scipy.stats import chi2, ncx2, norm

    k = int(rng.integers(1, 9))
    sig = _scale(rng, n)[:, None] * rng.uniform(0.1, 1, (n, k))
    v = rng.standard_normal((n, k)) * sig * rng.uniform(0, 3)
    c = _scale(rng, n)[:, None]
    box = (norm.cdf((c - v) / sig) - norm.cdf((-c - v) / sig)).prod(1)
    box0 = (norm.cdf(c / sig) - norm.cdf(-c / sig)).prod(1)
    x = _scale(rng, n)
    lam = _scale(rng, n)
    return np.maximum(violation(box, box0), violation(ncx2.cdf(x, k, lam), chi2.cdf(x, k)))


axiom(
    "axiom.anderson",
    "Anderson's inequality (noncentral chi-square)",
    "For a centred Gaussian vector and a symmetric convex set C, P[X + v in C] <= P[X in C];"
    " a noncentral chi-square is stochastically larger than the central one.",
    "T. W. Anderson, Proc. AMS 6 (1955) 170-176",
    _anderson,
)


def _integral_monotone(rng: np.random.Generator, n: int) -> np.ndarray:
    from numpy.polynomial import polynomial as P

    out = np.empty(n)
    for i in range(n):
        f = rng.standard_normal(5) * _scale(rng, 1)[0]
        q = rng.standard_normal(3)
        g = P.polyadd(f, P.polymul(q, q))  # g - f = q^2 >= 0
        x = rng.uniform(0, 5)
        out[i] = violation(
            P.polyval(x, P.polyint(f)) - P.polyval(0, P.polyint(f)),
            P.polyval(x, P.polyint(g)) - P.polyval(0, P.polyint(g)),
        )
    return out


axiom(
    "axiom.integral_monotone",
    "Monotonicity of the integral",
    "f <= g pointwise on [0, x] (f, g integrable there, x >= 0) implies int_0^x f <= int_0^x g.",
    "Rudin, Principles of Mathematical Analysis, Thm 6.12",
    _integral_monotone,
)


def _packing(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.empty(n)
    for i in range(n):
        d = int(rng.integers(1, 4))
        pts = rng.uniform(-1, 1, (int(rng.integers(1, 25)), d))
        pts = pts[np.linalg.norm(pts, axis=1) <= 1]
        if len(pts) == 0:
            out[i] = 0.0
            continue
        r = rng.uniform(0.05, 1.5)
        net: list[np.ndarray] = []
        for x in pts:  # greedy: a maximal r-separated subset
            if all(np.linalg.norm(x - y) >= r for y in net):
                net.append(x)
        gap = max(min(np.linalg.norm(x - y) for y in net) for x in pts)
        out[i] = max(
            violation(gap, r),  # every point within r of the net
            violation(len(net) * (r / 2) ** d, (1 + r / 2) ** d),  # disjoint balls inside
        )
    return out


axiom(
    "axiom.packing",
    "Maximal separated sets and packing",
    "A maximal r-separated subset of a set is an r-net of it; disjoint balls inside a ball have"
    " total volume at most the ball's.",
    "Vershynin, High-Dimensional Probability, Lemma 4.2.6 and Prop 4.2.12",
    _packing,
)


def _probability_range(rng: np.random.Generator, n: int) -> np.ndarray:
    p, ev = _events(rng, n, int(rng.integers(1, 12)), 2)
    a, b = ev[:, 0], ev[:, 0] | ev[:, 1]  # A subset of B
    pa, pb = (p * a).sum(1), (p * b).sum(1)
    return np.maximum.reduce([violation(-pa, 0.0), violation(pa, 1.0), violation(pa, pb)])


axiom(
    "axiom.probability_range",
    "Probabilities lie in [0, 1]; monotonicity",
    "0 <= P[A] <= 1 for every event A, and A subset of B implies P[A] <= P[B].",
    "Kolmogorov's axioms; Durrett, Probability: Theory and Examples, Sec 1.1",
    _probability_range,
)


def _log(rng: np.random.Generator, n: int) -> np.ndarray:
    a, b = _scale(rng, n), _scale(rng, n)
    pw = rng.uniform(-3, 3, n)
    order = violation(np.where((a < b) != (np.log(a) < np.log(b)), 1.0, 0.0), 0.0)
    return np.maximum.reduce(
        [
            order,
            violation(np.log(a * b), np.log(a) + np.log(b), equality=True),
            violation(np.log(a**pw), pw * np.log(a), equality=True),
        ]
    )


axiom(
    "axiom.log_monotone",
    "The logarithm is increasing",
    "For a, b > 0: a < b iff log a < log b; log(a b) = log a + log b, log(a^p) = p log a.",
    "Rudin, Principles of Mathematical Analysis, Sec 8.6",
    _log,
)


def _function_count(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.empty(n)
    for i in range(n):
        na, nb = int(rng.integers(0, 5)), int(rng.integers(0, 4))
        count = sum(1 for _ in itertools.product(range(nb), repeat=na))
        out[i] = violation(count, nb**na, equality=True)
    return out


axiom(
    "axiom.function_count",
    "Counting maps",
    "There are |B|^|A| maps from a finite set A to a finite set B.",
    "Any combinatorics text, e.g. Stanley, Enumerative Combinatorics I, Sec 1.4",
    _function_count,
)
