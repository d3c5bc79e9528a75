"""Cor 4.6 (reconstruction): functions with K_0 < N^e are a.s. not recognised for large N."""

from __future__ import annotations


def test_low_k0_families_not_recognised(run_statement_check) -> None:
    run_statement_check("Cor 4.6", "PARITY, sparse PARITY, FIRST, DICTATOR not recognised")
