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

    def __init__(self, n_heads: int, length: int | None = None) -> None:
        self.n_heads, self.length = n_heads, length

    def __len__(self) -> int:
        if self.length is None:
            raise TypeError("a symbolic number of layers has no length")
        return self.length

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

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


def symbolic_norms(
    n_heads: int, norm_first: bool, n_layers: Any = None, d_model: Any = D, **config: Any
) -> Any:
    """A norm summary whose every norm is a positive symbol (D, d_h symbols too); L symbolic
    (an :class:`Index` >= 1) unless given."""
    from verify.theory.norms import ParamNorms

    length = n_layers if isinstance(n_layers, int) else None
    n_layers = Index(L_SYM, 1) if n_layers is None else n_layers
    cfg = SimpleNamespace(
        d_model=d_model, d_head=DH, n_layers=n_layers, norm_first=norm_first, **config
    )
    s = sp.symbols("token_diff emb_max gf nf w omega", **_POS)
    return ParamNorms(cfg, s[0], s[1], _Layers(n_heads, length), *s[2:])


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


# ---- Cor 3.3 and Cor 3.4: ||w|| C_infl (1 + eps^{-1/2})^{2K} (/ (2 xi)), C_infl's recursion at L
# bound to the hypothesis (A, Bt) as in its end case, K read through ModelConfig.n_norms
EPS, XI = sp.symbols("epsilon xi", **_POS)


def _cor_3_3_norms(n_heads: int, pre: bool) -> Any:
    from verify.model import ModelConfig

    nm = symbolic_norms(n_heads, pre)
    cfg = nm.config
    cfg.ln_eps, cfg.eos, cfg.final_norm = EPS, True, pre
    cfg.n_norms = ModelConfig.n_norms.fget(SimpleNamespace(n_layers=L_SYM, final_norm=pre))
    return nm


def _cor_3_3_composed(nm: Any, pre: bool) -> sp.Expr:
    k = 2 * L_SYM + int(pre)  # K: two norms per layer, plus the final norm pre-LN
    c_infl = sp.Max(*c_infl_end(nm, A, BT, SymArith))
    return nm.w * c_infl * (1 + EPS ** sp.Rational(-1, 2)) ** (2 * k)  # cor_3_3.compose


def _cor_cases(ob_id: str, xi: bool, log10: bool = True) -> Iterator[SymCase]:
    """Cor 3.3's bound (``xi`` False); Cor 3.4's N* = bound / (2 xi), as its log10 or itself."""
    for h in HEADS:
        for pre in (False, True):
            nm = _cor_3_3_norms(h, pre)
            fn = _fn(ob_id, CODE[ob_id].split(":")[1])
            hyp = {"_c_infl_stack_mp": _hypothesis(nm, nm.config.n_layers)}
            comp = _cor_3_3_composed(nm, pre)
            yield (
                {"H": str(h), "norm_first": str(pre), "case": "C_infl's recursion at L"},
                (lambda nm=nm, fn=fn, hyp=hyp: symbolic(fn, hyp)(nm, XI)) if xi
                else (lambda nm=nm, fn=fn, hyp=hyp: symbolic(fn, hyp)(nm)),
                (lambda c=comp: sp.log(c / (2 * XI)) / sp.log(10)) if xi and log10
                else (lambda c=comp: c / (2 * XI)) if xi else (lambda c=comp: c),
            )  # fmt: skip


_COR_DOMAIN = "L >= 1, every norm >= 0, D, d_h, eps > 0, post-LN and pre-LN, H in " + str(HEADS)
symbolic_step(
    "cor_3_3.chain_bound",
    "Cor 3.3",
    "Derivation",
    "docs/derivations.md#cor-33",
    lambda: _cor_cases("cor_3_3.chain_bound", xi=False),
    _COR_DOMAIN,
    facts=("lemma_2_9.chain_parameter_norms", "cor_3_3.compose", "lemma_2_9.chain_c_infl"),
    evidence="sizes",
)
symbolic_step(
    "cor_3_4.chain_n_star",
    "Cor 3.4",
    "Derivation",
    "docs/derivations.md#cor-34",
    lambda: _cor_cases("cor_3_4.chain_n_star", xi=True),
    _COR_DOMAIN + ", xi > 0",
    facts=("lemma_2_9.chain_parameter_norms", "cor_3_4.n_star", "lemma_2_9.chain_c_infl"),
    evidence="sizes",
)
symbolic_step(
    "cor_3_4.chain_n_star_value",
    "Cor 3.4",
    "Derivation",
    "docs/derivations.md#cor-34",
    lambda: _cor_cases("cor_3_4.chain_n_star_value", xi=True, log10=False),
    _COR_DOMAIN + ", xi > 0",
    facts=("cor_3_4.chain_n_star",),
    evidence="sizes",
)


# ---- Lemma 3.1: C_Lip's per-group coefficients and C_Lip, on symbolic norms (an instance in
# the sizes: L = 1, 2 layers, H = 1, 2 heads; every norm, D = E + 1, d_h, eps symbolic)
LIP_LAYERS, LIP_HEADS = (1, 2), (1, 2)
E_SYM = sp.Symbol("E", positive=True, integer=True)


