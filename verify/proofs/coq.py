"""``prove --coq``: the obligations' own claims as Coq lemmas over the reals, checked by Coq's
kernel (``coqc``; Debian: ``coq``).

Each z3 step, arb step and sympy identity is translated from its data (hypotheses, box,
conclusion: :mod:`verify.proofs.coq_scripts`, :mod:`verify.proofs.coq_terms`) when ``prove
--coq`` runs, so a changed claim is a changed lemma, and a false claim is a lemma Coq rejects.
One ``.v`` file per lemma (a failing proof stops a file), all importing one compiled library of
helper lemmas and tactics (:data:`~verify.proofs.coq_library.LIBRARY`), compiled in parallel.

Each obligation gets one Coq status:
- ``checked``: the kernel accepted the proof (``Qed``), and ``Print Assumptions`` names only
  the standard library's axioms of the reals;
- ``not closed``: translated, but the generated script does not prove it (a tactic too weak,
  or the claim false); Coq's message is kept;
- ``error``: Coq rejected the *statement* (a translation bug; exit 1);
- ``untranslatable``: the claim uses a construct with no translation (named);
- ``skipped``: coqc is not installed.
The trusted base: the translator (that the lemma states the claim), Coq's kernel, and the
axioms ``Print Assumptions`` lists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from verify.proofs.coq_library import LIBRARY
from verify.proofs.coq_scripts import claim_of, lemma_text
from verify.proofs.coq_terms import Untranslatable
from verify.proofs.core import Obligation

__all__ = ["CoqResult", "coq_counts", "coq_text", "run_coq"]

LIB_NAME = "VerifyLib"
HEADER = (
    "From Coq Require Import Reals Lra Psatz.\n"
    f"From Verify Require Import {LIB_NAME}.\n"
    "Open Scope R_scope.\n"
)
# the axioms of Coq's standard reals (Print Assumptions); anything else is an error
STANDARD_AXIOMS = re.compile(
    r"^(ClassicalDedekindReals\.\w+|FunctionalExtensionality\.\w+|Classical_Prop\.\w+|"
    r"Rdefinitions\.\w+|Raxioms\.\w+|ConstructiveCauchyReals\.\w+|"
    r"ClassicalEpsilon\.\w+|PropExtensionality\.\w+)$"
)
COQC_TIMEOUT_S = 600  # one lemma; a guard against a runaway tactic, never reached here


def lemma_name(ob: Obligation) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", ob.id)


def coq_text(ob: Obligation) -> str:
    """The .v file of one obligation: its claim as a Coq lemma with a generated proof script
    (Untranslatable when the claim has no translation)."""
    claim = claim_of(ob)
    comment = f"{ob.statement}: {ob.step} ({ob.id}, {ob.method})"
    comment = comment.replace("(*", "( *").replace("*)", "* )")
    name = lemma_name(ob)
    return f"{HEADER}\n{lemma_text(name, claim, comment)}\nPrint Assumptions {name}.\n"


@dataclass
class CoqResult:
    id: str
    method: str
    path: Path | None
    status: str  # "checked", "not closed", "error", "untranslatable", "skipped"
    detail: str
    seconds: float

    def as_dict(self) -> dict:
        return {
            "file": str(self.path) if self.path else None,
            "status": self.status,
            "detail": self.detail,
            "seconds": round(self.seconds, 2),
        }


def _statement_lines(text: str) -> range:
    lines = text.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith("Lemma ")) + 1
    end = next(i for i, s in enumerate(lines) if s.startswith("Proof.")) + 1
    return range(start, end)


def print_assumptions(out: str) -> list[str]:
    """The axiom names in ``Print Assumptions``' output: each entry starts at the line's start
    (``name : type`` on one line, or ``name`` with its type on the indented lines below)."""
    block = out.split("Axioms:", 1)[1] if "Axioms:" in out else ""
    return re.findall(r"^([A-Za-z_][\w.']*)(?:\s*:.*)?$", block, flags=re.M)


def _check(coqc: str, ob: Obligation, path: Path, text: str) -> CoqResult:
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [coqc, "-q", "-R", ".", "Verify", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=COQC_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        took = time.perf_counter() - start
        return CoqResult(ob.id, ob.method, path, "not closed", "coqc: timed out", took)
    took = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        msg = " ".join(out.split())
        m = re.search(r"line (\d+), characters", out)
        if m and int(m.group(1)) in _statement_lines(text):
            return CoqResult(ob.id, ob.method, path, "error", f"statement: {msg[:400]}", took)
        return CoqResult(ob.id, ob.method, path, "not closed", msg[:400], took)
    axioms = print_assumptions(out)
    odd = [a for a in axioms if not STANDARD_AXIOMS.match(a)]
    if odd or "Closed under the global context" not in out and not axioms:
        return CoqResult(ob.id, ob.method, path, "error", f"assumptions: {odd or out}", took)
    detail = f"Qed; {len(axioms)} standard axioms of the reals" if axioms else "Qed; no axioms"
    return CoqResult(ob.id, ob.method, path, "checked", detail, took)


def run_coq(
    obligations: list[Obligation], out_dir: Path, jobs: int | None = None
) -> list[CoqResult]:
    """Translate every obligation's claim into ``out_dir/<id>.v`` and check each with coqc,
    ``jobs`` at a time (default: the cores, at most 4); ``skipped`` with the reason when coqc
    is absent. One result per obligation, in order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    coqc = shutil.which("coqc")
    results: dict[str, CoqResult] = {}
    todo: list[tuple[Obligation, Path, str]] = []
    for ob in obligations:
        try:
            text = coq_text(ob)
        except Untranslatable as exc:
            results[ob.id] = CoqResult(ob.id, ob.method, None, "untranslatable", exc.construct, 0)
            continue
        path = out_dir / f"{lemma_name(ob)}.v"
        path.write_text(text)
        todo.append((ob, path, text))
    if coqc is None:
        for ob, path, _ in todo:
            results[ob.id] = CoqResult(
                ob.id, ob.method, path, "skipped", "coqc not found (apt-get install coq)", 0
            )
    elif todo:
        lib = out_dir / f"{LIB_NAME}.v"
        lib.write_text(LIBRARY)
        proc = subprocess.run(
            [coqc, "-q", "-R", ".", "Verify", lib.name],
            cwd=out_dir,
            capture_output=True,
            text=True,
            timeout=COQC_TIMEOUT_S,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"coqc could not compile {lib}: {proc.stderr or proc.stdout}")
        workers = jobs or min(4, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = pool.map(lambda job: _check(coqc, *job), todo)
            for r in done:
                results[r.id] = r
    return [results[ob.id] for ob in obligations if ob.id in results]


def coq_counts(results: list[CoqResult], key: str = "method") -> dict[str, dict[str, int]]:
    """Coq status -> the obligation's method (``key="method"``) or class (``"class"``: genuine,
    instance, box, ...) -> count (the note's table)."""
    from verify.proofs.core import OBLIGATIONS
    from verify.proofs.status import obligation_class

    out: dict[str, Counter] = {}
    for r in results:
        if key == "method":
            k = r.method
        else:
            k = obligation_class(OBLIGATIONS[r.id]) if r.id in OBLIGATIONS else "unregistered"
        out.setdefault(r.status, Counter())[k] += 1
    return {s: dict(c) for s, c in out.items()}
