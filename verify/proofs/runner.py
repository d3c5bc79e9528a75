"""Load, select and discharge the obligations (``python -m verify prove``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from verify.errors import ValidationError
from verify.proofs.core import AXIOMS, OBLIGATIONS, PROSE, Obligation, Outcome, discharge
from verify.registry.core import slugify

__all__ = ["STATEMENTS", "load", "run", "select", "statement_slug"]

_MODULES = (
    "axioms",
    "prose",
    "influence",
    "lipschitz",
    "blowup",
    "eps_zero",
    "hahn_rofin",
    "corollaries",
    "chain",
    "chain_norms",
    "chain_tails",
    "chain_trivial",
    "chain_arrays",
    "chain_quantiles",
    "chain_packing",
    "chain_param_norms",
    "chain_box_norms",
    "chain_symbolic",
    "chain_callees",
    "chain_induction",
    "chain_ln_inputs",
    "chain_searches",
    "coverage",
    "chain_majority",
)
# the statements with derivation obligations, in the derivation docs' order
STATEMENTS = (
    "Lemma 2.9",
    "Lemma 3.1",
    "Lemma 3.2",
    "Cor 3.3",
    "Cor 3.4",
    "Prop 3.5",
    "Trivial bounds",
    "Small-ball bound",
    "Lemma 4.2",
    "Cor 4.3",
    "Lemma 4.4",
    "Thm 4.5",
    "Cor 4.6",
    "Cor 5.1",
    "Cor 5.2",
    "Cor 5.3",
    "Cor 5.4",
    "H&R Cor 5",
    "H&R Thm 6",
    "Sec 5 MAJORITY",
    "Sec 6 random functions",
)


def statement_slug(statement: str) -> str:
    """ "Lemma 2.9" -> "lemma_2_9", "H&R Cor 5" -> "hr_cor_5" (the obligation ids' prefix)."""
    s = statement.lower().replace("h&r", "hr").replace("small-ball bound", "small_ball")
    return "".join(c if c.isalnum() else "_" for c in s).strip("_")


def load() -> list[Obligation]:
    """Every registered obligation (importing the step modules registers them), in the order
    of :data:`STATEMENTS`, then registration order."""
    for name in _MODULES:
        importlib.import_module(f"verify.proofs.{name}")
    order = {s: i for i, s in enumerate(STATEMENTS)}
    return sorted(OBLIGATIONS.values(), key=lambda ob: order.get(ob.statement, len(order)))


def select(only: Sequence[str] | None = None) -> list[Obligation]:
    """The obligations named by ``only``: ids, id prefixes ("lemma_2_9", "lemma_2_9.ln_") or
    statement ids ("Lemma 2.9"); all when empty. An unknown name is a ValidationError."""
    obs = load()
    if not only:
        return obs
    out: list[Obligation] = []
    for name in only:
        hit = [
            ob
            for ob in obs
            if ob.id == name
            or ob.id.startswith(name)
            or ob.statement.lower() == name.lower()
            or slugify(ob.statement) == name  # the report's slugs (h_r_cor_5) too
        ]
        if not hit:
            raise ValidationError(
                "--only", "an obligation id, an id prefix or a statement (see prove --list)", name
            )
        out += [ob for ob in hit if ob not in out]
    return out


def run(
    obligations: Sequence[Obligation], progress: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    """Discharge each obligation and its twin (in order)."""
    out = []
    for ob in obligations:
        o = discharge(ob)
        out.append(o)
        if progress is not None:
            progress(o)
    return out


def axioms_used(obligations: Sequence[Obligation]) -> list[str]:
    """The named axioms the obligations rely on (sorted)."""
    load()
    return sorted({f for ob in obligations for f in ob.facts if f in AXIOMS})


def prose_steps() -> list:
    load()
    return list(PROSE.values())
