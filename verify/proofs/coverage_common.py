"""What the coverage obligations (:mod:`verify.proofs.coverage`) share: their docs' anchors
and statements, and the exhaustive comparison of the coded function with an enumeration."""

from __future__ import annotations

from verify.proofs.chain import CODE
from verify.proofs.core import Verdict

DOC9 = "docs/derivations_eps_zero.md#9-sec-5-majority-and-sec-6-random-functions"
DOC4 = "docs/derivations_eps_zero.md#4-lemma-44"
S5, S6 = "Sec 5 MAJORITY", "Sec 6 random functions"


def _exhaustive(cases, ob_id: str, weaken: float = 1.0) -> Verdict:
    from verify.proofs.chain import _check

    n, pt, msg = _check(cases, weaken)
    if weaken != 1.0:
        if pt is None:
            return Verdict("not refuted", "the halved code passed every case")
        return Verdict("refuted", f"halved code caught: {msg}", pt)
    if pt is not None:
        return Verdict("failed", f"{CODE[ob_id]} != enumeration: {msg}", pt)
    return Verdict("proved", f"{CODE[ob_id]} equals the enumeration at all {n} cases")
