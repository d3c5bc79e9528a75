"""Cor 4.3 (reconstruction): on the good event, bit flips move T by O(N^(zeta-1))."""

from __future__ import annotations


def test_bit_flip_effect_bounded(run_statement_check) -> None:
    res = run_statement_check("Cor 4.3", "bit-flip effect vs ||w|| C_infl beta beta' / N")
    assert all(r.measured > 0 for r in res.rows)  # real flips measured, not empty rows
