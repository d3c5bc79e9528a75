"""One registration for every chain obligation: a comparison of the coded function of
``ob_id`` (:data:`verify.proofs.chain_code.CODE`) with the composition of the derivation's
steps, run on the code as it is (the obligation) and on the code times 1/2 (its twin, which the
same comparison must catch).

The comparison is the chain's own: at seeded points in ball arithmetic
(:data:`verify.proofs.chain.POINTS`) or on sympy symbols (:data:`verify.proofs.symbolic.SYMBOLIC`);
a :class:`Comparison` says how its result reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from verify.proofs.chain_code import CODE
from verify.proofs.core import Verdict
from verify.proofs.methods import custom_step

__all__ = ["Comparison", "chain_step"]

# compare(weaken) -> (cases compared, the first case where code * weaken left the
# composition or None, why)
Compare = Callable[[Any], tuple[int, Any, str]]


@dataclass(frozen=True)
class Comparison:
    """How a kind of comparison reads: ``claim`` and ``proved`` follow the function's
    "module:name" ({n}: the cases compared), ``half`` is the twin's factor, ``minimum`` the
    cases a proof needs, a failure whose message starts with ``undecided`` is "unknown"."""

    claim: str
    proved: str
    passed_halved: str
    caught_halved: str
    half: Any
    minimum: int = 0
    undecided: str | None = None


def chain_step(
    ob_id: str,
    statement: str,
    step: str,
    doc: str,
    compare: Compare,
    how: Comparison,
    *,
    facts: Iterable[str] = (),
    evidence: str,
    domain: str = "",
) -> None:
    """Register the chain obligation ``ob_id``: ``compare(1)`` must find no difference in at
    least ``how.minimum`` cases; ``compare(half)`` (the code halved) must find one."""
    fn = CODE[ob_id]

    def prove() -> Verdict:
        n, where, msg = compare(1)
        if where is not None:
            undecided = how.undecided is not None and msg.startswith(how.undecided)
            status = "unknown" if undecided else "failed"
            return Verdict(status, f"{fn} != composition: {msg}", where)
        if n < how.minimum:
            return Verdict("unknown", f"only {n} points")
        return Verdict("proved", f"{fn} {how.proved.format(n=n)}")

    def twin() -> Verdict:
        _, where, msg = compare(how.half)
        if where is None:
            return Verdict("not refuted", how.passed_halved)
        return Verdict("refuted", f"{how.caught_halved}: {msg}", where)

    custom_step(
        ob_id,
        statement,
        step,
        doc,
        "chain",
        f"{fn} {how.claim.format(n=how.minimum, domain=domain)}",
        f"{fn} times 1/2",
        prove,
        twin,
        facts=tuple(facts),
        evidence=evidence,
    )
