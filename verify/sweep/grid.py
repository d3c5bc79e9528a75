"""The sweep grid: init scheme x D x L x eps x N x seeds, as plain-dict cells."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verify.errors import ValidationError
from verify.validation import check_choice, check_int, check_real

KINDS = ("transformer", "random_function", "family")
SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")  # = verify.model.SCHEMES


class Seeds(Sequence[int]):
    """A set of seeds as sorted disjoint ranges (``"0:1000000000"`` costs no memory): length,
    iteration, membership and indexing without a list of every seed. Repeated or overlapping
    seeds count once."""

    def __init__(self, parts: Sequence[range | int]) -> None:
        ranges: list[tuple[int, int]] = []
        for q in parts:
            if isinstance(q, range) and q.step == 1:
                ranges += [(q.start, q.stop)] if len(q) else []
            else:
                ranges += [(int(x), int(x) + 1) for x in (q if isinstance(q, range) else [q])]
        ranges.sort()
        merged: list[list[int]] = []
        for a, b in ranges:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.parts: tuple[range, ...] = tuple(range(a, b) for a, b in merged)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self):
        for p in self.parts:
            yield from p

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return list(self)[i]
        if i < 0:
            i += len(self)
        for p in self.parts:
            if i < len(p):
                return p[i]
            i -= len(p)
        raise IndexError(i)

    def __contains__(self, x: object) -> bool:
        return any(x in p for p in self.parts)

    def min(self) -> int:
        return self.parts[0].start

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Seeds) and self.parts == other.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        text = " ".join(
            f"{p.start}:{p.stop}" if len(p) > 1 else str(p.start) for p in self.parts[:4]
        )
        return f"Seeds({text}{' ...' if len(self.parts) > 4 else ''})"


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
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not len(vals):
                raise ValidationError(name, "a non-empty sequence", vals)
            if name == "seeds" and isinstance(vals, (range, Seeds)):  # streamed, never a list
                if not isinstance(vals, Seeds):
                    vals = Seeds([vals])
                if vals.min() < 0:
                    raise ValidationError("seeds", "seeds >= 0", vals.min())
                object.__setattr__(self, name, vals)
                continue
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
        if not isinstance(self.seeds, Seeds):
            for s in self.seeds:
                check_int("seeds", s, minimum=0)
        check_real("scale", self.scale, strictly_positive=True)
        object.__setattr__(self, "ln_eps", tuple(e + 0.0 for e in self.ln_eps))  # -0.0 is 0.0
        for name in ("schemes", "d_model", "n_layers", "ln_eps", "n_bits"):
            vals = getattr(self, name)
            twice = [v for i, v in enumerate(vals) if v in vals[:i]]
            if twice:
                raise ValidationError(
                    name, "each value once (a repeated value runs every cell twice)", twice[0]
                )
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

    @property
    def n_cells(self) -> int:
        """How many cells :meth:`iter_cells` yields (computed, nothing listed)."""
        if self.kind == "random_function":
            return len(self.n_bits) * len(self.seeds)
        if self.kind == "family":
            return len(self.n_bits)
        axes = (self.schemes, self.d_model, self.n_layers, self.ln_eps, self.n_bits, self.seeds)
        return math.prod(len(a) for a in axes)

    def _extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.family is not None:
            extra["family"] = self.family
        if self.imports:
            extra["imports"] = list(self.imports)
        return extra

    def _cell(self, sc: str, d: int, ell: int, e: float, n: int, s: int) -> dict[str, Any]:
        return {
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
            **self._extra(),
        }

    def iter_cells(self) -> Iterator[dict[str, Any]]:
        """Every cell of the grid, as plain dicts, in a fixed order, one at a time (a grid of a
        billion seeds is streamed, never held in memory)."""
        extra = self._extra()
        if self.kind == "random_function":
            for n in self.n_bits:  # (itertools.product would list every seed)
                for s in self.seeds:
                    yield {"kind": self.kind, "n_bits": int(n), "seed": int(s), **extra}
        elif self.kind == "family":
            for n in self.n_bits:
                yield {"kind": self.kind, "n_bits": int(n), **extra}
        else:
            for sc, d, ell, e, n in itertools.product(
                self.schemes, self.d_model, self.n_layers, self.ln_eps, self.n_bits
            ):
                for s in self.seeds:
                    yield self._cell(sc, d, ell, e, n, s)

    def cells(self) -> list[dict[str, Any]]:
        """Every cell of the grid as a list (small grids; :meth:`iter_cells` streams)."""
        return list(self.iter_cells())

    def contains(self, cell: Mapping[str, Any]) -> bool:
        """True when ``cell`` is one of this grid's cells (found without listing them)."""
        try:
            if cell.get("kind") != self.kind or cell.get("n_bits") not in self.n_bits:
                return False
            if self.kind == "family":
                return dict(cell) == {"kind": self.kind, "n_bits": cell["n_bits"], **self._extra()}
            if cell.get("seed") not in self.seeds:
                return False
            if self.kind == "random_function":
                return dict(cell) == {
                    "kind": self.kind,
                    "n_bits": cell["n_bits"],
                    "seed": cell["seed"],
                    **self._extra(),
                }
            axes = ("scheme", "d_model", "n_layers", "ln_eps")
            values = (self.schemes, self.d_model, self.n_layers, self.ln_eps)
            if any(cell.get(a) not in v for a, v in zip(axes, values, strict=True)):
                return False
            key = [cell[a] for a in axes]
            return dict(cell) == self._cell(*key, cell["n_bits"], cell["seed"])
        except (TypeError, KeyError):
            return False


def cell_key(cell: Mapping[str, Any]) -> str:
    """The canonical identity of a cell: its JSON with sorted keys."""
    return json.dumps(dict(cell), sort_keys=True, separators=(",", ":"), allow_nan=False)
