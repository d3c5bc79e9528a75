"""sympy -> Coq (Reals): an obligation's expressions and relations as Coq terms over ``R``.

The translation is syntactic and total on what it accepts; anything else raises
:class:`Untranslatable` naming the construct, so a claim is never approximated:

- numbers: integers and rationals exactly (``3 / 4``), pi -> ``PI``, E -> ``exp 1``;
- + * and integer powers (``x ^ 2``; a negative power -> ``/ x ^ n``);
- x^(1/2) -> ``sqrt x``, x^(p/2) -> ``sqrt x ^ p`` (``/`` for p < 0): equal to sympy's power
  where it is defined (x >= 0, x > 0 for p < 0), which the claim's side conditions require;
- exp -> ``exp``, log -> ``ln``, Abs -> ``Rabs``, Max / Min -> ``Rmax`` / ``Rmin``;
- relations <= < >= > = != and conjunctions.

Not translated (reported): other fractional powers, symbolic exponents, ceiling/floor, sums,
gamma, undefined functions (relu), limits. Coq's ``sqrt`` is 0 and ``/ 0`` is unspecified
outside their domains; the lemma states the claim's side conditions (hypotheses for the
hypotheses', conjuncts of the goal for the conclusion's), as the z3 encoding does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import sympy as sp

__all__ = ["CoqNames", "Untranslatable", "coq_rel", "coq_term"]

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_']*$")
# Coq/Gallina/Ltac words and the library names the lemmas use: a variable never shadows them
_RESERVED = frozenset(
    """R Z nat exp ln sqrt PI Rabs Rmax Rmin pow IZR INR Rpower Rinv Rdiv Rminus Rmult Rplus
    Ropp Type Set Prop SProp as at by do end else exists fix cofix for forall fun if in is let
    match mod return then using where with from S O I E True False and or not
    Lemma Theorem Proof Qed""".split()
)

# the proof scripts' own hypothesis names (H1, H1c, C1, X1)
_SCRIPT_NAMES = re.compile(r"^([HCX]\d+c?)$")


class Untranslatable(ValueError):
    """A construct with no faithful Coq (Reals) counterpart here; ``construct`` names it."""

    def __init__(self, construct: str, expr: object) -> None:
        super().__init__(f"{construct}: {expr}")
        self.construct = construct


class CoqNames:
    """Coq identifiers for the sympy symbols of one lemma: the symbol's own name when it is a
    plain identifier that shadows nothing, else ``v_<name>`` made unique."""

    def __init__(self, symbols: Iterable[sp.Symbol], integers: bool = False) -> None:
        symbols = list(symbols)
        self.names: dict[sp.Symbol, str] = {}
        self.integers = frozenset(s for s in symbols if integers and s.is_integer)
        used: set[str] = set()
        for s in sorted(symbols, key=lambda s: s.name):
            name = s.name
            if (
                not _IDENT.match(name)
                or name in _RESERVED
                or name.startswith("v_")
                or _SCRIPT_NAMES.match(name)
            ):
                name = "v_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
            base, k = name, 1
            while name in used:
                k += 1
                name = f"{base}_{k}"
            used.add(name)
            self.names[s] = name

    def __getitem__(self, s: sp.Symbol) -> str:
        return self.names[s]

    def order(self) -> list[str]:
        """The variables in the order :meth:`binders` binds them."""
        reals = [n for s, n in self.names.items() if s not in self.integers]
        return reals + [n for s, n in self.names.items() if s in self.integers]

    def binders(self) -> str:
        """``(x y : R) (n : Z)``: the real variables, then the integer ones (``IZR n`` in
        the terms)."""
        reals = [n for s, n in self.names.items() if s not in self.integers]
        ints = [n for s, n in self.names.items() if s in self.integers]
        out = f"({' '.join(reals)} : R)" if reals else ""
        return out + (f" ({' '.join(ints)} : Z)" if ints else "")


def _rational(q: sp.Rational) -> str:
    if q.q == 1:
        return str(q.p) if q.p >= 0 else f"({q.p})"
    return f"({q.p} / {q.q})" if q.p >= 0 else f"(- ({-q.p} / {q.q}))"


def _power(base: str, e: sp.Rational, expr: sp.Basic) -> str:
    """``base`` (a Coq atom) to the rational power ``e``."""
    if e.is_Integer:
        n = int(e)
        if n == 0:
            return "1"
        pw = base if abs(n) == 1 else f"{base} ^ {abs(n)}"
        return pw if n > 0 else f"/ ({pw})"
    if e.q == 2:
        p = int(e.p)
        root = f"sqrt {base}"
        pw = root if abs(p) == 1 else f"(sqrt {base}) ^ {abs(p)}"
        return pw if p > 0 else f"/ ({pw})"
    raise Untranslatable(f"power with exponent {e} (only integers and halves)", expr)


def coq_term(e: sp.Basic, names: CoqNames) -> str:
    """The Coq term of a sympy expression (module doc), fully parenthesised where needed."""
    if e.is_Symbol:
        if e in names.integers:
            return f"(IZR {names[e]})"
        return names[e]
    if e.is_Rational:
        return _rational(e)
    if e is sp.pi:
        return "PI"
    if e is sp.E:
        return "(exp 1)"
    if isinstance(e, sp.Add):
        return "(" + " + ".join(coq_term(a, names) for a in e.args) + ")"
    if isinstance(e, sp.Mul):
        num, den = [], []
        for a in e.args:
            if isinstance(a, sp.Pow) and a.exp.is_Rational and a.exp < 0:
                den.append(a.base ** (-a.exp))
            elif a.is_Rational and a.q != 1:
                if a.p != 1:
                    num.append(sp.Integer(a.p))
                den.append(sp.Integer(a.q))
            else:
                num.append(a)
        top = " * ".join(coq_term(a, names) for a in num) if num else "1"
        if not den:
            return f"({top})"
        return "(" + " / ".join([top, *(coq_term(a, names) for a in den)]) + ")"
    if isinstance(e, sp.Pow):
        b, x = e.args
        if not x.is_Rational:
            raise Untranslatable("power with a symbolic exponent", e)
        if b is sp.E:
            return f"(exp {_rational(x)})"
        return f"({_power(coq_term(b, names), x, e)})"
    if isinstance(e, sp.exp):
        return f"(exp {coq_term(e.args[0], names)})"
    if isinstance(e, sp.log):
        if len(e.args) != 1:
            raise Untranslatable("log with a base", e)
        return f"(ln {coq_term(e.args[0], names)})"
    if isinstance(e, sp.Abs):
        return f"(Rabs {coq_term(e.args[0], names)})"
    if isinstance(e, (sp.Max, sp.Min)):
        op = "Rmax" if isinstance(e, sp.Max) else "Rmin"
        args = [coq_term(a, names) for a in e.args]
        out = args[0]
        for a in args[1:]:
            out = f"({op} {out} {a})"
        return out
    if isinstance(e, sp.Function):
        raise Untranslatable(f"function {type(e).__name__}", e)
    raise Untranslatable(type(e).__name__, e)


_OPS = {
    sp.LessThan: "<=",
    sp.StrictLessThan: "<",
    sp.GreaterThan: ">=",
    sp.StrictGreaterThan: ">",
    sp.Equality: "=",
    sp.Unequality: "<>",
}


def coq_rel(r: sp.Basic, names: CoqNames) -> str:
    """The Coq proposition of a sympy relation (or a conjunction of them)."""
    if r is sp.true:
        return "True"
    if isinstance(r, sp.And):
        return " /\\ ".join(f"({coq_rel(a, names)})" for a in r.args)
    for kind, op in _OPS.items():
        if isinstance(r, kind):
            return f"{coq_term(r.lhs, names)} {op} {coq_term(r.rhs, names)}"
    raise Untranslatable(f"relation {type(r).__name__}", r)
