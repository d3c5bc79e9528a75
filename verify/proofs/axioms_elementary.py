"""The named axioms of elementary analysis and counting the steps use (monotonicity of the
integral, packing, the logarithm, counting maps), each with its attack and scalar schema
(:mod:`verify.proofs.axioms`)."""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from verify.proofs.axiom_draws import _scale, violation
from verify.proofs.axiom_schemas import schema
from verify.proofs.core import axiom

_R = {"real": True}


def _integral_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    from numpy.polynomial import polynomial as P

    out = {"i_f": np.empty(n), "i_g": np.empty(n)}
    for i in range(n):
        f = rng.standard_normal(5) * _scale(rng, 1)[0]
        q = rng.standard_normal(3)
        g = P.polyadd(f, P.polymul(q, q))  # g - f = q^2 >= 0
        x = rng.uniform(0, 5)
        out["i_f"][i] = P.polyval(x, P.polyint(f)) - P.polyval(0, P.polyint(f))
        out["i_g"][i] = P.polyval(x, P.polyint(g)) - P.polyval(0, P.polyint(g))
    return out


def _integral_monotone(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _integral_scalars(rng, n)
    return violation(s["i_f"], s["i_g"])


_if, _ig = sp.symbols("i_f i_g", **_R)


axiom(
    "axiom.integral_monotone",
    "Monotonicity of the integral",
    "f <= g pointwise on [0, x] (f, g integrable there, x >= 0) implies int_0^x f <= int_0^x g.",
    "Rudin, Principles of Mathematical Analysis, Thm 6.12",
    _integral_monotone,
    schema=schema(
        {"i_f": "int_0^x f", "i_g": "int_0^x g (f <= g on [0, x])"},
        [],
        _if <= _ig,
        _integral_scalars,
    ),
)


def _packing_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Per draw: the farthest point's distance to a greedy maximal r-separated subset
    (``gap``), r, the subset's size ``count`` and the dimension ``d``."""
    out = {k: np.zeros(n) for k in ("gap", "r", "count", "d")}
    for i in range(n):
        d = int(rng.integers(1, 4))
        pts = rng.uniform(-1, 1, (int(rng.integers(1, 25)), d))
        pts = pts[np.linalg.norm(pts, axis=1) <= 1]
        out["d"][i], out["r"][i] = d, 1.0
        if len(pts) == 0:
            continue
        r = rng.uniform(0.05, 1.5)
        net: list[np.ndarray] = []
        for x in pts:  # greedy: a maximal r-separated subset
            if all(np.linalg.norm(x - y) >= r for y in net):
                net.append(x)
        out["gap"][i] = max(min(np.linalg.norm(x - y) for y in net) for x in pts)
        out["r"][i], out["count"][i] = r, len(net)
    return out


def _packing(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _packing_scalars(rng, n)
    r, d = s["r"], s["d"]
    return np.maximum(
        violation(s["gap"], r),  # every point within r of the net
        violation(s["count"] * (r / 2) ** d, (1 + r / 2) ** d),  # disjoint balls inside
    )


_gap, _rr, _count, _dd = sp.symbols("gap r count d", **_R)


axiom(
    "axiom.packing",
    "Maximal separated sets and packing",
    "A maximal r-separated subset of a set is an r-net of it; disjoint balls inside a ball have"
    " total volume at most the ball's.",
    "Vershynin, High-Dimensional Probability, Lemma 4.2.6 and Prop 4.2.12",
    _packing,
    schema=schema(
        {
            "gap": "the largest distance from a point of the set to a maximal r-separated subset",
            "r": "the separation",
            "count": "the subset's size (the set inside the unit ball)",
            "d": "the dimension",
        },
        [_rr > 0, _count >= 0, _dd >= 1],
        sp.And(_gap <= _rr, _count * _rr**_dd <= (2 + _rr) ** _dd),
        _packing_scalars,
    ),
)


def _log_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """a, b > 0 (equal in an eighth of the draws), their logarithms, q = (log a - log b) /
    (a - b) (1/a when a = b: the mean value theorem's 1/c, c between a and b) and a power."""
    a, b = _scale(rng, n), _scale(rng, n)
    b[: n // 8] = a[: n // 8]  # equality: a = b
    la, lb = np.log(a), np.log(b)
    same = a == b
    q = np.where(same, 1 / a, (la - lb) / np.where(same, 1.0, a - b))
    return {"a": a, "b": b, "la": la, "lb": lb, "q": q, "pw": rng.uniform(-3, 3, n)}


def _log(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _log_scalars(rng, n)
    a, b, pw = s["a"], s["b"], s["pw"]
    order = violation(np.where((a < b) != (s["la"] < s["lb"]), 1.0, 0.0), 0.0)
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
    schema=schema(
        {
            "a": "a > 0",
            "b": "b > 0",
            "la": "log a (to a base > 1)",
            "lb": "log b (the same base)",
            "q": "a slope > 0 (1/(c ln base) for some c between a and b: the mean value"
            " theorem); strictly increasing: log a - log b has the sign of a - b",
        },
        [sp.Symbol("a", **_R) > 0, sp.Symbol("b", **_R) > 0],
        sp.And(
            sp.Eq(
                sp.Symbol("la", **_R) - sp.Symbol("lb", **_R),
                sp.Symbol("q", **_R) * (sp.Symbol("a", **_R) - sp.Symbol("b", **_R)),
            ),
            sp.Symbol("q", **_R) > 0,
        ),
        _log_scalars,
    ),
)


def _count_scalars(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {k: np.empty(n) for k in ("count", "na", "nb")}
    for i in range(n):
        na, nb = int(rng.integers(0, 5)), int(rng.integers(0, 4))
        out["count"][i] = sum(1 for _ in itertools.product(range(nb), repeat=na))
        out["na"][i], out["nb"][i] = na, nb
    return out


def _function_count(rng: np.random.Generator, n: int) -> np.ndarray:
    s = _count_scalars(rng, n)
    return violation(s["count"], s["nb"] ** s["na"], equality=True)


axiom(
    "axiom.function_count",
    "Counting maps",
    "There are |B|^|A| maps from a finite set A to a finite set B.",
    "Any combinatorics text, e.g. Stanley, Enumerative Combinatorics I, Sec 1.4",
    _function_count,
    schema=schema(
        {"count": "the number of maps A -> B", "na": "|A|", "nb": "|B|"},
        [sp.Symbol("na", **_R) >= 0, sp.Symbol("nb", **_R) >= 0],
        sp.Eq(sp.Symbol("count", **_R), sp.Symbol("nb", **_R) ** sp.Symbol("na", **_R)),
        _count_scalars,
    ),
)
