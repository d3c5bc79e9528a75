"""Steps of the covered derivations left in prose, each with the reason (the blueprint draws
them as prose-only nodes; docs/proofs.md lists them)."""

from __future__ import annotations

from verify.proofs.core import prose

__all__: list[str] = []

prose(
    "prose.hr_thm_6.reading",
    "H&R Thm 6",
    "Reading (an argument, not a proof)",
    "the docs say it is an argument, not a proof: a per-input probability bound is not an"
    " expectation bound, so nothing is there to check",
)
