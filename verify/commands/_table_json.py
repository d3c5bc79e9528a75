"""check-model's pieces for issue 44: ``--table`` (the certified table in the JSON,
bit-packed), the statements line of a model whose layer norm is not torch's, and the refusal of
``--executor`` for what its sub-cube passes (the Numba kernels) do not compute."""

from __future__ import annotations

import argparse
from typing import Any

from verify.errors import ValidationError


def check_table_flag(args: argparse.Namespace) -> None:
    """--table is carried in the JSON: without --json it would be ignored, so it is refused."""
    if getattr(args, "table", False) and not getattr(args, "json", False):
        raise ValidationError("--table", "--json as well (the table is carried in the JSON)")


def add_table_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--table",
        action="store_true",
        help="with --json: carry the certified truth table itself, bit-packed (see docs/torch.md)",
    )


def packed_table(table: Any) -> dict[str, Any]:
    """The certified table bit-packed: bit i of the bytes (little-endian bit order within each
    byte, ``np.packbits(..., bitorder="little")``) is string i (x_1 the least significant bit of
    i, model-spec's order), as hex text: ``ones`` the strings certified 1, ``certified`` the
    strings certified 0 or 1 (a string in neither is 0 only where it is certified)."""
    import numpy as np

    def pack(mask: Any) -> str:
        return np.packbits(np.asarray(mask, dtype=bool), bitorder="little").tobytes().hex()

    return {
        "strings": int(table.label.size),
        "encoding": "hex of packbits(bitorder=little): bit i = string i, x_1 = bit 0 of i",
        "ones": pack(table.label == 1),
        "certified": pack(table.certified & ((table.label == 0) | (table.label == 1))),
    }


def table_header(config: Any, n_bits: int) -> dict[str, Any]:
    """The JSON's first entries: the config, N, the threshold and "layer_norm" (the model's
    layer-norm form, its formula and eps)."""
    from verify.model.spec.ln_forms import ln_formula

    form = {"form": config.ln_form, "formula": ln_formula(config.ln_form), "eps": config.ln_eps}
    return {"config": config.to_dict(), "N": n_bits, "threshold": config.threshold,
            "layer_norm": form}  # fmt: skip


def not_evaluated_for_ln_form(form: str) -> dict[str, Any]:
    """The statements entry of a model whose layer norm is ``form`` (not torch's)."""
    from verify.model.spec.ln_forms import ln_formula

    return {
        "statement": "all",
        "applies": False,
        "says": "not evaluated: the papers' bounds and their constants are derived for torch's"
        f" layer norm ({ln_formula('torch')}), not for this one ({ln_formula(form)})",
    }


def refuse_executor(executor: Any, radius: Any) -> None:
    """``--executor`` runs the Numba kernels on sub-cubes: refuse parameter balls (which they do
    not take). Both layer-norm forms run (the kernels take ``ln_form`` as a flag)."""
    if executor is not None and radius:
        raise ValidationError(
            "--executor",
            "a model with exact parameters (the sub-cube passes run the Numba kernels)",
            "parameter balls",
            "run without --executor (N <= 20)",
        )
