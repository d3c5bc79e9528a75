"""Sec 5 MAJORITY's chains proved for every N (issue 42), not at enumerated points:

- ``sec_5_majority.tie_strings`` (z3, over the integers): a string of weight w is
  zero-sensitive for f = [weight >= k] (1 <= k <= N) iff w is neither k - 1 nor k: flipping one
  of its w ones gives weight w - 1, one of its N - w zeros w + 1;
- ``sec_5_majority.weight_classes`` (sympy): the C(N, w) strings of weight w, w = 0..N, are all
  2^N strings; so K_0 = 2^N - C(N, k) - C(N, k - 1);
- ``sec_5_majority.chain_k0``: ``majority_k0_formula`` run on symbols at N = 2m + 1 and
  N = 2m + 2 (every N >= 1; sympy decides N % 2 and N // 2 there), both ties, equals that count
  with MAJORITY's k ((N + 1)/2 odd; N/2 + 1 or N/2 even, ties to 0 or to 1);
- ``sec_5_majority.chain_predicate``: ``majority_lower_bound_exceeds`` run on symbols once per
  path (:mod:`verify.proofs.symbolic_paths`); on each, z3 proves that the path condition
  implies value = [2^N (1 - sqrt(8/(3N))) > N^c] (the step expression
  :data:`verify.proofs.coverage.MAJORITY_LOWER`), with 2^N and N^c abstracted as reals P > 0
  and M (every (N, c) is an instance: the claim holds for every P, M).

When the code cannot run on symbols (a weakening written with ``1 << n``), the obligation
searches points for a counterexample, with the code run on numbers: failed there, or unknown;
never proved.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import sympy as sp
import z3
from flint import arb

from verify.proofs.chain_code import CODE, code
from verify.proofs.core import Verdict
from verify.proofs.coverage_common import DOC9, S5
from verify.proofs.coverage_majority import MAJORITY_LOWER
from verify.proofs.methods import custom_step
from verify.proofs.symbolic import Call, SymCase, code_on_symbols, sub, symbolic_step
from verify.proofs.symbolic_paths import paths
from verify.proofs.z3_encoding import _z3_check

__all__: list[str] = []

N = sp.Symbol("N", positive=True, integer=True)
m = sp.Symbol("m", nonnegative=True, integer=True)
w = sp.Symbol("w", nonnegative=True, integer=True)


# ----------------------------------------------------------------------------- the tie strings
def _tie_strings_claim(drop_lower: bool = False) -> tuple[z3.Solver, dict[str, z3.ArithRef]]:
    """The negation of: for integers 1 <= k <= N, 0 <= w <= N, no flip of a weight-w string
    changes [weight >= k] iff w != k and w != k - 1 (the twin drops w != k - 1)."""
    n, k, wt = z3.Ints("N k w")
    f = lambda x: x >= k  # noqa: E731 - the threshold function of the weight
    one_flip = z3.And(wt >= 1, f(wt) != f(wt - 1))  # a one flipped: weight w - 1
    zero_flip = z3.And(wt <= n - 1, f(wt) != f(wt + 1))  # a zero flipped: weight w + 1
    off_ties = z3.And(wt != k, *(() if drop_lower else (wt != k - 1,)))
    s = z3.Solver()
    s.add(n >= 1, k >= 1, k <= n, wt >= 0, wt <= n)
    s.add(z3.Not(z3.Not(z3.Or(one_flip, zero_flip)) == off_ties))
    return s, {"N": n, "k": k, "w": wt}


def _tie_strings_prove() -> Verdict:
    s, _ = _tie_strings_claim()
    res = s.check()
    if res == z3.unsat:
        return Verdict("proved", "z3 (integers): the negated claim is unsatisfiable")
    if res == z3.sat:
        model = s.model()
        return Verdict(
            "failed", "z3 found a counterexample", {str(v): str(model[v]) for v in model}
        )
    return Verdict("unknown", f"z3: {s.reason_unknown()}")


def _tie_strings_twin() -> Verdict:
    s, v = _tie_strings_claim(drop_lower=True)
    if s.check() != z3.sat:
        return Verdict("not refuted", "z3 found no counterexample to the twin")
    pt = {name: s.model().eval(x, model_completion=True).as_long() for name, x in v.items()}
    n, k, wt = pt["N"], pt["k"], pt["w"]
    flips = [x for x in (wt - 1, wt + 1) if 0 <= x <= n]
    zero_sensitive = all((x >= k) == (wt >= k) for x in flips)  # checked again, in Python
    if 1 <= k <= n and 0 <= wt <= n and zero_sensitive != (wt != k):
        return Verdict(
            "refuted", "z3 model, checked in integers", {x: str(y) for x, y in pt.items()}
        )
    return Verdict("not refuted", "the z3 model did not check")


custom_step(
    "sec_5_majority.tie_strings",
    S5,
    "Lower bound: the tie count",
    DOC9,
    "z3",
    "for integers 1 <= k <= N, 0 <= w <= N: no flip of a weight-w string changes [weight >= k]"
    " (w >= 1 and [w - 1 >= k] != [w >= k], or w <= N - 1 and [w + 1 >= k] != [w >= k]) iff"
    " w != k and w != k - 1",
    "... iff w != k",
    _tie_strings_prove,
    _tie_strings_twin,
)
_CLASSES = sp.Sum(sp.binomial(N, w), (w, 0, N))


def _classes_prove() -> Verdict:
    if sp.simplify(_CLASSES - 2**N) == 0:
        return Verdict("proved", "sympy: sum_w C(N, w) - 2^N simplifies to 0")
    return Verdict("unknown", "sympy could not simplify sum_w C(N, w) - 2^N to 0")


def _classes_twin() -> Verdict:
    for n in range(1, 6):  # the twin's sum 2^(N-1), in integers
        if sum(math.comb(n, j) for j in range(n + 1)) != 2 ** (n - 1):
            return Verdict("refuted", "the twin fails in integers", {"N": str(n)})
    return Verdict("not refuted", "the twin held at N = 1..5")


custom_step(
    "sec_5_majority.weight_classes",
    S5,
    "Lower bound: the tie count",
    DOC9,
    "sympy",
    f"{_CLASSES} = 2**N for every integer N >= 1 (the strings of weight w = 0..N are all"
    " 2^N strings)",
    f"{_CLASSES} = 2**(N - 1)",
    _classes_prove,
    _classes_twin,
)


# ----------------------------------------------------------------------------- K_0
def _k0_composed(n: sp.Expr, k: sp.Expr) -> sp.Expr:
    """2^N minus the strings at weights k and k - 1 (tie_strings, weight_classes)."""
    return 2**n - sp.binomial(n, k) - sp.binomial(n, k - 1)


def _k0_cases() -> Iterator[SymCase]:
    # MAJORITY's k: odd N, (N + 1)/2; even N, N/2 + 1 (ties to 0) or N/2 (ties to 1)
    for n, name, ks in (
        (2 * m + 1, "2m + 1", (m + 1, m + 1)),
        (2 * m + 2, "2m + 2", (m + 2, m + 1)),
    ):
        for tie, k in zip(("zero", "one"), ks, strict=True):
            yield (
                {"N": name, "tie": tie},
                Call("sec_5_majority.chain_k0", n, tie),
                lambda n=n, k=k: _k0_composed(n, k),
            )


symbolic_step(
    "sec_5_majority.chain_k0",
    S5,
    "Lower bound: the tie count",
    DOC9,
    _k0_cases,
    "integer N >= 1 (N = 2m + 1 and 2m + 2, m >= 0), both tie rules",
    facts=("sec_5_majority.tie_strings", "sec_5_majority.weight_classes"),
)


# ----------------------------------------------------------------------------- the predicate
c = sp.Symbol("c", integer=True)
P, M = sp.Symbol("P", positive=True), sp.Symbol("M", real=True)
_ABSTRACT = {2**N: P, N**c: M}  # 2^N and N^c as free reals: every (N, c) is an instance
_COMPOSED = sp.Gt(sub(MAJORITY_LOWER, P=P, N=N), M)  # 2^N (1 - sqrt(8/(3N))) > N^c


# z3 sees plain reals (a symbol's assumptions would decide N >= 1 away): the domain is stated
_NR, _PR = sp.Symbol("N", real=True), sp.Symbol("P", real=True)
_DOMAIN = [_NR >= 1, _PR > 0]


def _abstract(e: sp.Basic) -> sp.Basic:
    out = e.subs(_ABSTRACT)
    if out.has(c) or any(not p.exp.is_Number for p in out.atoms(sp.Pow)):
        raise ValueError(f"not abstracted to P, M, N: {out}")
    return out.xreplace({N: _NR, P: _PR})


def _predicate_paths() -> tuple[str, dict | None, str]:
    """("proved" | "failed" | "unknown", a point, why)."""
    fn = code_on_symbols("sec_5_majority.chain_predicate")
    try:
        found = paths(lambda: bool(fn(N, c)))
    except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        pt = _predicate_counterexample()
        if pt is not None:
            return "failed", pt, "the code run on numbers differs there"
        return "unknown", None, f"the code could not be evaluated on symbols: {exc}"
    for path in found:
        conds = [_abstract(r) for r in path.conditions]
        goal = _abstract(_COMPOSED if path.value else _COMPOSED.negated)
        _, res, _ = _z3_check([*_DOMAIN, *conds], goal)
        if res != z3.unsat:
            pt = _predicate_counterexample()
            where = " & ".join(map(str, conds))
            if pt is not None:
                return "failed", pt, f"on the path {where}: the code differs there"
            return "unknown", {"path": where}, f"z3 did not prove the path {where} ({res})"
    return "proved", None, f"{len(found)} paths, each proved by z3 (2^N = P, N^c = M free)"


def _boundary_points() -> Iterator[tuple[int, float]]:
    """Points 1e-6 on both sides of the boundary 2^N (1 - sqrt(8/(3N))) = N^c (a real c puts
    N^c there), N = 2..60."""
    for n in range(2, 61):
        edge = 2.0**n * (1 - math.sqrt(8 / (3 * n)))
        if edge > 1:
            for side in (1 - 1e-6, 1 + 1e-6):
                yield n, math.log(edge * side) / math.log(n)


def _composed_at(n: int, cc: float) -> bool:
    """2^N (1 - sqrt(8/(3N))) > N^c, decided in arb."""
    lower = arb(2) ** n * (1 - (arb(8) / (3 * n)).sqrt())
    t = arb(n) ** arb(cc)
    if lower.lower() > t.upper() or lower.upper() < t.lower():
        return bool(lower > t)
    raise ArithmeticError(f"undecided at N = {n}, c = {cc}")


def _predicate_counterexample(negate: bool = False) -> dict | None:
    """The first boundary point where the code (negated) differs from the composition."""
    for n, cc in _boundary_points():
        want = _composed_at(n, cc) != negate
        if bool(code("sec_5_majority.chain_predicate")(n, cc)) != want:
            return {"N": n, "c": cc}
    return None


def _predicate_prove() -> Verdict:
    status, pt, why = _predicate_paths()
    return Verdict(status, f"{CODE['sec_5_majority.chain_predicate']}: {why}", pt)


def _predicate_twin() -> Verdict:
    pt = _predicate_counterexample(negate=True)
    if pt is None:
        return Verdict("not refuted", "the negated code agreed at every boundary point")
    return Verdict("refuted", "the negated code differs from the composition (arb)", pt)


custom_step(
    "sec_5_majority.chain_predicate",
    S5,
    "Lower bound, compared in exact integers",
    DOC9,
    "chain",
    f"{CODE['sec_5_majority.chain_predicate']}(N, c) evaluated on symbols, path by path, equals"
    " [2^N (1 - sqrt(8/(3N))) > N^c] for every integer N >= 1 and every c (z3 on each path,"
    " 2^N and N^c free reals)",
    f"{CODE['sec_5_majority.chain_predicate']} negated",
    _predicate_prove,
    _predicate_twin,
    facts=("sec_5_majority.exact_test", "sec_5_majority.lower_bound"),
)
