"""Facts that several steps cite, packaged as hypotheses with their checked uses (so each
citing step states the same instance the same way)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.methods import Use

__all__ = ["off_event_domain", "per_flip_link"]


def per_flip_link(
    n: sp.Expr, w_: sp.Expr, c_: sp.Expr, beta: sp.Expr, beta2: sp.Expr, dt: sp.Expr
) -> tuple[list[sp.Basic], tuple[Use, ...], dict[str, sp.Expr]]:
    """Cor 4.3's per-flip bound |dT| <= ||w|| C beta beta'/N at an instance, for a step that
    cites it (or cor_4_3.good_event): the hypotheses (with Lemma 2.9's S, bt_L and I as fresh
    symbols), the uses linking them (lemma_2_9.constant_off_readout, cor_4_3.per_flip) and
    the substitution of per_flip's symbols."""
    s_, bt, i_ = sp.symbols("S bt_L I", real=True)
    off = i_ <= c_ * beta * beta2 / n
    flip = sp.Abs(dt) <= w_ * c_ * beta * beta2 / n
    hyps = [s_ >= n, bt >= 0, bt <= c_, i_ <= bt * beta * beta2 / s_, sp.Abs(dt) <= w_ * i_]
    at = {"N": n, "S": s_, "beta": beta, "beta'": beta2, "bt_L": bt, "C": c_, "I": i_}
    subst = {**at, "w": w_, "dT": dt}
    uses = (
        Use("lemma_2_9.constant_off_readout", at, off),
        Use("cor_4_3.per_flip", subst, flip),
    )
    return [*hyps, off, flip], uses, subst


def off_event_domain(
    n: sp.Expr, w_: sp.Expr, c_: sp.Expr, t: sp.Expr, beta: sp.Expr, beta2: sp.Expr
) -> list[sp.Basic]:
    """The domain of a step off the bad event E_N: N >= 1, ||w|| >= 0, C >= 0, and the
    blowups of x and its neighbour x^n in [1, t] (t = N^{zeta/2})."""
    return [n >= 1, w_ >= 0, c_ >= 0, t >= 1, beta >= 1, beta <= t, beta2 >= 1, beta2 <= t]
