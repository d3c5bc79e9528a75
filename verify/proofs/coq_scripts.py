r"""The Coq lemma of an obligation: its claim, translated (:mod:`verify.proofs.coq_terms`), and a
proof script chosen by the claim's shape. Nothing in the script is trusted: Coq's kernel checks
every step, so a script that does not fit the claim leaves it *not closed*, never proved.

Claims (from the obligation's own data, so a changed claim changes its lemma):
- z3 steps: forall x..., hypotheses (with their side conditions) -> the conclusion /\ its side
  conditions (as z3 checks it: every symbol a real variable);
- arb steps: forall x..., lo <= x <= hi for each side of the box -> the conclusion /\ its side
  conditions (where the conclusion is defined, as the branch and bound requires);
- sympy identities: forall x..., the symbols' assumptions (x > 0 for a positive symbol; an
  integer symbol is a ``Z`` variable) and both sides' side conditions -> lhs = rhs.

Script (one shape for all; each piece is tried and only Coq decides):
1. ``exp`` terms whose arguments are integer multiples k*a of one a are rewritten as powers of
   one atom ``exp a`` (``exp_pow``, proved in :data:`verify.proofs.coq_library.LIBRARY`);
   every other non-polynomial term (sqrt, /, ln, Rabs, Rmax, Rmin) is an atom with its facts:
   exp a > 0 and 1 + a <= exp a; sqrt b >= 0, sqrt b * sqrt b = b when b >= 0,
   sqrt b > 0 when b > 0.
2. A hypothesis with denominators is also given cleared of them (n <= 0 with l - r = n/d,
   d > 0: the fraction sympy's ``together`` finds over the atoms, checked by ``field``).
3. Hints nra does not find itself (it multiplies pairs of hypotheses): (x -+ y)^2 >= 0 for the
   goal's cross terms, 0 <= the monomials (and their sub-products) whose factors are >= 0.
4. The conclusion: Rmax / Rmin / Rabs at its top split into one goal per argument; a goal
   with denominators by the same fraction (``field`` for the identity, the signs of d and n
   factor by factor, in both orientations); else case splits on Rabs/Rmax/Rmin and
   ``lra``/``nra``; identities by ``field``/``ring``. The conclusion's side conditions are
   proved first, by the same tactics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd

import sympy as sp

from verify.proofs.coq_terms import CoqNames, Untranslatable, coq_rel, coq_term

__all__ = ["Claim", "claim_of", "lemma_text"]


@dataclass(frozen=True)
class Claim:
    """An obligation's claim in logical form: ``hyps`` -> ``goal`` (relations), ``sides``:
    the conclusion's side conditions (conjuncts of the goal), ``integers``: whether integer
    symbols are Z variables."""

    hyps: tuple[sp.Basic, ...]
    goal: sp.Basic
    sides: tuple[sp.Basic, ...]
    integers: bool = False


def _side_conditions(e: sp.Basic) -> list[sp.Basic]:
    from verify.proofs.z3_encoding import side_conditions

    return side_conditions(e)


def claim_of(ob) -> Claim:
    """The claim of a z3, arb or sympy-identity obligation (module doc); Untranslatable for
    the other methods (chains compare code, custom sympy steps are limits and series)."""
    m = ob.meta
    if ob.method == "z3" and "parts" in m:  # verify.proofs.positions: one lemma per part
        raise Untranslatable("an induction on the size (its parts are z3 claims)", ob.id)
    if ob.method == "z3" and "hyps" in m:  # (a custom z3 step over the integers has none)
        hyps = tuple(m["hyps"])
        extra = [c for h in hyps for c in _side_conditions(h)]
        return Claim(
            tuple(dict.fromkeys((*hyps, *extra))), m["concl"], tuple(_side_conditions(m["concl"]))
        )
    if ob.method == "arb":
        box = [
            r
            for s, (lo, hi) in m["box"].items()
            for r in (
                sp.GreaterThan(s, _q(lo), evaluate=False),
                sp.LessThan(s, _q(hi), evaluate=False),
            )
        ]
        return Claim(tuple(box), m["concl"], tuple(_side_conditions(m["concl"])))
    if ob.method == "sympy" and "lhs" in m:
        lhs, rhs = sp.sympify(m["lhs"]), sp.sympify(m["rhs"])
        syms = sorted((lhs - rhs).free_symbols | lhs.free_symbols, key=lambda s: s.name)
        dom = []
        for s in syms:
            if s.is_positive:  # unevaluated: sympy would read x > 0 as True
                dom.append(sp.StrictGreaterThan(s, 0, evaluate=False))
            elif s.is_nonnegative:
                dom.append(sp.GreaterThan(s, 0, evaluate=False))
        sides = [*_side_conditions(lhs), *_side_conditions(rhs)]
        return Claim(
            tuple(dict.fromkeys((*dom, *sides))), sp.Eq(lhs, rhs, evaluate=False), (), True
        )
    raise Untranslatable(f"method {ob.method} (no formal claim)", ob.id)


def _q(x: Fraction) -> sp.Rational:
    return sp.Rational(x.numerator, x.denominator)


# ----------------------------------------------------------------------------- atoms
class _Atoms:
    """The non-polynomial terms of a claim as fresh symbols (names -> their Coq text): exp
    terms grouped into powers of one base per argument direction, sqrt, ln, Rabs, Rmax, Rmin."""

    def __init__(self, exprs: Sequence[sp.Basic], names: CoqNames) -> None:
        self.names = names
        self.exp_groups: dict[sp.Expr, list[sp.Rational]] = {}
        for e in exprs:
            for node in sp.preorder_traversal(e):
                if isinstance(node, sp.exp) or (isinstance(node, sp.Pow) and node.base is sp.E):
                    arg = node.args[0] if isinstance(node, sp.exp) else node.exp
                    c, m = _content(arg)
                    self.exp_groups.setdefault(m, []).append(c)
        self.base: dict[sp.Expr, sp.Rational] = {}
        for m, cs in self.exp_groups.items():
            self.base[m] = _rational_gcd(cs)
        self.sym: dict[str, sp.Symbol] = {}  # Coq text -> symbol
        self.facts: list[str] = []  # Coq tactic lines, in dependency order
        self.equations: list[tuple[str, str]] = []  # (name, Coq statement) of exp rewrites
        self.inverted: set[str] = set()

    def atom(self, text: str, fact_lines: Sequence[str] = ()) -> sp.Symbol:
        if text not in self.sym:
            s = sp.Dummy(f"a{len(self.sym)}", real=True)
            self.sym[text] = s
            self.names.names[s] = text
            self.facts.extend(fact_lines)
        return self.sym[text]

    def conv(self, e: sp.Basic) -> sp.Expr:
        """``e`` with its atoms replaced (a rational function of symbols and atoms)."""
        if e.is_Symbol or e.is_Rational:
            return e
        if e is sp.pi or e is sp.E:
            return self.atom(coq_term(e, self.names))
        if isinstance(e, sp.exp) or (isinstance(e, sp.Pow) and e.base is sp.E):
            arg = e.args[0] if isinstance(e, sp.exp) else e.exp
            c, m = _content(arg)
            g = self.base[m]
            k = c / g
            btext = f"(exp {coq_term(g * m, self.names)})"
            b = self.atom(
                btext,
                [
                    f"pose proof (exp_pos {coq_term(g * m, self.names)}).",
                    f"pose proof (exp_ineq1_le {coq_term(g * m, self.names)}).",
                ],
            )
            if k != 1:
                self._exp_equation(coq_term(e, self.names), btext, g * m, arg, int(k))
                at = coq_term(arg, self.names)
                for line in (f"pose proof (exp_pos {at}).", f"pose proof (exp_ineq1_le {at})."):
                    if line not in self.facts:
                        self.facts.append(line)
            return b ** int(k)
        if isinstance(e, sp.Pow) and e.exp.is_Rational and e.exp < 0:
            pos = e.base ** (-e.exp)
            inner = self.conv(pos)
            if not pos.is_number:
                self._inverse_facts(coq_term(pos, self.names))
            return 1 / inner
        if isinstance(e, sp.Pow):
            b, x = e.args
            if x.is_Integer:
                return self.conv(b) ** int(x)
            if x.is_Rational and x.q == 2:
                self.conv(b)  # inner atoms first
                bt = coq_term(b, self.names)
                s = self.atom(
                    f"(sqrt {bt})",
                    [
                        f"pose proof (sqrt_pos {bt}).",
                        f"try (assert (0 <= {bt}) by (first [ assumption | close ]);"
                        f" pose proof (sqrt_sqrt {bt} ltac:(assumption))).",
                        f"try (assert (0 < {bt}) by (first [ assumption | close ]);"
                        f" pose proof (sqrt_lt_R0 {bt} ltac:(assumption))).",
                    ],
                )
                return s ** int(x.p)
            raise Untranslatable(f"power {x}", e)
        if isinstance(e, (sp.Add, sp.Mul)):
            return e.func(*(self.conv(a) for a in e.args))
        if isinstance(e, (sp.log, sp.Abs, sp.Max, sp.Min)):
            for a in e.args:
                self.conv(a)
            return self.atom(coq_term(e, self.names))
        raise Untranslatable(type(e).__name__, e)

    def _inverse_facts(self, dt: str) -> None:
        """/ d > 0 when d > 0 (< 0 when d < 0, by lra only: rare, and a failing nra is the
        slow part), and d * / d = 1 when d <> 0 (each tried)."""
        if dt in self.inverted:
            return
        self.inverted.add(dt)
        self.facts += [
            f"try (assert (0 < {dt}) by (first [ assumption | close ]);"
            f" pose proof (Rinv_0_lt_compat {dt} ltac:(assumption))).",
            f"try (assert ({dt} < 0) by (first [ assumption | lra ]);"
            f" pose proof (Rinv_lt_0_compat {dt} ltac:(assumption))).",
            f"try (assert ({dt} <> 0) by (first [ assumption | close ]);"
            f" pose proof (Rinv_r {dt} ltac:(assumption))).",
        ]

    def _exp_equation(self, etext: str, btext: str, base: sp.Expr, arg: sp.Expr, k: int) -> None:
        name = f"X{len(self.equations) + 1}"
        if any(stmt.startswith(f"{etext} =") for _, stmt in self.equations):
            return
        if k > 0:
            stmt = f"{etext} = {btext} ^ {k}"
            proof = "apply exp_pow; simpl INR; first [ lra | ring | nra ]"
        else:
            stmt = f"{etext} = / {btext} ^ {-k}"
            proof = "apply exp_pow_inv; simpl INR; first [ lra | ring | nra ]"
        self.equations.append((name, stmt))
        self.facts.insert(0, f"assert ({name} : {stmt}) by ({proof}).")


def _content(arg: sp.Expr) -> tuple[sp.Rational, sp.Expr]:
    c, m = sp.sympify(arg).as_content_primitive()
    if m.could_extract_minus_sign():
        c, m = -c, -m
    return sp.Rational(c), m


def _rational_gcd(cs: Sequence[sp.Rational]) -> sp.Rational:
    num = 0
    den = 1
    for c in cs:
        num = gcd(num, abs(int(c.p)))
        den = den * int(c.q) // gcd(den, int(c.q))
    return sp.Rational(num, 1) / den if num else sp.Integer(1)


# ----------------------------------------------------------------------------- scripts
def _fraction(atoms: _Atoms, lhs: sp.Expr, rhs: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """(n, d) with lhs - rhs = n / d over the atoms and d not constant, or None."""
    g = sp.together(atoms.conv(lhs) - atoms.conv(rhs))
    n, d = sp.fraction(g)
    if d.is_number:
        return None
    return sp.factor(n), sp.factor(d)


def _sign_variants(n: sp.Expr, d: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    return [(n, d), (sp.factor(-n), sp.factor(-d))]


MAX_PRODUCT_HINTS = 40


def _hints(atoms: _Atoms, names: CoqNames, claim: Claim) -> list[str]:
    """Facts nra does not find by itself (it multiplies pairs of hypotheses only):
    (x - y)^2 >= 0 and (x + y)^2 >= 0 for each cross term x*y of the goal (AM-GM steps), and
    0 <= each monomial of degree >= 2 in the goal and the hypotheses, and the product of all but
    one of its factors, where every factor is >= 0 by lra (so one more product reaches degree
    3)."""
    out: list[str] = []
    products: dict[str, None] = {}
    for k, r in enumerate((claim.goal, *claim.hyps)):
        if not hasattr(r, "lhs"):
            continue
        num = sp.fraction(sp.together(atoms.conv(r.lhs) - atoms.conv(r.rhs)))[0]
        gens = sorted(num.free_symbols, key=str)
        if not gens:
            continue
        for mono in sp.Poly(sp.expand(num), *gens).monoms():
            used = [g for g, e in zip(gens, mono, strict=True) for _ in range(e)]
            if k == 0 and sum(mono) == 2 and len(set(used)) == 2:
                x, y = (coq_term(g, names) for g in used)
                out += [
                    f"pose proof (pow2_ge_0 ({x} - {y})).",
                    f"pose proof (pow2_ge_0 ({x} + {y})).",
                ]
            if len(used) >= 2:
                products[" * ".join(coq_term(g, names) for g in used)] = None
            if len(used) >= 3:
                for i in range(len(used)):
                    rest = used[:i] + used[i + 1 :]
                    products[" * ".join(coq_term(g, names) for g in rest)] = None
    for p in list(products)[:MAX_PRODUCT_HINTS]:
        out.append(f"try (assert (0 <= {p}) by (repeat apply Rmult_le_pos; lra)).")
    return out


def _goal_script(claim: Claim, atoms: _Atoms, names: CoqNames) -> list[str]:
    r = claim.goal
    t = lambda e: coq_term(e, names)  # noqa: E731
    rw = _rw_in(atoms)
    if isinstance(r, sp.Equality):
        frac = _fraction(atoms, r.lhs, r.rhs)
        if frac is None:
            return [f"{rw}first [ ring | field_close | (split_nonsmooth; close) ]."]
        n, d = frac
        return [
            f"first [ (apply (frac_eq _ _ ({t(n)}) ({t(d)})); [ {_rw(atoms)}field_close"
            f" | {rw}first [ ring | field_close | (split_nonsmooth; close) ] ])"
            f" | ({rw}first [ ring | field_close | (split_nonsmooth; close) ]) ]."
        ]
    if isinstance(r, sp.Unequality):
        return [f"{rw}intro.", "subst_defs; split_nonsmooth; close."]
    return [_ineq_tactic(r, atoms, names) + "."]


def _ineq_tactic(r: sp.Basic, atoms: _Atoms, names: CoqNames) -> str:
    """A tactic for the inequality ``r``: >= and > turned into <= and <; Rmax on the small
    side and Rmin on the large side split into one goal per argument, Rabs on the small side
    into two (Rabs_le, Rabs_def1); then the fraction n/d (the sign of d and of n, factor by
    factor, in both orientations); else case splits and lra/nra."""
    ne = dict(evaluate=False)
    if isinstance(r, sp.GreaterThan):
        return f"(apply Rle_ge; {_ineq_tactic(sp.LessThan(r.rhs, r.lhs, **ne), atoms, names)})"
    if isinstance(r, sp.StrictGreaterThan):
        return (
            f"(apply Rlt_gt; {_ineq_tactic(sp.StrictLessThan(r.rhs, r.lhs, **ne), atoms, names)})"
        )
    if not isinstance(r, (sp.LessThan, sp.StrictLessThan)):
        raise Untranslatable(f"goal {type(r).__name__}", r)
    strict = isinstance(r, sp.StrictLessThan)
    rel = sp.StrictLessThan if strict else sp.LessThan
    sub = lambda a, b: _ineq_tactic(rel(a, b, **ne), atoms, names)  # noqa: E731
    small, big = r.lhs, r.rhs
    tries = []
    if isinstance(small, sp.Max):
        head = sp.Max(*small.args[:-1], **ne) if len(small.args) > 2 else small.args[0]
        lub = "Rmax_lub_lt" if strict else "Rmax_lub"
        tries.append(f"(apply {lub}; [ {sub(head, big)} | {sub(small.args[-1], big)} ])")
    elif isinstance(big, sp.Min):
        head = sp.Min(*big.args[:-1], **ne) if len(big.args) > 2 else big.args[0]
        glb = "Rmin_glb_lt" if strict else "Rmin_glb"
        tries.append(f"(apply {glb}; [ {sub(small, head)} | {sub(small, big.args[-1])} ])")
    elif isinstance(small, sp.Abs):
        a = small.args[0]
        neg = sp.Mul(-1, big, evaluate=False)
        if strict:
            tries.append(f"(apply Rabs_def1; [ {sub(a, big)} | {sub(neg, a)} ])")
        else:
            tries.append(f"(apply Rabs_le; split; [ {sub(neg, a)} | {sub(a, big)} ])")
    frac = _fraction(atoms, small, big)
    if frac is not None:
        t = lambda e: coq_term(e, names)  # noqa: E731
        lemma = "frac_lt" if strict else "frac_le"
        for n, d in _sign_variants(*frac):
            tries.append(
                f"(apply ({lemma} _ _ ({t(n)}) ({t(d)})); [ {_rw(atoms)}field_close"
                f" | {_rw_in(atoms)}sgn | {_rw_in(atoms)}split_nonsmooth; sgn ])"
            )
    tries.append(f"({_rw_in(atoms)}subst_defs; split_nonsmooth; close)")
    return tries[0] if len(tries) == 1 else f"first [ {' | '.join(tries)} ]"


def _rw_in(atoms: _Atoms) -> str:
    """Rewrite every exp term as a power of its group's atom, everywhere (never fails)."""
    return f"rewrite ?{', ?'.join(n for n, _ in atoms.equations)} in *; " if atoms.equations else ""


