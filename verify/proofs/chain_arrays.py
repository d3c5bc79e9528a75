"""The chain to the code for what runs on arrays, proved on symbols for every length: the
trivial bounds (a model's readout and last layer norm: D entries, every D and L, post- and
pre-LN, affine or not) and H&R Cor 5's mean over strings and omega_f (m strings or classes,
every m, with or without weights). The code runs on vectors of symbolic length
(:mod:`verify.proofs.symbolic_arrays`); the compositions are the step expressions of
:mod:`verify.proofs.corollaries` with their quantities written out from their definitions
(a = ||w * g||_2, c = w . b + omega, G = max_i |g_i|, E[beta^2 omega_f]).

The layout is part of the composition, not read from the code: the readout reads the last layer
norm, norm2 of layer L - 1 post-LN and the final norm pre-LN (``layers.{L - 1}.norm2``,
``final_norm``), with gain 1 and bias 0 without ``ln_affine``; code reading another array
gets other symbols, and the chain fails."""

from __future__ import annotations

from collections.abc import Iterator
from types import MethodType, SimpleNamespace
from typing import Any

import sympy as sp

from verify.proofs import corollaries as co
from verify.proofs.symbolic import SymCase, sub, symbolic_step
from verify.proofs.symbolic_arrays import INDEX, MAX_ENTRY, SymParams, SymVec, symbolic_np

__all__: list[str] = []

D, L, M, N = (sp.Symbol(n, positive=True, integer=True) for n in ("D", "L", "m", "N"))
W, C, LG = sp.Symbol("w", positive=True), sp.Symbol("C", positive=True), sp.Symbol("lg", real=True)
AS, NE = sp.Symbol("a_s", nonnegative=True), sp.Symbol("n_e", positive=True)
DOC5 = "docs/derivations_hahn_rofin.md#cor-5"


def _sym(ob_id: str) -> Any:
    from verify.proofs.chain_code import code

    return symbolic_np(code(ob_id))


def _config(norm_first: bool, affine: bool) -> SimpleNamespace:
    """The spec layout (post-LN without, pre-LN with a final norm) at symbolic D and L; its
    layout check is ModelConfig's own."""
    from verify.model import ModelConfig

    cfg = SimpleNamespace(d_model=D, n_layers=L, norm_first=norm_first, final_norm=norm_first,
                          ln_affine=affine, ln_form="torch")  # fmt: skip
    cfg.spec_layout = ModelConfig.spec_layout.fget(cfg)
    cfg.papers_model = ModelConfig.papers_model.fget(cfg)
    cfg.require_spec_layout = MethodType(ModelConfig.require_spec_layout, cfg)
    return cfg


def _last_norm(norm_first: bool) -> str:
    return "final_norm" if norm_first else f"layers.{L - 1}.norm2"


def _params(norm_first: bool, affine: bool) -> SymParams:
    return SymParams(_config(norm_first, affine), D, ("readout.bias",))


def _gain_bias(norm_first: bool, affine: bool) -> tuple[sp.Expr, sp.Expr]:
    """The readout's layer norm's i-th gain and bias."""
    if not affine:
        return sp.S.One, sp.S.Zero
    last = _last_norm(norm_first)
    return SymParams.entry(f"{last}.weight"), SymParams.entry(f"{last}.bias")


def _sum(entry: sp.Expr, n: sp.Expr = D) -> sp.Expr:
    return sp.Sum(entry, (INDEX, 0, n - 1))


def _w() -> sp.Expr:
    return SymParams.entry("readout.weight")


def _swing(nf: bool, aff: bool) -> sp.Expr:
    g, _ = _gain_bias(nf, aff)
    return sub(co.SWING, D=D, a=sp.sqrt(_sum((_w() * g) ** 2)))  # a = ||w * g||_2


def _abs_bound(nf: bool, aff: bool) -> sp.Expr:
    g, b = _gain_bias(nf, aff)
    c = _sum(_w() * b) + sp.Symbol("readout.bias", real=True)  # c = w . b + omega
    return sub(co.ABS_BOUND, D=D, a=sp.sqrt(_sum((_w() * g) ** 2)), c=c)


def _readout_swing(nf: bool, aff: bool) -> sp.Expr:
    g, _ = _gain_bias(nf, aff)
    big_g = MAX_ENTRY(sp.Lambda(INDEX, sp.Abs(g)), D) if aff else sp.S.One  # G = max_i |g_i|
    return sub(co.READOUT_SWING, D=D, G=big_g)


def _layouts(ob_id: str, composed, *extra: Any) -> Iterator[SymCase]:
    for nf in (False, True):
        for aff in (False, True):
            yield (
                {"D": "D", "L": "L", "norm_first": str(nf), "ln_affine": str(aff)},
                lambda nf=nf, aff=aff: _sym(ob_id)(_params(nf, aff), *extra),
                lambda nf=nf, aff=aff: composed(nf, aff),
            )


