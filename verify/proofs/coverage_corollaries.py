"""Cor 5.1-5.4 as obligations (docs/derivations_eps_zero.md section 6): each family's premise
K_0(N) = 0 checked against its definition, and the step from Cor 4.6."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import sympy as sp

from verify.proofs.chain import Case, code
from verify.proofs.compose import iv
from verify.proofs.coverage_common import _exhaustive
from verify.proofs.methods import custom_step, z3_step

# ----------------------------------------------------------------------------- Cor 5.1-5.4
DOC6 = "docs/derivations_eps_zero.md#6-cor-46-cor-51-54-conj-55"


def _defined(family: str, n: int, params: dict) -> tuple[int, ...]:
    """The family's truth table from its definition (independent of verify.boolean)."""
    table = []
    for x in range(1 << n):
        bits = [(x >> j) & 1 for j in range(n)]  # bit j = x_{j+1}
        if family == "parity":
            v = sum(bits) % 2
        elif family == "sparse_parity":
            v = sum(bits[i - 1] for i in params["subset"]) % 2
        elif family == "dictator":
            v = bits[params["i"] - 1] ^ int(params["negate"])
        else:  # first
            v = bits[0] ^ int(params["negate"])
        table.append(v)
    return tuple(table)


def _min_sensitivity(table: tuple[int, ...], n: int) -> tuple[int, int]:
    """(min_x s(x), K_0) of a truth table."""
    s = [sum(table[x] != table[x ^ (1 << j)] for j in range(n)) for x in range(1 << n)]
    return min(s), sum(v == 0 for v in s)


COROLLARIES = (
    ("Cor 5.1", "cor_5_1", "parity", lambda n: [{}]),
    ("Cor 5.2", "cor_5_2", "sparse_parity", lambda n: [{"subset": (1,)}, {"subset": (1, n)}]),
    (
        "Cor 5.3",
        "cor_5_3",
        "dictator",
        lambda n: [{"i": i, "negate": neg} for i in (1, n) for neg in (False, True)],
    ),
    ("Cor 5.4", "cor_5_4", "first", lambda n: [{"negate": False}, {"negate": True}]),
)


def _premise_cases(family: str, variants, ob_id: str) -> Callable[[], Iterator[Case]]:
    def cases() -> Iterator[Case]:
        from verify.boolean import make_family

        for n in range(1, 11):
            for params in variants(n):
                if family == "sparse_parity" and len(set(params["subset"])) < len(params["subset"]):
                    continue
                table = _defined(family, n, params)
                want = _min_sensitivity(table, n)

                def coded(n=n, params=params, table=table):
                    f = make_family(family, n, **params)
                    s = np.asarray(code(ob_id)(f))
                    if tuple(int(v) for v in f.table) != table:  # the function itself
                        return (-1.0, -1.0)
                    return (float(s.min()), float(np.count_nonzero(s == 0)))

                yield (
                    {"family": family, "N": n, **{k: str(v) for k, v in params.items()}},
                    coded,
                    (lambda w=want: (iv(w[0]), iv(w[1]))),
                )

    return cases


k0_, ne_ = sp.symbols("K_0 N^e", real=True)
for _st, _slug, _family, _variants in COROLLARIES:
    _chain = f"{_slug}.chain_premise"
    _cases = _premise_cases(_family, _variants, _chain)
    custom_step(
        _chain,
        _st,
        "Premise: K_0(N) = 0",
        DOC6,
        "chain",
        f"verify.boolean's {_family}: its truth table is the definition's and its sensitivity"
        " has min_x s(x) >= 1, K_0 = 0 (every variant, N = 1..10, against the definition)",
        "min_x s(x) and K_0 times 1/2",
        (lambda c=_cases, i=_chain: _exhaustive(c, i)),
        (lambda c=_cases, i=_chain: _exhaustive(c, i, 0.5)),
        evidence="points",
    )
    z3_step(
        f"{_slug}.from_cor_4_6",
        _st,
        "From Cor 4.6",
        DOC6,
        [sp.Eq(k0_, 0), ne_ > 0],
        sp.Lt(k0_, ne_),
        sp.Lt(k0_, ne_ - 1),
        pinned=(k0_,),
        facts=(_chain, "cor_4_6.bound", "thm_4_5.series_convergence", "axiom.borel_cantelli"),
        note="K_0(N) = 0 < N^e for every e (the premise of Cor 4.6); then P[theta recognises f"
        " at N] <= min(1, a_N) (cor_4_6.bound), summable (thm_4_5.series_convergence), so almost"
        " surely only finitely many N (Borel-Cantelli)",
    )