def _rw(atoms: _Atoms) -> str:
    return f"rewrite ?{', ?'.join(n for n, _ in atoms.equations)}; " if atoms.equations else ""


def _cleared_hyps(claim: Claim, atoms: _Atoms, names: CoqNames, hnames: list[str]) -> list[str]:
    """Each hypothesis with denominators also cleared of them (tried; Coq checks)."""
    out = []
    t = lambda e: coq_term(e, names)  # noqa: E731
    for h, hn in zip(claim.hyps, hnames, strict=True):
        kinds = {
            sp.LessThan: ("clear_le", False),
            sp.StrictLessThan: ("clear_lt", False),
            sp.GreaterThan: ("clear_le", True),
            sp.StrictGreaterThan: ("clear_lt", True),
        }
        kind = next((k for k in kinds if isinstance(h, k)), None)
        if kind is None and not isinstance(h, sp.Equality):
            continue
        if isinstance(h, sp.Equality):
            frac = _fraction(atoms, h.lhs, h.rhs)
            if frac is None:
                continue
            n, d = frac
            out.append(
                f"try (assert ({hn}c : {t(n)} = 0) by (apply (clear_eq _ _ _ ({t(d)}) {hn});"
                f" [ {_rw(atoms)}field_close | close ]))."
            )
            continue
        lemma, flip = kinds[kind]
        l, r = (h.rhs, h.lhs) if flip else (h.lhs, h.rhs)
        frac = _fraction(atoms, l, r)
        if frac is None:
            continue
        op = "<=" if lemma == "clear_le" else "<"
        alts = []
        for n, d in _sign_variants(*frac):
            alts.append(
                f"(assert ({hn}c : {t(n)} {op} 0) by (apply ({lemma} {t(l)} {t(r)} _ ({t(d)})"
                f" {'(Rge_le _ _ ' + hn + ')' if flip and op == '<=' else hn});"
                f" [ {_rw(atoms)}field_close | pos ]))"
            )
        out.append(f"try first [ {' | '.join(alts)} ].")
    return out


