"""The transformer as a source of Boolean functions for ``python -m verify profile``.

``python -m verify profile --model params.npz -N 16`` or ``--random --scheme xavier_uniform
--seed 0 -D 16 -L 2 [-H 2] [--eps 0] [--save params.npz]``: the certified truth table of the
transformer becomes the BooleanFunction whose profile is printed, with the certification counts.
The architecture flags (-D, -L, -H, --eps, --scheme, --scale) describe a *drawn* model: with
``--model`` (the file fixes them) or without a transformer source they are refused, not ignored.
Bits that stay uncertain after the high-precision passes are filled with the float64 sign only so
that a profile can be shown, and the output then says, in so many words, that it is not certified.
"""

from __future__ import annotations

import argparse
from typing import Any

from verify.commands._options import (
    add_model_flags,
    check_heads,
    model_value,
    output_file,
    typed,
)
from verify.errors import ValidationError


def add_model_options(p: argparse.ArgumentParser) -> None:
    """Add --model/--random/--save and the shared model flags (``--seed`` is the command's)."""
    g = p.add_argument_group("transformer source (instead of --family)")
    g.add_argument("--model", default=None, metavar="PARAMS.npz", help="a parameter file")
    g.add_argument("--random", action="store_true", help="draw parameters (uses --seed)")
    add_model_flags(g)
    g.add_argument("--save", default=None, metavar="PARAMS.npz", help="write the drawn params")


def check_model_options(args: argparse.Namespace) -> None:
    """Refuse flags that would be ignored, and check --save's path, before any work."""
    flags = typed(args)
    if args.model and args.random:
        raise ValidationError("--model", "either --model or --random, not both", args.model)
    if args.model and flags:
        raise ValidationError(
            flags[0],
            "no architecture flag with --model (the parameter file fixes the model)",
        )
    if not model_requested(args):
        if flags:
            raise ValidationError(flags[0], "--random (it describes a drawn transformer)")
        if args.save:
            raise ValidationError("--save", "--random (it writes the drawn parameters)")
    if args.random:
        check_heads([model_value(args, "d_model")], model_value(args, "n_heads"))
    if args.save:
        if not args.save.endswith(".npz"):
            raise ValidationError("--save", "a file name ending in .npz", args.save)
        output_file("--save", args.save)


def model_requested(args: argparse.Namespace) -> bool:
    """True if the command should analyse a transformer."""
    return bool(getattr(args, "model", None) or getattr(args, "random", False))


def load_or_draw(args: argparse.Namespace) -> Any:
    """The Params named by --model or drawn by --random (and saved with --save)."""
    from verify.model import ModelConfig, Params, init_params

    check_model_options(args)
    if args.model:
        params = Params.load(args.model)
    else:
        cfg = ModelConfig(
            d_model=model_value(args, "d_model"),
            n_layers=model_value(args, "n_layers"),
            n_heads=model_value(args, "n_heads"),
            ln_eps=model_value(args, "eps"),
        )
        seed = 0 if args.seed is None else args.seed
        params = init_params(cfg, model_value(args, "scheme"), seed, model_value(args, "scale"))
    if args.save:
        try:
            params.save(args.save)
        except OSError as exc:
            raise ValidationError("--save", "a writable file path", args.save) from exc
    return params


def model_function(args: argparse.Namespace) -> Any:  # -> BooleanFunction
    """The certified Boolean function of the transformer, with certification counts in params."""
    import numpy as np

    from verify.boolean import BooleanFunction
    from verify.model.certified.truth_table import truth_table

    params = load_or_draw(args)
    tt = truth_table(params, args.n_bits)
    table = tt.label.copy()
    uncertain = ~tt.certified
    with np.errstate(invalid="ignore"):
        table[uncertain] = (tt.T[uncertain] > params.config.threshold).astype(np.int8)
    cfg = params.config
    source = args.model or (
        f"random {model_value(args, 'scheme')} seed={0 if args.seed is None else args.seed}"
        f" scale={model_value(args, 'scale')}"
    )
    info = {
        "source": source,
        "config": cfg.to_dict(),
        "certified_float64": tt.n_float64,
        "certified_high_precision": tt.n_high_precision,
        "uncertain": tt.n_uncertain,
        "profile_certified": tt.n_uncertain == 0,
    }
    if args.save:
        info["saved"] = args.save
    name = f"transformer(D={cfg.d_model}, L={cfg.n_layers}, H={cfg.n_heads}, eps={cfg.ln_eps})"
    return BooleanFunction(table.astype(np.uint8), name=name, params={"transformer": info})


def print_model_info(f: Any, *, json_mode: bool = False) -> None:
    """Print the certification counts of a transformer-built function (nothing otherwise).
    With ``json_mode`` (the counts are in the JSON) only the warning, on stderr."""
    import sys

    info = f.params.get("transformer") if hasattr(f, "params") else None
    if not info:
        return
    if not json_mode:
        print(f"source: {info['source']}")
        print(
            f"bits certified at float64: {info['certified_float64']}, at higher precision:"
            f" {info['certified_high_precision']}, uncertain: {info['uncertain']}"
        )
    if not info["profile_certified"]:
        print(
            f"WARNING: profile NOT certified: {info['uncertain']} bits are uncertain"
            " (filled with their float64 sign only to draw this profile)",
            file=sys.stderr if json_mode else sys.stdout,
        )
    if "saved" in info and not json_mode:
        print(f"parameters written to {info['saved']}")
