"""Command-line support for the transformer as a source of Boolean functions.

``python -m verify profile --model params.npz -N 16`` or ``--random --scheme xavier_uniform
--seed 0 -D 16 -L 2 [-H 2] [--eps 0] [--save params.npz]``: the certified truth table of the
transformer becomes the BooleanFunction whose profile is printed, with the certification counts.
Bits that stay uncertain after the high-precision passes are filled with the float64 sign only so
that a profile can be shown, and the output then says, in so many words, that it is not certified.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from verify.errors import ValidationError


def add_model_options(p: argparse.ArgumentParser) -> None:
    """Add --model/--random/--scheme/-D/-L/-H/--eps/--save (``--seed`` is the command's)."""
    g = p.add_argument_group("transformer source (instead of --family)")
    g.add_argument("--model", default=None, metavar="PARAMS.npz", help="a parameter file")
    g.add_argument("--random", action="store_true", help="draw parameters (uses --seed)")
    g.add_argument(
        "--scheme",
        default="xavier_uniform",
        help="uniform, gaussian, xavier_uniform (default), xavier_normal",
    )
    g.add_argument("--scale", type=float, default=1.0, help="init scale (B or gain; default 1)")
    g.add_argument("-D", dest="d_model", type=int, default=16, help="d_model (default 16)")
    g.add_argument("-L", dest="n_layers", type=int, default=2, help="layers (default 2)")
    g.add_argument("-H", dest="n_heads", type=int, default=2, help="heads (default 2)")
    g.add_argument("--eps", type=float, default=0.0, help="layer-norm epsilon (default 0)")
    g.add_argument("--save", default=None, metavar="PARAMS.npz", help="write the drawn params")


def model_requested(args: argparse.Namespace) -> bool:
    """True if the command should analyse a transformer."""
    return bool(getattr(args, "model", None) or getattr(args, "random", False))


def load_or_draw(args: argparse.Namespace) -> Any:
    """The Params named by --model or drawn by --random (and saved with --save)."""
    from verify.model import ModelConfig, Params, init_params

    if args.model and args.random:
        raise ValidationError("--model", "either --model or --random, not both", args.model)
    if args.model:
        params = Params.load(args.model)
    else:
        cfg = ModelConfig(
            d_model=args.d_model, n_layers=args.n_layers, n_heads=args.n_heads, ln_eps=args.eps
        )
        seed = 0 if args.seed is None else args.seed
        params = init_params(cfg, args.scheme, seed, scale=args.scale)
    if args.save:
        try:
            params.save(args.save)
        except OSError as exc:
            raise ValidationError("--save", "a writable file path", args.save) from exc
    return params


def model_function(args: argparse.Namespace) -> Any:  # -> BooleanFunction
    """The certified Boolean function of the transformer, with certification counts in params."""
    from verify.boolean import BooleanFunction
    from verify.model.truth_table import truth_table

    params = load_or_draw(args)
    tt = truth_table(params, args.n)
    table = tt.label.copy()
    uncertain = ~tt.certified
    with np.errstate(invalid="ignore"):
        table[uncertain] = (tt.T[uncertain] > 0).astype(np.int8)
    cfg = params.config
    source = args.model or (
        f"random {args.scheme} seed={0 if args.seed is None else args.seed} scale={args.scale}"
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


def print_model_info(f: Any) -> None:
    """Print the certification counts of a transformer-built function (nothing otherwise)."""
    info = f.params.get("transformer") if hasattr(f, "params") else None
    if not info:
        return
    print(f"source: {info['source']}")
    print(
        f"bits certified at float64: {info['certified_float64']}, at higher precision:"
        f" {info['certified_high_precision']}, uncertain: {info['uncertain']}"
    )
    if not info["profile_certified"]:
        print(
            f"WARNING: profile NOT certified: {info['uncertain']} bits are uncertain"
            " (filled with their float64 sign only to draw this profile)"
        )
    if "saved" in info:
        print(f"parameters written to {info['saved']}")
