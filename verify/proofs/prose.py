"""Steps of the covered derivations left in prose, each with the reason (the blueprint draws
them as prose-only nodes; docs/proofs.md lists them)."""

from __future__ import annotations

from verify.proofs.core import prose

__all__: list[str] = []

prose(
    "prose.thm_4_5.margin_reading",
    "Thm 4.5",
    "Reading used (the margin explicit)",
    "an argument about which reading of the reconstructed theorem the checks test (off E_N every"
    " string of the family is zero-sensitive for every f recognised with margin xi): it chains"
    " Cor 4.3 and the definitions; its inequalities are obligations of Cor 4.3 and Cor 4.6"
    " (cor_4_3.threshold, cor_4_6.label_kept, cor_4_6.family_zero_sensitive)",
)
prose(
    "prose.hr_thm_6.reading",
    "H&R Thm 6",
    "Reading (an argument, not a proof)",
    "the docs say it is an argument, not a proof: a per-input probability bound is not an"
    " expectation bound, so nothing is there to check",
)
