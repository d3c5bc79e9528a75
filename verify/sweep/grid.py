"""The sweep grid: init scheme x D x L x eps x N x seeds, as plain-dict cells."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verify.errors import ValidationError
from verify.validation import check_choice, check_int, check_real

KINDS = ("transformer", "random_function", "family")
SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")  # = verify.model.SCHEMES


# --------------------------------------------------------------------------------- the grid
@dataclass(frozen=True)
class SweepGrid:
    """The cartesian grid init scheme x D x L x eps x N x seeds (in that nesting order).

    ``kind="random_function"`` cells ignore the model axes: the grid is N x seeds there.
    ``kind="family"`` cells profile the registered family ``family`` at each N (no seeds); with
    ``kind="transformer"``, ``family`` adds each model's agreement with that family.
    ``n_heads``, ``scale`` and ``model`` (further ModelConfig fields, e.g.
    ``{"norm_first": True, "eos": False}``) are fixed for the whole grid. ``imports``: modules
    every worker imports before running a cell (families of ``--import``; see verify.plugins).
    """

    schemes: tuple[str, ...] = ("uniform",)
    d_model: tuple[int, ...] = (16,)
    n_layers: tuple[int, ...] = (1,)
    ln_eps: tuple[float, ...] = (0.0,)
    n_bits: tuple[int, ...] = (8,)
    seeds: tuple[int, ...] = (0,)
    n_heads: int = 2
    scale: float = 1.0
    kind: str = "transformer"
    model: Mapping[str, Any] = field(default_factory=dict)  # other ModelConfig fields, fixed
    family: str | None = None
    imports: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        object.__setattr__(self, "imports", tuple(self.imports))
        if self.kind == "family" and self.family is None:
            raise ValidationError("family", "a family name for kind 'family'", None)
        if self.family is not None:
            from verify.boolean import get_family

            get_family(self.family)  # ValidationError listing the known families
        for name, vals in (
            ("schemes", self.schemes),
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("ln_eps", self.ln_eps),
            ("n_bits", self.n_bits),
            ("seeds", self.seeds),
        ):
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not vals:
                raise ValidationError(name, "a non-empty sequence", vals)
            object.__setattr__(self, name, tuple(vals))
        for s in self.schemes:
            check_choice("schemes", s, SCHEMES)
        h = check_int("n_heads", self.n_heads, minimum=1)
        for d in self.d_model:
            check_int("d_model", d, minimum=1)
            if self.kind == "transformer" and d % h:
                raise ValidationError("d_model", f"multiples of n_heads={h}", d)
        for ell in self.n_layers:
            check_int("n_layers", ell, minimum=1)
        for e in self.ln_eps:
            check_real("ln_eps", e, minimum=0.0)
        for n in self.n_bits:
            check_int("n_bits", n, minimum=1, maximum=24)
        for s in self.seeds:
            check_int("seeds", s, minimum=0)
        check_real("scale", self.scale, strictly_positive=True)
        if not isinstance(self.model, Mapping):
            raise ValidationError("model", "a dict of ModelConfig fields", self.model)
        clash = {"d_model", "n_layers", "n_heads", "ln_eps"} & set(self.model)
        if clash:
            raise ValidationError("model", "ModelConfig fields other than the grid axes", clash)
        object.__setattr__(self, "model", dict(sorted(self.model.items())))
        if self.kind == "transformer":
            self.validate_configs()

    def validate_configs(self) -> None:
        """Build the ModelConfig of every (D, L, eps) of the grid once, so that a bad ``model``
        field or value is reported before any cell runs (ValidationError naming
        ``model.<field>``, or the grid axis)."""
        from dataclasses import fields

        from verify.model import ModelConfig

        known = {f.name for f in fields(ModelConfig)} - {"d_model", "n_layers", "n_heads", "ln_eps"}
        for key in self.model:
            if key not in known:
                raise ValidationError(
                    f"model.{key}", "a ModelConfig field: " + ", ".join(sorted(known)), key
                )
        for d, ell, e in itertools.product(self.d_model, self.n_layers, self.ln_eps):
            try:
                ModelConfig(d_model=d, n_layers=ell, n_heads=self.n_heads, ln_eps=e, **self.model)
            except ValidationError as exc:
                if exc.argument in self.model:
                    raise ValidationError(
                        f"model.{exc.argument}", exc.expected, self.model[exc.argument], exc.hint
                    ) from None
                raise

    def cells(self) -> list[dict[str, Any]]:
        """Every cell of the grid, as plain dicts, in a fixed order."""
        extra: dict[str, Any] = {}
        if self.family is not None:
            extra["family"] = self.family
        if self.imports:
            extra["imports"] = list(self.imports)
        if self.kind == "random_function":
            return [
                {"kind": self.kind, "n_bits": int(n), "seed": int(s), **extra}
                for n, s in itertools.product(self.n_bits, self.seeds)
            ]
        if self.kind == "family":
            return [{"kind": self.kind, "n_bits": int(n), **extra} for n in self.n_bits]
        return [
            {
                "kind": self.kind,
                "scheme": sc,
                "d_model": int(d),
                "n_layers": int(ell),
                "ln_eps": float(e),
                "n_bits": int(n),
                "seed": int(s),
                "n_heads": int(self.n_heads),
                "scale": float(self.scale),
                **({"model": dict(self.model)} if self.model else {}),
                **extra,
            }
            for sc, d, ell, e, n, s in itertools.product(
                self.schemes, self.d_model, self.n_layers, self.ln_eps, self.n_bits, self.seeds
            )
        ]


def cell_key(cell: Mapping[str, Any]) -> str:
    """The canonical identity of a cell: its JSON with sorted keys."""
    return json.dumps(dict(cell), sort_keys=True, separators=(",", ":"), allow_nan=False)
