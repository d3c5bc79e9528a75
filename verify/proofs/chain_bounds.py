"""The chain to the code for the bounds issue 26 named in ``verify.theory`` (the table of coded
functions is :data:`verify.proofs.chain.CODE`): Cor 3.3's exponent 2K, Lemma 3.1's C_Lip
||dtheta||, Lemma 3.2 per layer, Lemma 4.2's Markov factor, Cor 4.3's bounds and threshold N_0,
Cor 4.6's finite-N bound, Thm 4.5's N^e and min(1, a_N), the trivial bounds and the [0, 1] check
of probabilities. Each composition is evaluated from the step expressions the obligations prove
(:mod:`verify.proofs.corollaries`, :data:`verify.proofs.eps_zero.MARKOV`,
:data:`verify.proofs.blowup.COR_3_3`), in interval arithmetic, at >= 100 seeded points."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy as sp
from flint import arb

from verify.proofs.chain import (
    N_POINTS,
    Case,
    _points_step,
    ball,
    code,
)
from verify.proofs.chain_tails import _sequential, _series_composed, _tail_points, _union
from verify.proofs.compose import ev, iv
from verify.proofs.interval import Iv

__all__: list[str] = []

N = N_POINTS
DOC0 = "docs/derivations_eps_zero.md"
_LN10 = arb(10).log()


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _log10(x: float) -> Iv:
    return ball(arb(x).log() / _LN10)


# ----------------------------------------------------------------------------- eps > 0
_X = sp.Symbol("X", positive=True)


def max_iv(a: Iv, bt: Iv) -> Iv:
    """C_infl = max(a_L, bt_L): the bound at the flipped position and S times the bound
    elsewhere (lemma_2_9.constant_off_readout, constant_at_readout)."""
    return a.max(bt)


# ----------------------------------------------------------------------------- eps = 0
def _tail_cases() -> Iterator[Case]:
    for t, d, a, k, s in _tail_points(53):
        yield (
            {"t": t, "D": d, "a": a, "K": k, "S": s},
            (lambda p=(t, d, a, k, s): code("lemma_4_2.chain_tail")(*p)),
            (lambda p=(t, d, a, k, s): _union(*p).min(_sequential(*p))),
        )


_SERIES: dict[tuple[int, int, float], sp.Expr] = {}


def _a_n(d: int, ll: int, box: float) -> sp.Expr:
    """a_N of section 5 at the paper's exponent and zeta = (D - 2)/(D - 1), composed."""
    if (d, ll, box) not in _SERIES:
        e, zeta = sp.Rational(d - 1, 2 * ll) - 5, sp.Rational(d - 2, d - 1)
        term, n = _series_composed(d, ll, e, zeta, box)
        _SERIES[d, ll, box] = term.subs(n, sp.Symbol("N", positive=True))
    return _SERIES[d, ll, box]


def _bad_event_cases() -> Iterator[Case]:
    r = _rng(49)
    grid = [(16, 1), (24, 1), (32, 1), (32, 2), (40, 2)]
    for _ in range(N):
        d, ll = grid[int(r.integers(len(grid)))]
        box, n = float(r.choice([0.5, 1.0, 2.0])), int(10 ** r.uniform(3, 40))
        yield (
            {"D": d, "L": ll, "N": n, "box": box},
            (lambda a=(d, ll, n, box): code("thm_4_5.chain_bad_event_bound")(*a)),
            (lambda a=(d, ll, box), n=n: ev(_a_n(*a), N=iv(n)).min(iv(1))),
        )


# ----------------------------------------------------------------------------- registration
_TABLE = [
    ("lemma_4_2.chain_tail", "Lemma 4.2", "Blowup tail, sequential conditioning",
     DOC0 + "#2-lemma-42", _tail_cases, ("lemma_4_2.chain_union", "lemma_4_2.chain_sequential")),
    ("thm_4_5.chain_bad_event_bound", "Thm 4.5", "Series", DOC0 + "#5-thm-45-and-borel-cantelli",
     _bad_event_cases, ("thm_4_5.chain_series", "axiom.probability_range")),
]  # fmt: skip
for _id, _st, _step, _doc, _cases, _facts in _TABLE:
    _points_step(_id, _st, _step, _doc, _cases, facts=_facts)