def _lip_cases(ob_id: str, total: bool) -> Iterator[SymCase]:
    from verify.proofs.compose import lipschitz_form

    for n_layers in LIP_LAYERS:
        for h in LIP_HEADS:
            for pre in (False, True):
                for affine, pos in ((True, "learned"), (False, "none")):
                    nm = symbolic_norms(
                        h, pre, n_layers, E_SYM + 1, ln_eps=EPS, ln_affine=affine,
                        pos_encoding=pos,
                    )  # fmt: skip
                    fn = _fn(ob_id, CODE[ob_id].split(":")[1])
                    dom = {"L": str(n_layers), "H": str(h), "norm_first": str(pre),
                           "ln_affine": str(affine), "pos_encoding": pos}  # fmt: skip

                    memo: dict[str, Any] = {}

                    def parts(nm: Any = nm, fn: Any = fn, memo: dict = memo) -> tuple:
                        """(coded dict, composed dict, every group of either)."""
                        if not memo:
                            memo["code"] = {} if total else symbolic(fn)(nm)
                            memo["comp"] = {k: v for k, v in lipschitz_form(nm, SymArith).items()
                                            if v != 0}  # fmt: skip
                        return memo["code"], memo["comp"], sorted({*memo["code"], *memo["comp"]})

                    def coded(parts: Any = parts, fn: Any = fn, nm: Any = nm) -> Any:
                        if total:
                            return symbolic(fn)(nm)
                        got, _, keys = parts()  # a group missing here differs from any value
                        return tuple(got.get(k, sp.Symbol(f"missing {k}")) for k in keys)

                    def comp(parts: Any = parts) -> Any:
                        _, form, keys = parts()
                        if total:  # lemma_3_1.group_combine: sqrt(sum_g L_g^2)
                            return sp.sqrt(sp.Add(*(v**2 for v in form.values())))
                        return tuple(form.get(k, sp.Symbol(f"not composed {k}")) for k in keys)

                    yield dom, coded, comp


_LIP_DOMAIN = (
    "every norm >= 0, D >= 2, d_h, eps > 0, post-LN and pre-LN, affine or not, learned or no"
    f" positions, L in {LIP_LAYERS}, H in {LIP_HEADS}"
)
symbolic_step(
    "lemma_3_1.chain_coefficients",
    "Lemma 3.1",
    "Step 5: the constant",
    "docs/derivations.md#lemma-31",
    lambda: _lip_cases("lemma_3_1.chain_coefficients", total=False),
    _LIP_DOMAIN,
    facts=(
        "lemma_2_9.chain_parameter_norms",
        "lemma_3_1.ln_step",
        "lemma_3_1.value_term",
        "lemma_3_1.reweighting",
        "lemma_3_1.head_output",
        "lemma_3_1.ffn_identity",
        "lemma_3_1.readout_identity",
        "lemma_3_1.out_proj_identity",
        "axiom.triangle",
    ),
    evidence="sizes",
)
symbolic_step(
    "lemma_3_1.chain_c_lip",
    "Lemma 3.1",
    "Step 5: the constant",
    "docs/derivations.md#lemma-31",
    lambda: _lip_cases("lemma_3_1.chain_c_lip", total=True),
    _LIP_DOMAIN,
    facts=("lemma_3_1.group_combine", "lemma_3_1.chain_coefficients"),
    evidence="sizes",
)


# ---- Lemma 3.2's tightness bound: prod_k (1 + (B_k^2 / D + eps)^{-1/2}), B_k the coded bounds
# on the norms' inputs (lemma_3_2.variance_le_norm: var <= B_k^2 / D), on symbolic norms
def _beta_lower_cases() -> Iterator[SymCase]:
    ob_id = "lemma_3_2.chain_beta_lower"
    for n_layers in LIP_LAYERS:
        for h in LIP_HEADS:
            for pre in (False, True):
                nm = symbolic_norms(h, pre, n_layers, ln_eps=EPS)
                fn = _fn(ob_id, CODE[ob_id].split(":")[1])
                bounds_k = _fn(ob_id, "ln_input_norm_bounds")

                def comp(nm: Any = nm, bounds_k: Any = bounds_k) -> sp.Expr:
                    out = sp.S.One
                    for b in symbolic(bounds_k)(nm):
                        out *= 1 + (b**2 / D + EPS) ** sp.Rational(-1, 2)
                    return out

                dom = {"L": str(n_layers), "H": str(h), "norm_first": str(pre)}
                yield dom, (lambda nm=nm, fn=fn: symbolic(fn)(nm)), comp


symbolic_step(
    "lemma_3_2.chain_beta_lower",
    "Lemma 3.2",
    "Tightness: var <= B_k^2 / D",
    "docs/derivations.md#lemma-32",
    _beta_lower_cases,
    f"every norm >= 0, D, d_h, eps > 0, post-LN and pre-LN, L in {LIP_LAYERS}, H in {LIP_HEADS}",
    facts=("lemma_3_2.variance_le_norm",),
    evidence="sizes",
)
