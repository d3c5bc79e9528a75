"""Is the layout of a bare state_dict confirmed, or only stated? And would another stated
layout have certified another function?

A bare state_dict's heads and norm placement are the user's statement (flags): the arrays have
the same shapes for every H dividing D and for either norm placement. The layout is *confirmed*
when the user's own outputs were compared with the spec pass (a module: ``--module`` or
``--trust-pickle``; or ``--reference-logits``), else only *stated*. For a stated layout
:func:`other_layouts` runs the layouts that fit the same file (every other H dividing D; the
other norm placement, the final norm being the file's; the other layer-norm formula,
``--ln-form``) on a sample of strings and names those whose certified labels differ from the
stated model's on some string: there the flags decide the function, so a wrong ``-H``,
``--norm`` or ``--ln-form`` would certify another model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

SAMPLE = 1024  # strings compared (all 2^N when fewer)


def _sample(n_bits: int, seed: int) -> np.ndarray:
    from verify.boolean.function import all_bit_strings

    total = 1 << n_bits
    if total <= SAMPLE:
        return all_bit_strings(n_bits)
    idx = np.sort(np.random.default_rng(seed).choice(total, size=SAMPLE, replace=False))
    return ((idx[:, None] >> np.arange(n_bits)) & 1).astype(np.uint8)


def _certified_labels(params: Any, bits: np.ndarray) -> np.ndarray:
    """Labels 1/0 at the model's threshold from the rigorous float64 pass; -2 where open."""
    from verify.model.certified.truth_table import certified_float64
    from verify.model.spec.label_rule import _labels_from_midrad

    mid, rad = certified_float64(params, bits, "numba")  # both layer-norm forms
    return _labels_from_midrad(mid, rad, 0.0, params.config.threshold)


def other_layouts(params: Any, n_bits: int, seed: int = 0) -> list[dict[str, Any]]:
    """For each other layout that fits ``params``' arrays (another H dividing D; the other norm
    placement): the flags that would state it, how many sampled strings both models certify,
    how many of those get a different label, and the first such string (x_1 first)."""
    from verify.model import Params
    from verify.torch.compare import bit_string

    cfg = params.config
    bits = _sample(n_bits, seed)
    stated = _certified_labels(params, bits)
    variants: list[tuple[str, Any]] = [
        (f"-H {h}", dataclasses.replace(cfg, n_heads=h))
        for h in range(1, cfg.d_model + 1)
        if cfg.d_model % h == 0 and h != cfg.n_heads
    ]
    other = "post" if cfg.norm_first else "pre"
    variants.append((f"--norm {other}", dataclasses.replace(cfg, norm_first=not cfg.norm_first)))
    form = "annotated" if cfg.ln_form == "torch" else "torch"  # the other layer-norm formula
    if cfg.d_model >= 2:
        variants.append((f"--ln-form {form}", dataclasses.replace(cfg, ln_form=form)))
    out = []
    for flags, alt_cfg in variants:
        alt = Params(alt_cfg, dict(params.items()))
        labels = _certified_labels(alt, bits)
        both = (stated >= 0) & (labels >= 0)
        differ = both & (labels != stated)
        first = np.flatnonzero(differ)
        out.append(
            {
                "flags": flags,
                "compared": int(both.sum()),
                "differ": int(differ.sum()),
                "first_difference": bit_string(bits[first[0]]) if first.size else None,
            }
        )
    return out


def layout_status(
    args: Any, params: Any, module: Any, compared: dict[str, Any], n_bits: int
) -> dict[str, Any] | None:
    """What check-model reports about the layout of a torch file (None for an .npz): confirmed
    against the user's outputs, or stated by flags (then :func:`other_layouts` too)."""
    if str(args.checkpoint).endswith(".npz"):
        return None
    by = []
    if "module" in compared:
        by.append(f"the user's module ({compared['module']['compared']} strings)")
    if "reference_logits" in compared:
        by.append(f"--reference-logits ({compared['reference_logits']['compared']} strings)")
    if by:
        return {"status": "confirmed", "by": by}
    return {
        "status": "stated",
        "by": ["flags"],
        "N": int(n_bits),
        "sample": int(min(1 << n_bits, SAMPLE)),
        "seed": int(args.seed),
        "other_layouts": other_layouts(params, n_bits, args.seed),
    }


def layout_lines(layout: dict[str, Any]) -> list[str]:
    """The lines check-model prints about ``layout_status``."""
    if layout["status"] == "confirmed":
        return ["layout: confirmed against " + " and ".join(layout["by"])]
    lines = [
        "layout: stated by the flags, not confirmed against the user's own outputs (--module,"
        " --trust-pickle or --reference-logits would confirm it)"
    ]
    others = layout["other_layouts"]
    diff = [o for o in others if o["differ"]]
    same = [o["flags"] for o in others if not o["differ"]]
    sample = f"{layout['sample']} strings" + (
        f" (seed {layout['seed']})" if layout["sample"] < 1 << layout.get("N", 0) else ""
    )
    for o in diff:
        lines.append(
            f"  WARNING: with {o['flags']} the same file computes a different function: certified"
            f" labels differ on {o['differ']} of {o['compared']} strings compared, first at"
            f" {o['first_difference']} (x_1 first); check that the flags are the model's"
        )
    if same:
        lines.append(f"  the same certified labels on {sample} with: " + ", ".join(same))
    return lines
