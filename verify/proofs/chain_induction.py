"""C_infl's chain to the code for every L, by induction on the code's own recursion.

The code (``verify.theory.bounds``) computes (a_L, bt_L) by the recursion
``_c_infl_stack_mp(nm, n) = _c_infl_layer_mp(nm, n - 1, _c_infl_stack_mp(nm, n - 1))`` from
``_c_infl_stack_mp(nm, 0)``, then the final norm (``_c_infl_parts_mp``). The composition of the
steps (:mod:`verify.proofs.compose`: start, each layer, end) is evaluated symbolically and
compared with the code evaluated on symbols (:mod:`verify.proofs.symbolic`) over a norm summary
whose every norm is a symbol (layer ``i``'s norms are symbols indexed by ``i``, any index
expression), D and d_h symbols:

- start: the code's stack at n = 0 equals the composition's start;
- step, n = 1 and n = m + 2 (m >= 0 symbolic): the code's stack at n, its recursive call bound to
  the hypothesis (A, Bt) (arbitrary symbols; the call must be at (nm, n - 1)), equals the
  composition's layer n - 1 applied to (A, Bt);
- end: the coded (a_L, bt_L) (``c_infl_parts``), its stack at L (symbolic) bound to (A, Bt),
  equals the composition's end applied to (A, Bt); C_infl (``c_infl``) its max.

Hence the code equals the composition for every L >= 1 (induction on n), every norm, D and d_h,
post-LN and pre-LN. The heads are a Python list: H = 1, 2, 3 heads are cases (an instance in H:
every H the toolkit's configurations and seeded models use, docs/proofs.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import sympy as sp

from verify.proofs.chain import CODE
from verify.proofs.compose import SymArith, c_infl_end, c_infl_layer, c_infl_start
from verify.proofs.symbolic import SymCase, symbolic, symbolic_step

__all__ = ["HEADS", "symbolic_norms"]

HEADS = (1, 2, 3)
_POS = {"positive": True}
D, DH = sp.symbols("D d_h", **_POS)
L_SYM = sp.Symbol("L", positive=True, integer=True)
M = sp.Symbol("m", nonnegative=True, integer=True)
A, BT = sp.symbols("A Bt", **_POS)


class Index:
    """A symbolic layer index or count known only to be an integer >= ``low``: arithmetic by
    an integer and comparisons its bound decides; any other comparison raises TypeError (so code
    that branches on which layer it is cannot pass the induction step silently)."""

    def __init__(self, expr: sp.Expr, low: int) -> None:
        self.expr, self.low = sp.sympify(expr), low

    def __sub__(self, k: int) -> Index:
        return Index(self.expr - k, self.low - k)

    def __add__(self, k: int) -> Index:
        return Index(self.expr + k, self.low + k)

    def _undecided(self, op: str, other: Any) -> TypeError:
        return TypeError(f"undecided: {self.expr} {op} {other} for an integer >= {self.low}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and other < self.low:
            return False
        raise self._undecided("==", other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __lt__(self, other: int) -> bool:
        if other <= self.low:
            return False
        raise self._undecided("<", other)

    def __ge__(self, other: int) -> bool:
        return not self < other

    def __gt__(self, other: int) -> bool:
        if other < self.low:
            return True
        raise self._undecided(">", other)

    def __le__(self, other: int) -> bool:
        return not self > other

    def __hash__(self) -> int:
        return hash(self.expr)

    def __str__(self) -> str:
        return str(self.expr)

    __repr__ = __str__


class _Layers:
    """``nm.layers`` of a symbolic summary: layer i's norms are symbols indexed by i."""

    def __init__(self, n_heads: int) -> None:
        self.n_heads = n_heads

    def __getitem__(self, i: Any) -> Any:
        from verify.theory.norms import HeadNorms, LayerNorms

        def sym(name: str) -> sp.Symbol:
            return sp.Symbol(f"{name}[{i}]", **_POS)

        heads = tuple(
            HeadNorms(*(sym(f"{n}{h}") for n in ("wq", "wk", "wv", "bq", "bk", "bv")))
            for h in range(self.n_heads)
        )
        names = ("wo", "bo", "w1", "b1", "w2", "b2", "g1", "n1", "g2", "n2")
        return LayerNorms(heads, *(sym(n) for n in names))


