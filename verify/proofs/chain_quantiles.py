"""The chain to the code for H&R Thm 6's two thresholds, proved on symbols, with the edges of
their probability (:mod:`verify.proofs.chain_boxes` for the values outside [0, 1]).

The coded threshold is scipy's chi^2 quantile, scaled: t = F^{-1}_{D-1}(q) sigma^2 / D. On
symbols ``stats.chi2.ppf(q, k)`` is the function :class:`Chi2Quantile` (scipy's ppf taken for
the quantile it is defined to be, as ``math.sqrt`` for the square root), and the chain checks
that the coded t *solves the composed equation*: the proved probability
(``hr_thm_6.chain_variance``: F_{D-1}(t D / sigma^2), the regularised lower gamma) at the coded
t equals q, using only F_k(F^{-1}_k(q)) = q at the same k (:func:`invert`). A threshold with
the wrong degrees of freedom or scale leaves a quantile the rule does not remove, and the chain
fails; the cap threshold must give back p through K S F (``hr_thm_6.union``). Where a weakening
cannot run on symbols, the chain searches seeded points with the code run on numbers and the
probability in arb, and fails there. The edges: q in [0, 1] on symbols (q = 1 is t = inf,
F = 1); every other float, NaN and +-inf must raise (ProbabilityError or ValidationError: an
error naming the argument; branch and bound in float
order, the code's own check run on the box)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import sympy as sp

from verify.errors import ValidationError
from verify.proofs.box_arith import on_box
from verify.proofs.chain_boxes import BoxCase, Raises, Var, check_cases
from verify.proofs.chain_code import CODE, code
from verify.proofs.chain_symbolic import _chi2_cdf
from verify.proofs.core import Verdict
from verify.proofs.methods import custom_step
from verify.proofs.symbolic import exact, same
from verify.proofs.symbolic_arrays import symbolic_np
from verify.theory.probability import ProbabilityError

__all__ = ["Chi2Quantile", "invert"]

DOC6 = "docs/derivations_hahn_rofin.md#thm-6"
D, K, S = (sp.Symbol(n, positive=True, integer=True) for n in ("D", "K", "S"))
SIGMA, Q = sp.Symbol("sigma", positive=True), sp.Symbol("q", positive=True)
_MAX = sys.float_info.max
_ERRORS = (ProbabilityError, ValidationError)  # an error naming the argument


class Chi2Quantile(sp.Function):
    """F^{-1}_k(q): the q-quantile of chi^2 with k degrees of freedom."""

    nargs = 2


_STATS = SimpleNamespace(chi2=SimpleNamespace(ppf=Chi2Quantile, cdf=lambda x, k: _chi2_cdf(
    exact(x), exact(k))))  # fmt: skip


def invert(expr: sp.Expr) -> sp.Expr:
    """``expr`` with each F_k(F^{-1}_k(q)) = lowergamma(k/2, F^{-1}_k(q)/2) / gamma(k/2)
    replaced by q (same k, same argument exactly: nothing else is touched)."""

    def quantile_in(z: sp.Basic) -> sp.Expr | None:
        if not isinstance(z, sp.lowergamma):
            return None
        a, x = z.args
        for f in x.atoms(Chi2Quantile):
            if sp.simplify(x - f / 2) == 0 and sp.simplify(a - f.args[1] / 2) == 0:
                return f
        return None

    return expr.replace(
        lambda z: quantile_in(z) is not None,
        lambda z: quantile_in(z).args[0] * sp.gamma(z.args[0]),
    )


def _variance_sym() -> tuple[Any, Any]:
    t = symbolic_np(code("hr_thm_6.chain_variance_threshold"), {"stats": _STATS})(D, SIGMA, Q)
    return invert(_chi2_cdf(t * D / SIGMA**2, D - 1)), Q  # hr_thm_6.chain_variance at t


def _cap_sym() -> tuple[Any, Any]:
    t = symbolic_np(code("hr_thm_6.chain_cap_threshold"), {"stats": _STATS})(D, K, S, SIGMA, Q)
    return invert(K * S * _chi2_cdf(t * D / SIGMA**2, D - 1)), Q  # hr_thm_6.union's K S F


# ---- where the code cannot run on symbols: seeded points, the probability in arb
def _variance_num(rng: np.random.Generator) -> tuple[dict, float, Any]:
    from verify.proofs.chain_tails import _chi2

    d, sigma, q = int(rng.integers(2, 33)), float(10 ** rng.uniform(-2, 0)), float(rng.uniform())
    t = code("hr_thm_6.chain_variance_threshold")(d, sigma, q)
    return {"D": d, "sigma": sigma, "q": q}, q, _chi2(d, sigma, t)


def _cap_num(rng: np.random.Generator) -> tuple[dict, float, Any]:
    from verify.proofs.chain_tails import _chi2
    from verify.proofs.compose import iv

    d, k, s = int(rng.integers(2, 33)), int(rng.integers(1, 7)), int(rng.integers(1, 65))
    sigma, p = float(10 ** rng.uniform(-2, 0)), float(rng.uniform())
    t = code("hr_thm_6.chain_cap_threshold")(d, k, s, sigma, p)
    return {"D": d, "K": k, "S": s, "sigma": sigma, "p": p}, p, iv(k) * iv(s) * _chi2(d, sigma, t)


def _counterexample(numeric: Callable, weaken: float) -> tuple[dict, str] | None:
    from verify.proofs.chain import _inside

    rng = np.random.default_rng(64)
    for _ in range(100):
        pt, want, enc = numeric(rng)
        # the coded t gives back F = enc; weakened, the check is on the halved probability
        if not _inside(want * weaken, enc, 1e-9):
            return pt, f"F at the coded t is {float(enc.lo.mid()):.12g}, not {want * weaken:.12g}"
    return None


# ---- the edges: every float outside [0, 1] (and NaN, +-inf) must raise, whatever the sizes
_SIZES = {"D": (2, 2**63), "K": (1, 2**63), "S": (1, 2**63)}


def _edge_cases(ob_id: str, sizes: tuple[str, ...]) -> list[BoxCase]:
    """The code with its probability check run on the box: integer sizes over [lower, 2^63],
    sigma over every positive float, the probability over the floats below 0 and above 1."""
    coded = on_box(code(ob_id))  # its validators run on the box
    sides = [Var(n, *_SIZES[n], "int") for n in sizes]
    sides.append(Var("sigma", 5e-324, _MAX, "float"))
    order = (*sizes, "sigma", "q")

    def run(e: dict[str, Any]) -> Any:
        return coded(*(e[n] for n in order))

    def itself(e: dict[str, Any]) -> Any:
        return code(ob_id)(*(e[n] for n in order))

    cases = []
    for lo, hi in ((-_MAX, -5e-324), (math.nextafter(1.0, 2.0), _MAX)):
        box = (*sides, Var("q", lo, hi, "float"))
        cases.append(BoxCase(f"{', '.join(sizes)}, sigma > 0, q in [{lo}, {hi}] (floats)", box,
                             run, lambda e: Raises(_ERRORS), at_point=itself))  # fmt: skip
    for x in (math.nan, math.inf, -math.inf):
        at = (*(_SIZES[n][0] for n in sizes), 1.0, x)
        cases.append(BoxCase(f"q = {x}", (), lambda e, at=at: code(ob_id)(*at),
                             lambda e: Raises(_ERRORS)))  # fmt: skip
    return cases


def _quantile_step(ob_id: str, symbolic: Callable, numeric: Callable, sizes: tuple, domain: str,
                   facts: tuple[str, ...]) -> None:  # fmt: skip
    def check(weaken: Any) -> tuple[str, str, dict | None]:
        try:
            got, want = symbolic()
        except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
            found = _counterexample(numeric, float(weaken))
            if found is not None:
                return "failed", f"the code run on numbers: {found[1]}", found[0]
            return "unknown", f"the code could not be evaluated on symbols: {exc}", None
        if not same(got * weaken, want):
            return "failed", f"the probability at the coded t: {got * weaken} vs {want}", {"q": "q"}
        out, n, _ = check_cases(_edge_cases(ob_id, sizes), Fraction(0),
                                raises=_ERRORS)  # fmt: skip
        if out.status != "proved":
            return out.status, f"edges: {out.detail}", out.point
        return (
            "proved",
            f"the probability at the coded t = its target on symbols; {n} edge boxes raise",
            None,
        )

    def prove() -> Verdict:
        status, detail, point = check(1)
        return Verdict(status, f"{CODE[ob_id]}: {detail}", point)

    def twin() -> Verdict:
        status, detail, point = check(sp.Rational(1, 2))
        if status == "failed":
            return Verdict("refuted", detail, point)
        return Verdict("not refuted", detail)

    custom_step(ob_id, "H&R Thm 6", "Derivation: a union bound over K norms and S positions",
                DOC6, "chain",
                f"the probability at {CODE[ob_id]}'s t equals the target, on symbols for every"
                f" {domain}; every other float, NaN and +-inf raise",
                "the probability at the coded t times 1/2", prove, twin, facts=facts)  # fmt: skip


_quantile_step(
    "hr_thm_6.chain_variance_threshold", _variance_sym, _variance_num,
    ("D",),
    "integer D >= 2, sigma > 0, q in [0, 1] (q = 1: t = inf)",
    ("hr_thm_6.chain_variance",),
)  # fmt: skip
_quantile_step(
    "hr_thm_6.chain_cap_threshold", _cap_sym, _cap_num,
    ("D", "K", "S"),
    "integer D >= 2, K, S >= 1, sigma > 0, p in [0, 1]",
    ("hr_thm_6.union", "hr_thm_6.chain_cap_probability"),
)  # fmt: skip
