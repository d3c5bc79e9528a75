"""``check-model``'s comparison of the user's own model with the spec pass, before anything is
certified: the user's module (pickled or ``--module``) on all strings for N <= 12, otherwise a
seeded sample plus the strings nearest the threshold; and ``--reference-logits FILE``. A
difference beyond the float-rounding tolerance raises ModelMismatchError (see
``verify.torch.compare``)."""

from __future__ import annotations

import argparse
from typing import Any


def compare_user_model(
    args: argparse.Namespace, params: Any, module: Any, n_bits: int
) -> tuple[dict[str, Any], Any]:
    """(what was compared, for the report; (indices, the module's own outputs) or None, for the
    agreement of its predictions with the certified labels). Raises ModelMismatchError on a
    difference."""
    from verify.boolean.function import all_bit_strings
    from verify.commands._checkpoint import load_reference_logits
    from verify.model import forward

    info: dict[str, Any] = {}
    signs = None
    if module is not None:
        from verify.torch.compare import (
            check_same_model,
            compare_outputs,
            comparison_strings,
            module_outputs,
        )

        every = all_bit_strings(n_bits)
        t_all = forward(params, every).T if n_bits > 12 else None
        thr = params.config.threshold
        idx = comparison_strings(n_bits, None if t_all is None else t_all - thr, args.seed)
        bits = every[idx]
        spec = t_all[idx] if t_all is not None else forward(params, bits).T
        tokens = args.module_input == "tokens" and params.config.eos
        wide, dtype, native = module_outputs(module, bits, tokens=tokens)
        cmp = check_same_model(compare_outputs(wide, spec, bits, dtype, "torch module's outputs"))
        info["module"] = _summary(cmp, "all" if n_bits <= 12 else f"seed {args.seed}")
        signs = (idx, native)
    if args.reference_logits:
        from verify.torch.compare import check_same_model, compare_outputs

        bits, logits, dtype = load_reference_logits(args.reference_logits, n_bits)
        spec = forward(params, bits).T
        cmp = check_same_model(compare_outputs(logits, spec, bits, dtype, "reference logits"))
        info["reference_logits"] = _summary(cmp, args.reference_logits)
    return info, signs


def _summary(cmp: Any, strings: str) -> dict[str, Any]:
    return {
        "compared": cmp.compared,
        "strings": strings,
        "largest_difference": cmp.largest,
        "tolerance": cmp.tolerance,
        "dtype": cmp.dtype,
        "line": cmp.message(),
    }


def prediction_agreement(outputs: Any, table: Any, threshold: float) -> dict[str, Any]:
    """How many certified labels the module's own predictions (its native-dtype outputs > the
    threshold, the label rule of the model) agree with, and the first strings where not."""
    import numpy as np

    from verify.model.spec.label_rule import predictions
    from verify.torch.compare import bit_string

    idx, native = outputs
    sure = table.certified[idx]
    pred = predictions(native, threshold)
    agree = (pred == table.label[idx]) & sure
    bad = idx[sure & ~agree][:5]
    n = table.n
    return {
        "agree": int(agree.sum()),
        "of": int(sure.sum()),
        "threshold": float(threshold),
        "first_disagreements": [bit_string((np.int64(i) >> np.arange(n)) & 1) for i in bad],
    }
