"""Sec 5 MAJORITY (unnumbered; id ours): K_0 = 2^N - 2 C(N, (N-1)/2) for odd N (even N under
both tie rules), measured exhaustively, and where K_0(N) exceeds N^c for c = 1..10."""


def test_k0_formula_exhaustive(run_statement_check):
    run_statement_check("Sec 5 MAJORITY", "K_0 formula, exhaustive")


def test_k0_exceeds_polynomials(run_statement_check):
    result = run_statement_check("Sec 5 MAJORITY", "K_0 exceeds N^c: where")
    assert [row.extra["N*"] for row in result.rows] == sorted(r.extra["N*"] for r in result.rows)
