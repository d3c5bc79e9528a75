"""Lemma 2.9's residual and MLP step, the recursion and the constant (steps 4-6) as obligations
(docs/derivations.md#lemma-29) (symbols:
:mod:`verify.proofs.influence_terms`)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.influence_terms import (
    FFN_FACTOR,
    W1,
    W2,
    S,
)
from verify.proofs.methods import z3_step
from verify.proofs.positions import Instance, Part, Schema, induction

ST = "Lemma 2.9"
DOC = "docs/derivations.md#lemma-29"

p, qq, c, zu, zv, z, z2, tau, tau2, w = sp.symbols("p q c z_u z_v z z' tau tau' w", real=True)
rho, H, d, e = sp.symbols("rho H d e", real=True)

# ---- step 4: residuals and the MLP
x1, x2 = sp.symbols("x1 x2", real=True)
z3_step(
    "lemma_2_9.relu_lipschitz",
    ST,
    "Step 4: residuals and MLP (ReLU is 1-Lipschitz)",
    DOC,
    [],
    sp.Le(sp.Abs(sp.Max(x1, 0) - sp.Max(x2, 0)), sp.Abs(x1 - x2)),
    sp.Le(sp.Abs(sp.Max(x1, 0) - sp.Max(x2, 0)), sp.Abs(x1 - x2) / 2),
)
h1, h2, dres, dpre, drel, n1, n2 = sp.symbols("h dffn dres dpre drelu W1' W2'", real=True)
z3_step(
    "lemma_2_9.mlp_residual",
    ST,
    "Step 4: residuals and MLP",
    DOC,
    [
        W1 >= 0,
        W2 >= 0,
        h1 >= 0,
        h2 >= 0,
        n1 >= 0,
        n1 <= W1,
        n2 >= 0,
        n2 <= W2,
        dres <= h1 + h2,
        dpre <= n1 * h1,
        drel <= dpre,
        h2 <= n2 * drel,
    ],
    sp.Le(dres, (1 + FFN_FACTOR) * h1),
    sp.Le(dres, (1 + FFN_FACTOR / 2) * h1),
    facts=("lemma_2_9.relu_lipschitz", "axiom.submultiplicative", "axiom.triangle"),
    note="|y + F(y) - y' - F(y')| <= h + dffn (triangle); the first map moves by <= ||W_1|| h,"
    " the ReLU by no more (relu_lipschitz), the second map by <= ||W_2|| times that",
)

# ---- step 5: the recursion's monomials, for every number K of norms: a polynomial with
# non-negative coefficients, of degree <= 1 in each rho_k >= 1, is F(rho) <= F(1, ..., 1) prod_k
# rho_k. Such an F in K + 1 norms is F0 + rho_{K+1} F1, F0 and F1 such polynomials in K norms
# (the terms without and with rho_{K+1}); in 0 norms, a constant c >= 0.
f0, f1, c0, c1, pk, rk1, cst = sp.symbols("F0 F1 C0 C1 P rho c", real=True)
fk, ck = sp.symbols("F C", real=True)


def _bounded(f: sp.Expr, c_: sp.Expr, prod: sp.Expr) -> tuple[sp.Basic, ...]:
    """F <= C P, C = F(1, ..., 1) >= 0, P = prod_k rho_k >= 1."""
    return (sp.Le(f, c_ * prod), sp.Ge(c_, 0), sp.Ge(prod, 1))


r_1, r_2, r_3 = sp.symbols("rho1 rho2 rho3", real=True)
cs = sp.symbols("c0:8", real=True)
_mon = [1, r_1, r_2, r_3, r_1 * r_2, r_1 * r_3, r_2 * r_3, r_1 * r_2 * r_3]
_poly = sum(ci * m for ci, m in zip(cs, _mon, strict=True))
induction(
    "lemma_2_9.recursion_monomials",
    ST,
    "Step 5: recursion",
    DOC,
    (
        Part("base K = 0", (cst >= 0,), _bounded(cst, cst, sp.S.One)),
        Part(
            "step K -> K + 1",
            (*_bounded(f0, c0, pk), *_bounded(f1, c1, pk), rk1 >= 1),
            _bounded(f0 + rk1 * f1, c0 + c1, pk * rk1),
        ),
    ),
    Instance(
        3,
        (r_1 >= 1, r_2 >= 1, r_3 >= 1, *(ci >= 0 for ci in cs)),
        sp.Le(_poly, sum(cs) * r_1 * r_2 * r_3),
        sp.Le(_poly, sum(cs[1:]) * r_1 * r_2 * r_3),
        "K",
    ),
    "every K >= 0 norms rho_1..rho_K >= 1 and every polynomial F with non-negative coefficients"
    " and degree <= 1 in each rho_k: F(rho) <= F(1, ..., 1) prod_k rho_k [induction on K:"
    " F = F0 + rho_{K+1} F1 with F0, F1 in K norms; invariant F <= C P, C = F(1, ..., 1) >= 0,"
    " P = prod_k rho_k >= 1; base K = 0 (F = c), step K -> K + 1]",
    schema=Schema(
        (),
        sp.Le(fk, ck * pk),
        {
            "F": "F(rho_1, ..., rho_K), non-negative coefficients, degree <= 1 in each rho_k >= 1",
            "C": "F(1, ..., 1)",
            "P": "prod_k rho_k",
        },
    ),
)

mono, prod_, rk = sp.symbols("m P rho_k", real=True)
z3_step(
    "lemma_2_9.recursion_induction",
    ST,
    "Step 5: recursion",
    DOC,
    [mono >= 0, mono <= prod_, rk >= 1],
    sp.Le(sp.Max(mono, mono * rk), prod_ * rk),
    sp.Le(sp.Max(mono, mono * rk), prod_ * rk / 2),
    note="induction over the norms: a monomial m <= P = rho_1...rho_{k-1} stays below P rho_k"
    " whether or not it contains rho_k (any number of norms)",
)

# ---- step 6: the constant
beta, beta2, cc, nn, at, bt_, ii = sp.symbols("beta beta' C N a_L bt_L I", real=True)
z3_step(
    "lemma_2_9.constant_off_readout",
    ST,
    "Step 6: the constant",
    DOC,
    [nn >= 1, S >= nn, beta >= 1, beta2 >= 1, bt_ >= 0, bt_ <= cc, ii <= bt_ * beta * beta2 / S],
    sp.Le(ii, cc * beta * beta2 / nn),
    sp.Le(ii, cc * beta * beta2 / (2 * nn)),
)
z3_step(
    "lemma_2_9.constant_at_readout",
    ST,
    "Step 6: the constant",
    DOC,
    [nn >= 1, beta >= 1, beta2 >= 1, at >= 0, at <= cc, ii <= at * beta * beta2],
    sp.Le(ii, cc * beta * beta2 * (1 + 1 / nn)),
    sp.Le(ii, cc * beta * beta2 * (1 + 1 / nn) / 2),
)