_TB_DOMAIN = "integer D, L >= 1, every readout and last-norm entry, post- and pre-LN, affine or not"
_TABLE = [
    ("trivial_bounds.chain_output_swing", "Output swing",
     lambda: _layouts("trivial_bounds.chain_output_swing", _swing),
     _TB_DOMAIN, ("trivial_bounds.output_swing",)),
    ("trivial_bounds.chain_output_abs", "Output swing",
     lambda: _layouts("trivial_bounds.chain_output_abs", _abs_bound),
     _TB_DOMAIN, ("trivial_bounds.output_abs",)),
    ("trivial_bounds.chain_readout_swing", "Output swing",
     lambda: _layouts("trivial_bounds.chain_readout_swing", _readout_swing),
     _TB_DOMAIN, ("trivial_bounds.readout_swing",)),
    ("trivial_bounds.chain_sensitivity_swing", "H&R Cor 5's left side",
     lambda: _layouts("trivial_bounds.chain_sensitivity_swing",
                      lambda nf, aff: sub(co.SENSITIVITY, S=_swing(nf, aff), a_s=AS, n_e=NE),
                      AS, NE),
     _TB_DOMAIN + ", as_N >= 0, n_edges > 0", ("trivial_bounds.sensitivity_swing",)),
]  # fmt: skip
for _id, _step, _cases, _dom, _facts in _TABLE:
    symbolic_step(_id, "Trivial bounds", _step, co.DOC0, _cases, _dom, facts=_facts)


# ----------------------------------------------------------------------------- H&R Cor 5
def _vec(name: str, **assumptions: Any) -> tuple[SymVec, sp.Expr]:
    e = sp.IndexedBase(name, **assumptions)[INDEX]
    return SymVec(e, M), e


def _mean_cases(ob_id: str, outer) -> Iterator[SymCase]:
    """E[beta^2 omega_f] over m strings (the mean) or m classes with weights p_i (the weighted
    mean sum p_i x_i / sum p_i), composed into ``outer(mean)``."""
    beta, b = _vec("beta", positive=True)
    omega, o = _vec("omega", nonnegative=True)
    probs, p = _vec("p", positive=True)
    yield (
        {"m": "m strings"},
        lambda: _sym(ob_id)(W, *outer.args, beta, omega),
        lambda: outer.of(_sum(b**2 * o, M) / M),
    )
    yield (
        {"m": "m classes, weights p_i > 0"},
        lambda: _sym(ob_id)(W, *outer.args, beta, omega, probs),
        lambda: outer.of(_sum(p * b**2 * o, M) / _sum(p, M)),
    )


def _omega_cases() -> Iterator[SymCase]:
    ns, n_s = _vec("n_sensitive", nonnegative=True, integer=True)
    rs, r_s = _vec("readout_sensitive", nonnegative=True, integer=True)
    yield (
        {"N": "N", "m": "m strings"},
        lambda: _entry(_sym("hr_cor_5.chain_omega")(ns, rs, N)),
        lambda: n_s / N + r_s,  # Lemma 2.9's weight 1/N + delta_{r,n} summed over S_f(x)
    )


def _entry(v: Any) -> Any:
    """The i-th entry of a vector of length m (anything else is returned, to fail the case)."""
    if isinstance(v, SymVec) and sp.simplify(v.n - M) == 0:
        return v.entry
    return v


_BOUND = SimpleNamespace(args=(C,), of=lambda mean: W * C * mean)  # hr_cor_5.average: w C B
_LOG10 = SimpleNamespace(args=(LG,), of=lambda mean: sp.log(W * mean) / sp.log(10) + LG)
_TABLE5 = [
    ("hr_cor_5.chain_bound", "Derivation, 6: together",
     lambda: _mean_cases("hr_cor_5.chain_bound", _BOUND),
     "||w||, C > 0, every m >= 1 and beta_i > 0, omega_i >= 0, weights p_i > 0 or none",
     ("hr_cor_5.average",)),
    ("hr_cor_5.chain_log10_bound", "Derivation, 6: together",
     lambda: _mean_cases("hr_cor_5.chain_log10_bound", _LOG10),
     "||w|| > 0, real log10 C, every m >= 1 and beta_i > 0, omega_i >= 0, weights p_i > 0 or"
     " none", ("hr_cor_5.average", "hr_cor_5.chain_bound", "axiom.log_monotone")),
    ("hr_cor_5.chain_omega", "Derivation, 5: the involution (x, n) -> (x^n, n) and omega_f",
     _omega_cases, "integer N >= 1, every m and integer |S_f(x)|, [r in S_f(x)] >= 0",
     ("hr_cor_5.edge_symmetry",)),
]  # fmt: skip
for _id, _step, _cases, _dom, _facts in _TABLE5:
    symbolic_step(_id, "H&R Cor 5", _step, DOC5, _cases, _dom, facts=_facts)
