"""Chains proved on symbols with their callees as uninterpreted functions (issue 42): the code
that combines bounds proved elsewhere, run on sympy symbols (:func:`verify.proofs.symbolic.
symbolic`) with each coded callee bound to an *uninterpreted* function of the arguments the
code passes it. The callee's own chain proves it equal to its composition over its whole
domain, so code = F(callee) and callee = composition give code = F(composition): the proof is
modular, and a wrong argument (S for S + 1, N + 1 for N) is a different function application,
never equal.

- ``lemma_4_2.chain_tail``: blowup_tail_bound = min(union, sequential) at the same (t, D, a, K,
  S) (the union and sequential tails: ``lemma_4_2.chain_union``, ``chain_sequential``);
- ``lemma_4_2.chain_neighbourhood``: min(1, P[beta > t] (1 + N/(N - k + 1))) with S = N + 1
  (eos) or N, the Markov factor run on symbols against the step expression
  :data:`verify.proofs.eps_zero.MARKOV`;
- ``thm_4_5.chain_bad_event_bound``: min(1, a_N) with a_N the series term (``thm_4_5.
  chain_series``) called at e = (D-1)/(2L) - 5, zeta = (D-2)/(D-1) and evaluated at N. The
  code's branch a_N >= 1 is decided by writing a_N = 1 + u A (u >= 0) or 1 - u A (u > 0), A > 0
  an uninterpreted function: the two cover every real value of a_N.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import sympy as sp

from verify.proofs.chain_code import code
from verify.proofs.eps_zero import MARKOV
from verify.proofs.symbolic import SymCase, sub, symbolic, symbolic_step

__all__ = ["with_callees"]

DOC0 = "docs/derivations_eps_zero.md"


def with_callees(ob_id: str, **callees: Callable[..., Any]) -> Callable[..., Any]:
    """The coded function of ``ob_id`` on symbols, each named callee bound to ``callees[name]``
    in every module copy the call reaches (looked up when called: a monkeypatched function is
    what runs)."""
    return symbolic(code(ob_id), overrides=callees)


def _undefined(name: str, **assumptions: bool) -> Callable[..., Any]:
    fn = sp.Function(name, **assumptions)
    return lambda *args: fn(*(sp.sympify(a) for a in args))


def _pos(*names: str) -> tuple[sp.Symbol, ...]:
    return tuple(sp.Symbol(n, positive=True) for n in names)


def _posint(*names: str) -> tuple[sp.Symbol, ...]:
    return tuple(sp.Symbol(n, positive=True, integer=True) for n in names)


D, L, K, S, N = _posint("D", "L", "K", "S", "N")
t, a, box = _pos("t", "a", "B")
k = sp.Symbol("k", nonnegative=True, integer=True)
UNION, SEQUENTIAL, TAIL = "P_union", "P_sequential", "P_tail"


# ----------------------------------------------------------------------------- Lemma 4.2
def _tail_cases() -> Iterator[SymCase]:
    callees = {
        "blowup_tail_bound_union": _undefined(UNION),
        "blowup_tail_bound_sequential": _undefined(SEQUENTIAL),
    }
    args = (t, D, a, K, S)
    yield (
        {"t": "t", "D": "D", "a": "a", "K": "K", "S": "S"},
        lambda: with_callees("lemma_4_2.chain_tail", **callees)(*args),
        lambda: sp.Min(sp.Function(UNION)(*args), sp.Function(SEQUENTIAL)(*args)),
    )


def _neighbourhood_cases() -> Iterator[SymCase]:
    callees = {"blowup_tail_bound": _undefined(TAIL)}
    for eos, seq_len in ((True, N + 1), (False, N)):
        yield (
            {"eos": str(eos), "S": str(seq_len)},
            lambda eos=eos: with_callees("lemma_4_2.chain_neighbourhood", **callees)(
                t, D, a, K, N, k, eos
            ),
            lambda s=seq_len: sp.Min(1, sp.Function(TAIL)(t, D, a, K, s) * sub(MARKOV, N=N, k=k)),
        )


# ----------------------------------------------------------------------------- Thm 4.5
class _ExactRationals:
    """sympy, with ``Rational(p, q)`` = p/q also when p, q are symbols (the code builds its
    exact exponent e = Rational(D - 1, 2L) - 5 from integers)."""

    @staticmethod
    def Rational(p: Any, q: Any = 1) -> sp.Expr:
        return sp.sympify(p) / sp.sympify(q)

    def __getattr__(self, name: str) -> Any:
        return getattr(sp, name)


A_N = sp.Function("a_N", positive=True)


def _series_term(shift: sp.Expr) -> Callable[..., Any]:
    """The series term a_N bound to 1 + shift * a_N(D, L, e, zeta, B, N): the uninterpreted
    a_N of the arguments the code passes it, at the code's N."""

    def term(d: Any, ll: Any, e: Any, zeta: Any, b: Any) -> tuple[sp.Expr, sp.Symbol]:
        n = sp.Symbol("n", positive=True)
        return 1 + shift * A_N(d, ll, e, zeta, b, n), n

    return term


def _bad_event_cases() -> Iterator[SymCase]:
    e, zeta = (D - 1) / (2 * L) - 5, (D - 2) / (D - 1)  # thm_4_5.chain_exponent
    u0 = sp.Symbol("u", nonnegative=True)
    u1 = sp.Symbol("u", positive=True)
    for name, shift in (("1 + u a, u >= 0", u0), ("1 - u a, u > 0", -u1)):
        yield (
            {"a_N": name, "a": "a_N(D, L, e, zeta, B, N) > 0"},
            lambda shift=shift: with_callees(
                "thm_4_5.chain_bad_event_bound",
                bad_event_series_term=_series_term(shift),
                sp=_ExactRationals(),
            )(D, L, N, box),
            lambda shift=shift: sp.Min(1, 1 + shift * A_N(D, L, e, zeta, box, N)),
        )


# ----------------------------------------------------------------------------- registration
_TABLE = [
    ("lemma_4_2.chain_tail", "Lemma 4.2", "Blowup tail, sequential conditioning",
     DOC0 + "#2-lemma-42", _tail_cases,
     "t > 0, integer D, K, S >= 1, a > 0 (the union and sequential tails uninterpreted, each"
     " proved by its own chain)",
     ("lemma_4_2.chain_union", "lemma_4_2.chain_sequential")),
    ("lemma_4_2.chain_neighbourhood", "Lemma 4.2", "Neighbourhood", DOC0 + "#2-lemma-42",
     _neighbourhood_cases,
     "t, a > 0, integer D, K, N >= 1, integer k >= 0, eos or not (P[beta > t] uninterpreted,"
     " proved by lemma_4_2.chain_tail)",
     ("lemma_4_2.neighbourhood", "lemma_4_2.chain_tail", "lemma_4_2.chain_markov_factor")),
    ("thm_4_5.chain_bad_event_bound", "Thm 4.5", "Series", DOC0 + "#5-thm-45-and-borel-cantelli",
     _bad_event_cases,
     "integer D, L, N >= 1, B > 0 and every real a_N (>= 1 and < 1; the series term"
     " uninterpreted, proved by thm_4_5.chain_series)",
     ("thm_4_5.chain_series", "thm_4_5.chain_exponent", "axiom.probability_range")),
]  # fmt: skip
for _id, _st, _step, _doc, _cases, _dom, _facts in _TABLE:
    symbolic_step(_id, _st, _step, _doc, _cases, _dom, facts=_facts)