def lemma_text(name: str, claim: Claim, comment: str) -> str:
    """The Coq lemma (statement and proof script) of ``claim``; Untranslatable when a term
    has no translation."""
    exprs = [*claim.hyps, claim.goal, *claim.sides]
    syms = set().union(*(e.free_symbols for e in exprs))
    names = CoqNames(syms, integers=claim.integers)
    hyps = [coq_rel(h, names) for h in claim.hyps]
    goal_parts = [coq_rel(s, names) for s in claim.sides] + [coq_rel(claim.goal, names)]
    goal = " /\\ ".join(f"({g})" for g in goal_parts) if claim.sides else goal_parts[0]
    binders = names.binders()
    hnames = [f"H{i + 1}" for i in range(len(hyps))]
    statement = (
        f"Lemma {name} :\n  "
        + (f"forall {binders},\n  " if binders else "")
        + "".join(f"{h} ->\n  " for h in hyps)
        + goal
        + "."
    )
    order = names.order()  # before the atoms join the names
    atoms = _Atoms(exprs, names)
    for e in exprs:
        for side in (e.lhs, e.rhs) if hasattr(e, "lhs") else ():
            atoms.conv(side)
    script = [f"intros {' '.join([*order, *hnames])}."]
    script += atoms.facts
    script += _cleared_hyps(claim, atoms, names, hnames)
    for i, s in enumerate(claim.sides):
        script.append(f"assert (C{i + 1} : {coq_rel(s, names)}) by (split_nonsmooth; close).")
    for i in range(len(claim.sides)):
        script.append(f"refine (conj C{i + 1} _).")
    script += _hints(atoms, names, claim)
    script += _goal_script(claim, atoms, names)
    body = "\n  ".join(script)
    return f"(* {comment} *)\n{statement}\nProof.\n  {body}\nQed.\n"
