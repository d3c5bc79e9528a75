"""How much work a check may do, and where its randomness comes from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from verify.validation import check_choice, check_int

Budget = Literal["quick", "default", "full"]
BUDGETS: tuple[str, ...] = ("quick", "default", "full")


class Sizes(NamedTuple):
    """One size per budget: ``Sizes(quick=6, default=25, full=100)``."""

    quick: Any
    default: Any
    full: Any


@dataclass(frozen=True)
class CheckContext:
    """A check's budget ("quick": default pytest run and ``report --quick``; "default";
    "full": ``--runslow`` and ``report --full``) and its seed."""

    budget: Budget = "default"
    seed: int = 0
    progress: bool = False

    def __post_init__(self) -> None:
        check_choice("budget", self.budget, BUDGETS)
        check_int("seed", self.seed, minimum=0)

    def size(self, sizes: Sizes) -> Any:
        """The entry of ``sizes`` for this budget."""
        return getattr(sizes, self.budget)

    def pick(self, quick: Any, default: Any, full: Any) -> Any:
        """Choose a size by budget: ``ctx.pick(quick=200, default=1000, full=20000)``."""
        return self.size(Sizes(quick, default, full))
