"""Cor 5.2 (m-sparse PARITY): the premise K_0(N) = 0 measured exhaustively (reconstructed statement;
see verify/lemmas/functions.py)."""

from verify.lemmas.functions import _PREMISE_CHECK


def test_premise_exhaustive(run_statement_check):
    run_statement_check("Cor 5.2", _PREMISE_CHECK)
