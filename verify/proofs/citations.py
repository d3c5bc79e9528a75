"""Citations between obligations: which are checked facts and which are still labels.

An obligation's ``facts`` name the axioms and the other obligations it relies on. A citation of
an obligation is *checked* when a hypothesis of the citing step stands for it through a
:class:`~verify.proofs.methods.Use` (its substitution checked by
:func:`~verify.proofs.methods.check_uses` on every ``prove``); otherwise it is a *label*.
A chain obligation's facts are of another kind: they name the steps whose expressions its
composition evaluates (no hypothesis stands for them), so they are counted apart
(*compositions*). tests/test_proofs_uses.py holds the reasoned list of the labels that remain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from verify.proofs.core import OBLIGATIONS, Obligation

__all__ = [
    "Citation",
    "all_citations",
    "checked_counts",
    "citation_counts",
    "obligation_citations",
]


@dataclass(frozen=True)
class Citation:
    """``citing`` names ``cited`` (an obligation or an ``axiom.*``) in its facts; ``kind`` is
    "checked" (a use), "label" or "composition" (the citing obligation is a chain)."""

    citing: str
    cited: str
    kind: str

    @property
    def axiom(self) -> bool:
        """Whether the cited fact is an axiom."""
        return self.cited.startswith("axiom.")


def all_citations(obligations: Iterable[Obligation] | None = None) -> list[Citation]:
    """Every citation of an obligation or an axiom by an obligation, in registration order."""
    out = []
    for ob in OBLIGATIONS.values() if obligations is None else obligations:
        used = {u.fact for u in ob.meta.get("uses", ())}
        for f in ob.facts:
            if f not in OBLIGATIONS and not f.startswith("axiom."):
                continue
            kind = "composition" if ob.method == "chain" else "checked" if f in used else "label"
            out.append(Citation(ob.id, f, kind))
    return out


def obligation_citations(obligations: Iterable[Obligation] | None = None) -> list[Citation]:
    """Every citation of an obligation by an obligation, in registration order."""
    return [c for c in all_citations(obligations) if not c.axiom]


def citation_counts(obligations: Iterable[Obligation] | None = None) -> dict[str, int]:
    """{"checked": n, "label": n, "composition": n} over :func:`obligation_citations`."""
    counts = {"checked": 0, "label": 0, "composition": 0}
    for c in obligation_citations(obligations):
        counts[c.kind] += 1
    return counts


def checked_counts(obligations: Iterable[Obligation] | None = None) -> dict[str, list[int]]:
    """How many citations are checked by a ``uses=``: "obligation" / "axiom" -> [checked,
    total] over :func:`all_citations`."""
    out = {"obligation": [0, 0], "axiom": [0, 0]}
    for c in all_citations(obligations):
        row = out["axiom" if c.axiom else "obligation"]
        row[0] += c.kind == "checked"
        row[1] += 1
    return out