def symbolic_norms(n_heads: int, norm_first: bool, n_layers: Any = None) -> Any:
    """A norm summary whose every norm is a positive symbol (D, d_h symbols too)."""
    from verify.theory.norms import ParamNorms

    n_layers = Index(L_SYM, 1) if n_layers is None else n_layers
    cfg = SimpleNamespace(d_model=D, d_head=DH, n_layers=n_layers, norm_first=norm_first)
    s = sp.symbols("token_diff emb_max gf nf w omega", **_POS)
    return ParamNorms(cfg, s[0], s[1], _Layers(n_heads), *s[2:])


def _hypothesis(nm: Any, at: Any) -> Any:
    """The induction hypothesis: the recursive call, which must be at (nm, ``at``)."""

    def stack(nm_: Any, n: Any) -> tuple[sp.Expr, sp.Expr]:
        n = n.expr if isinstance(n, Index) else n
        at_ = at.expr if isinstance(at, Index) else at
        if nm_ is not nm or sp.simplify(sp.sympify(n) - at_) != 0:
            raise ValueError(f"the recursion is called at {n}, not at {at}")
        return A, BT

    return stack


def _fn(ob_id: str, name: str) -> Any:
    """A function of the module of ``ob_id``'s coded function (its recursion), looked up now."""
    return getattr(importlib.import_module(CODE[ob_id].split(":")[0]), name)


def _cases(ob_id: str, final: Any, steps: bool = True) -> Iterator[SymCase]:
    """The induction's cases for C_infl's parts (``final``: the coded end to its composition);
    ``steps=False``: the end only (the recursion is lemma_2_9.chain_c_infl's)."""
    for h in HEADS:
        for pre in (False, True):
            nm = symbolic_norms(h, pre)
            dom = {"H": str(h), "norm_first": str(pre)}
            stack = _fn(ob_id, "_c_infl_stack_mp")
            if steps:
                yield from _steps(nm, dom, stack)
            yield (
                {**dom, "case": "end, n = L"},
                lambda nm=nm: symbolic(
                    _fn(ob_id, CODE[ob_id].split(":")[1]),
                    {"_c_infl_stack_mp": _hypothesis(nm, nm.config.n_layers)},
                )(nm),
                lambda nm=nm: final(c_infl_end(nm, A, BT, SymArith)),
            )


def _steps(nm: Any, dom: dict[str, str], stack: Any) -> Iterator[SymCase]:
    """The recursion's start and step (n = 1; n = m + 2)."""
    yield (
        {**dom, "case": "start, n = 0"},
        lambda: symbolic(stack)(nm, 0),
        lambda: c_infl_start(nm, SymArith),
    )
    for n, i in ((1, 0), (Index(M + 2, 2), Index(M + 1, 1))):
        yield (
            {**dom, "case": f"step, n = {n}"},
            lambda n=n, i=i: symbolic(stack, {"_c_infl_stack_mp": _hypothesis(nm, i)})(nm, n),
            lambda i=i: c_infl_layer(nm, i if isinstance(i, int) else i.expr, A, BT, SymArith),
        )


_DOMAIN = (
    "L >= 1 (induction on the code's recursion), every norm >= 0, D, d_h > 0, post-LN and"
    f" pre-LN, H in {HEADS}"
)
symbolic_step(
    "lemma_2_9.chain_c_infl",
    "Lemma 2.9",
    "Step 6: the constant",
    "docs/derivations.md#lemma-29",
    lambda: _cases("lemma_2_9.chain_c_infl", lambda parts: parts),
    _DOMAIN,
    facts=(
        "lemma_2_9.chain_parameter_norms",
        "lemma_2_9.ln_factor",
        "lemma_2_9.other_position",
        "lemma_2_9.flip_position",
        "lemma_2_9.mlp_residual",
        "lemma_2_9.recursion_monomials",
        "axiom.triangle",
        "lemma_2_9.softmax_weight_simple",
        "axiom.positionwise_embedding",
    ),
    evidence="sizes",
)
symbolic_step(
    "lemma_2_9.chain_c_infl_value",
    "Lemma 2.9",
    "Step 6: the constant",
    "docs/derivations.md#lemma-29",
    lambda: _cases("lemma_2_9.chain_c_infl_value", lambda parts: sp.Max(*parts), steps=False),
    _DOMAIN,
    facts=(
        "lemma_2_9.chain_c_infl",
        "lemma_2_9.constant_off_readout",
        "lemma_2_9.constant_at_readout",
    ),
    evidence="sizes",
)
