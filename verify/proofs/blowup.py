"""Lemma 3.2, Cor 3.3, Cor 3.4 and Prop 3.5: derivation steps as obligations
(docs/derivations.md#lemma-32 ... #prop-35)."""

from __future__ import annotations

import sympy as sp

from verify.proofs.finite_products import product_bound
from verify.proofs.methods import Use, sympy_identity, z3_step

__all__ = ["COR_3_3", "M_BETA"]

var, eps, D, bb = sp.symbols("var epsilon D B_k", real=True)

# ---- Lemma 3.2
DOC32 = "docs/derivations.md#lemma-32"
t1, m = sp.symbols("tau1 m", real=True)
_ZMAX = eps ** sp.Rational(-1, 2)


def _z(v: sp.Expr) -> sp.Expr:
    """A norm's factor z = (var + eps)^{-1/2} (tau = 1 + z)."""
    return (v + eps) ** sp.Rational(-1, 2)


M_BETA = m  # Lemma 3.2's bound (1 + eps^{-1/2})^K on each beta (cor_3_3.compose)
z3_step(
    "lemma_3_2.z_max",
    "Lemma 3.2",
    "Derivation: z <= eps^{-1/2}",
    DOC32,
    [var >= 0, eps > 0],
    sp.Le((var + eps) ** sp.Rational(-1, 2), eps ** sp.Rational(-1, 2)),
    sp.Le((var + eps) ** sp.Rational(-1, 2), eps ** sp.Rational(-1, 2) / 2),
)
product_bound(
    "lemma_3_2.product",
    "Lemma 3.2",
    "Derivation: K factors tau^k <= 1 + eps^{-1/2}",
    DOC32,
    1 + m,
    (m >= 0,),
    facts=("lemma_3_2.z_max",),
    note="m = eps^{-1/2}; K = the number of layer norms, any K",
)
pk, ak = sp.symbols("P_k A_k", real=True)
z3_step(
    "lemma_3_2.product_induction",
    "Lemma 3.2",
    "Derivation: K factors tau^k <= 1 + eps^{-1/2}",
    DOC32,
    [
        var >= 0,
        eps > 0,
        sp.Eq(m, _ZMAX),
        pk >= 0,
        pk <= ak,
        t1 >= 1,
        t1 <= 1 + _z(var),
        _z(var) <= _ZMAX,
    ],
    sp.Le(pk * t1, ak * (1 + m)),
    sp.Le(pk * t1, ak * (1 + m) / 2),
    uses=(Use("lemma_3_2.z_max", {"var": var, "epsilon": eps}, _z(var) <= _ZMAX),),
    note="induction over K: P_k = tau_1...tau_k <= A_k = (1 + m)^k gives P_{k+1} <= A_{k+1},"
    " m = eps^{-1/2}; the new factor tau_{k+1} <= 1 + z, z <= m (z_max)",
)
nd = sp.symbols("nd", real=True)
z3_step(
    "lemma_3_2.variance_le_norm",
    "Lemma 3.2",
    "Tightness: var <= B_k^2 / D",
    DOC32,
    [D >= 1, nd >= 0, var >= 0, var * D <= nd**2, nd <= bb],
    sp.Le(var, bb**2 / D),
    sp.Le(var, bb**2 / (2 * D)),
    facts=("axiom.projection_contraction", "small_ball.variance_projection"),
)

# ---- Cor 3.3, Cor 3.4
wn, cinf, bet, bet2, nn, dt, inf_, xi = sp.symbols("w C beta beta' N dT I xi", real=True)
# m = (1 + eps^{-1/2})^K: the exponent of (1 + eps^{-1/2}) is 2K
COR_3_3 = wn * cinf * m**2 / nn
_S, _bt = sp.symbols("S bt_L", real=True)  # positions, the recursion's coefficient (Lemma 2.9)
_COMPOSE_HYPS = [
    nn >= 1,
    wn >= 0,
    cinf >= 0,
    m >= 0,
    bet >= 1,
    bet2 >= 1,
    bet <= m,
    bet2 <= m,
    _S >= nn,
    _bt >= 0,
    _bt <= cinf,
    inf_ <= _bt * bet * bet2 / _S,
    sp.Abs(dt) <= wn * inf_,
    inf_ <= cinf * bet * bet2 / nn,
]
_OFF_READOUT = Use(
    "lemma_2_9.constant_off_readout",
    {"N": nn, "S": _S, "beta": bet, "beta'": bet2, "bt_L": _bt, "C": cinf, "I": inf_},
    inf_ <= cinf * bet * bet2 / nn,
)
z3_step(
    "cor_3_3.compose",
    "Cor 3.3",
    "Derivation",
    "docs/derivations.md#cor-33",
    _COMPOSE_HYPS,
    sp.Le(sp.Abs(dt), COR_3_3),
    sp.Le(sp.Abs(dt), wn * cinf * m / nn),
    facts=("axiom.cauchy_schwarz", "lemma_3_2.product"),
    uses=(_OFF_READOUT,),
    note="m = (1 + eps^{-1/2})^K, Lemma 3.2's bound on beta",
)
NSTAR = wn * cinf * m**2 / (2 * xi)  # N* of Cor 3.4
z3_step(
    "cor_3_4.n_star",
    "Cor 3.4",
    "Derivation",
    "docs/derivations.md#cor-34",
    [
        *_COMPOSE_HYPS,
        xi > 0,
        2 * xi <= sp.Abs(dt),
        sp.Abs(dt) <= COR_3_3,
    ],
    sp.Le(nn, NSTAR),
    sp.Le(nn, NSTAR / 2),
    uses=(
        _OFF_READOUT,
        Use(
            "cor_3_3.compose",
            {s.name: s for s in (nn, wn, cinf, m, bet, bet2, _S, _bt, inf_, dt)},
            sp.Abs(dt) <= COR_3_3,
        ),
    ),
    note="N* = ||w|| C_infl (1 + eps^{-1/2})^{2K} / (2 xi): recognition (|dT| >= 2 xi on a"
    " flip) and Cor 3.3's |dT| <= 2 xi N*/N force N <= N*",
)

# ---- Prop 3.5
DOC35 = "docs/derivations.md#prop-35"
cl, rr, dth, dm = sp.symbols("C_Lip r dtheta diam", real=True)
z3_step(
    "prop_3_5.separation",
    "Prop 3.5",
    "Derivation, 2: one function per net point",
    DOC35,
    [cl > 0, xi > 0, sp.Eq(rr * cl, xi), dth >= 0, dth < 2 * rr, sp.Abs(dt) <= cl * dth],
    sp.Lt(sp.Abs(dt), 2 * xi),
    sp.Lt(sp.Abs(dt), xi),
    facts=("axiom.packing",),
)
M = sp.symbols("M", positive=True, integer=True)
dmp, rp = sp.symbols("diam r", positive=True)
sympy_identity(
    "prop_3_5.volume_ratio",
    "Prop 3.5",
    "Derivation, 3: at most (1 + diam/r)^M net points",
    DOC35,
    sp.powsimp(((dmp / 2 + rp / 2) / (rp / 2)) ** M, force=True),
    (1 + dmp / rp) ** M,
    (1 + dmp / (2 * rp)) ** M,
    facts=("axiom.packing", "axiom.ball_volume"),
)
