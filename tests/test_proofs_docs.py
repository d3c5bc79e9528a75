"""The derivation docs link every step to its obligations (lines starting with "↳"), and every
obligation, named axiom in use and prose step to a step of the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verify.proofs.core import AXIOMS, OBLIGATIONS, PROSE
from verify.proofs.runner import load

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["docs/derivations.md", "docs/derivations_eps_zero.md", "docs/derivations_hahn_rofin.md"]
LINK = re.compile(r"^\s*↳ (.*)$")
ID = re.compile(r"`([a-z0-9_]+\.[a-z0-9_.]+)`")


def links(doc: str) -> list[tuple[int, list[str]]]:
    """(line number, ids) of the ↳ lines of a doc."""
    out = []
    for i, line in enumerate((ROOT / doc).read_text().splitlines()):
        m = LINK.match(line)
        if m:
            out.append((i, ID.findall(m.group(1))))
    return out


def linked_ids(doc: str | None = None) -> set[str]:
    return {x for d in ([doc] if doc else DOCS) for _, ids in links(d) for x in ids}


load()


def test_every_linked_id_exists() -> None:
    known = set(OBLIGATIONS) | set(AXIOMS) | set(PROSE)
    assert sorted(linked_ids() - known) == []


@pytest.mark.parametrize("ob_id", sorted(OBLIGATIONS))
def test_every_obligation_is_linked_from_its_doc(ob_id: str) -> None:
    ob = OBLIGATIONS[ob_id]
    assert ob_id in linked_ids(ob.doc.split("#")[0]), f"{ob_id}: no ↳ line in {ob.doc}"


def test_every_prose_step_and_axiom_in_use_is_linked() -> None:
    used = {f for ob in OBLIGATIONS.values() for f in ob.facts if f.startswith("axiom.")}
    assert sorted((used | set(PROSE)) - linked_ids()) == []
    assert (
        sorted(
            f
            for ob in OBLIGATIONS.values()
            for f in ob.facts
            if f not in OBLIGATIONS and f not in AXIOMS
        )
        == []
    )


@pytest.mark.parametrize("doc", DOCS)
def test_every_step_of_the_docs_has_an_obligation(doc: str) -> None:
    """Each "**Step N" block, and each statement section, has a ↳ line before the next step or
    section heading."""
    lines = (ROOT / doc).read_text().splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("**Step ")]
    sections = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
    linked = {i for i, _ in links(doc)}
    missing = []
    for h in heads:
        nxt = min([j for j in heads + sections if j > h], default=len(lines))
        if not any(h < i < nxt for i in linked):
            missing.append(lines[h][:60])
    assert missing == []
    covered = [
        s
        for s in sections
        if any(s < i < min([j for j in sections if j > s], default=len(lines)) for i in linked)
    ]
    assert covered, f"{doc}: no section is linked to an obligation"


def test_every_obligation_step_is_named_in_its_doc() -> None:
    """The step an obligation names (up to its first ':' or ',') occurs in its doc."""
    missing = []
    for ob in OBLIGATIONS.values():
        text = " ".join((ROOT / ob.doc.split("#")[0]).read_text().split()).lower()
        name = re.split(r"[:,(]", ob.step)[0].strip()
        if name.lower() not in text:
            missing.append((ob.id, name))
    assert missing == []
