"""``prove --coq``: the scalar obligations with exp, sqrt or log as Coq lemmas, closed by the
Interval library's ``interval`` tactic (bisection and automatic differentiation in the one
variable), and checked with ``coqc`` when it is installed (Debian: ``coq``, ``libcoq-interval``).

Each obligation with a ``coq`` statement becomes one file ``<id>.v``. The tactic cannot close a
full step at its equality points (tried here: "Numerical evaluation failed to conclude" for
1/(2 e^v - 1)^2 <= e^{-2v} on [0, 8], which is an equality at v = 0), so the Coq lemma states
the exp fact the step reduces to once its algebra is done (that algebra is the z3 / arb
obligation itself), or a strict instance away from the equality point (Lemma 3.2's
z = (var + eps)^{-1/2} < eps^{-1/2} at eps = 1/4, var in [1/1000, 100]: sqrt(1/4) is not
evaluated exactly, so the touching form fails).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from verify.proofs.core import Obligation

__all__ = ["CoqResult", "coq_text", "run_coq"]

HEADER = (
    "From Coq Require Import Reals.\nFrom Interval Require Import Tactic.\nOpen Scope R_scope.\n"
)


def lemma_name(ob: Obligation) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", ob.id)


def coq_text(ob: Obligation) -> str:
    """The .v file of one obligation: its statement and the interval tactic on its variable."""
    assert ob.coq is not None
    var = re.match(r"forall (\w+),", ob.coq).group(1)  # type: ignore[union-attr]
    return (
        f"{HEADER}\n(* {ob.statement}: {ob.step} ({ob.id}) *)\n"
        f"Lemma {lemma_name(ob)} : {ob.coq}.\n"
        f"Proof. intros {var} H. interval with (i_bisect {var}, i_autodiff {var}). Qed.\n"
    )


@dataclass
class CoqResult:
    id: str
    path: Path
    status: str  # "proved", "failed", "skipped"
    detail: str
    seconds: float


def run_coq(obligations: list[Obligation], out_dir: Path) -> list[CoqResult]:
    """Write every Coq lemma into ``out_dir`` and check each with coqc (``skipped`` with the
    reason when coqc is absent)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    coqc = shutil.which("coqc")
    results = []
    for ob in obligations:
        if ob.coq is None:
            continue
        path = out_dir / f"{lemma_name(ob)}.v"
        path.write_text(coq_text(ob))
        if coqc is None:
            results.append(
                CoqResult(
                    ob.id,
                    path,
                    "skipped",
                    "coqc not found (apt-get install coq libcoq-interval)",
                    0.0,
                )
            )
            continue
        start = time.perf_counter()
        proc = subprocess.run(
            [coqc, path.name], cwd=out_dir, capture_output=True, text=True, timeout=600
        )
        took = time.perf_counter() - start
        if proc.returncode == 0:
            results.append(CoqResult(ob.id, path, "proved", "coqc: Qed accepted", took))
        else:
            msg = " ".join((proc.stderr or proc.stdout).split())[:300]
            results.append(CoqResult(ob.id, path, "failed", f"coqc: {msg}", took))
    return results
