"""``python -m verify profile --family NAME -N 10 [family parameters] [--plot FILE] [--json]``.

Prints the exact sensitivity profile K_0..K_N of a Boolean function, its minimum / average /
maximum sensitivity and K_0. The function comes from :func:`function_from_args`, the one place
that turns command-line arguments into a BooleanFunction (further sources add options there).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from verify.commands._model_source import add_model_options, check_model_options
from verify.commands._options import (
    add_allow_large,
    add_json,
    add_n_bits,
    add_plot,
    model_value,
    parse_param_value,
    plot_file,
)
from verify.errors import ValidationError

# family parameters with their own flag (passed to the family only when given)
_PARAM_FLAGS: tuple[tuple[str, Any, str], ...] = (
    ("m", int, "size of the subset (sparse_parity, sparse_majority)"),
    ("i", int, "variable index, 1-based (dictator)"),
    ("k", int, "threshold (threshold) or modulus (mod)"),
    ("tie", str, "tie rule at even N: zero (default) or one (majority, sparse_majority)"),
    ("seed", int, "seed of the random family"),
    ("value", int, "0 or 1 (constant)"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "profile",
        help="exact sensitivity profile of a Boolean function family",
        description=(
            "Print the exact sensitivity profile K_n = #{x : s(x) = n} over all 2^N strings,"
            " the minimum / average / maximum sensitivity and K_0 (N <= 30), of a Boolean family"
            " or of a transformer (--random or --model: its certified truth table)."
        ),
    )
    p.add_argument("--family", default="majority", help="family name (default majority)")
    add_n_bits(p)
    for name, typ, text in _PARAM_FLAGS:
        p.add_argument(f"--{name}", type=typ, default=None, help=text)
    p.add_argument(
        "--subset", default=None, metavar="I,J,...", help="explicit 1-based variable subset"
    )
    p.add_argument("--negate", action="store_true", help="negated dictator / first")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other family parameter (int, float, true/false, comma list or text)",
    )
    add_plot(p, "draw the profile K_n / 2^N")
    add_json(p, "the profile")
    add_model_options(p)
    add_allow_large(p)
    p.set_defaults(func=run, flag_names={"path": "--model", "params": "--model"})


def _subset(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValidationError("--subset", "comma-separated integers, e.g. 1,3,5", text) from None


def family_params(args: argparse.Namespace) -> dict[str, Any]:
    """The family parameters given on the command line."""
    params: dict[str, Any] = {
        name: getattr(args, name) for name, _, _ in _PARAM_FLAGS if getattr(args, name) is not None
    }
    if args.subset is not None:
        params["subset"] = _subset(args.subset)
    if args.negate:
        params["negate"] = True
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValidationError("--param", "KEY=VALUE with KEY a parameter name", item)
        params[key] = parse_param_value(value)
    return params


def function_from_args(args: argparse.Namespace):  # -> BooleanFunction
    """The Boolean function the command analyses (the one source of it)."""
    from verify.boolean import make_family
    from verify.commands._model_source import model_function, model_requested

    if model_requested(args):
        return model_function(args)
    return make_family(args.family, args.n_bits, **family_params(args))


def profile_summary(f) -> dict[str, Any]:
    """Profile, K_0, min / average / max sensitivity (and the closed form when known)."""
    from verify.boolean import (
        average_sensitivity_exact,
        closed_form_profile,
        get_family,
        has_closed_form,
        sensitivity_profile,
    )

    profile = sensitivity_profile(f)
    nonzero = [k for k, c in enumerate(profile) if c]
    avg = average_sensitivity_exact(f)
    out: dict[str, Any] = {
        "function": f.name,
        "N": f.n,
        "params": {k: v for k, v in f.params.items() if k not in ("family", "n")},
        "profile": [int(c) for c in profile],
        "K_0": int(profile[0]),
        "min_sensitivity": nonzero[0],
        "average_sensitivity": float(avg),
        "average_sensitivity_exact": str(avg),
        "max_sensitivity": nonzero[-1],
    }
    family = f.params.get("family")
    params = {k: v for k, v in f.params.items() if k not in ("family", "n")}
    if family and has_closed_form(family):
        closed = closed_form_profile(family, f.n, **params)
        out["closed_form_agrees"] = bool((closed == profile).all())
    if family and get_family(family).min_sensitivity is not None:
        declared = int(
            get_family(family).min_sensitivity(f.n, **{**get_family(family).defaults, **params})
        )
        out["declared_min_sensitivity"] = declared
        out["declared_min_sensitivity_agrees"] = declared == nonzero[0]
    # Cor 4.6's criterion: no zero-sensitivity string (K_0 = 0 < N^e) at this N
    out["cor_4_6_flag"] = int(profile[0]) == 0
    return out


def _print_table(summary: dict[str, Any]) -> None:
    n = summary["N"]
    total = 1 << n
    print(f"{summary['function']}: sensitivity profile over all 2^{n} = {total} strings")
    print(f"{'n':>4} {'K_n':>14} {'K_n / 2^N':>12}")
    for k, c in enumerate(summary["profile"]):
        print(f"{k:>4} {c:>14} {c / total:>12.6g}")
    print(f"K_0 (zero-sensitivity strings): {summary['K_0']}")
    print(
        f"sensitivity: min {summary['min_sensitivity']}, average"
        f" {summary['average_sensitivity']:.6g} (= {summary['average_sensitivity_exact']}),"
        f" max {summary['max_sensitivity']}"
    )
    if "closed_form_agrees" in summary:
        print(f"closed form agrees: {summary['closed_form_agrees']}")
    if "declared_min_sensitivity" in summary:
        print(
            f"declared minimum sensitivity {summary['declared_min_sensitivity']}:"
            f" {'agrees' if summary['declared_min_sensitivity_agrees'] else 'DISAGREES'}"
        )
    if summary.get("cor_4_6_flag"):
        print(
            "Cor 4.6: no zero-sensitivity string at this N (K_0 = 0 < N^e): if that persists,"
            " unlearnable at eps = 0 for large N (almost every theta fails to recognise it)"
        )


def profile_figure(summary: dict[str, Any]):  # -> FigureData
    """Bars of K_n / 2^N against n (log scale when they span many decades)."""
    from verify.registry import FigureData

    n = summary["N"]
    frac = [c / (1 << n) for c in summary["profile"]]
    positive = [v for v in frac if v > 0]
    return FigureData(
        name="profile",
        title=f"{summary['function']}: K_0 = {summary['K_0']}",
        kind="bars",
        data={
            "series": [{"label": None, "x": list(range(n + 1)), "y": frac}],
            "xlabel": "sensitivity n",
            "ylabel": "K_n / 2^N",
            "logy": bool(positive and max(positive) / min(positive) > 1e3),
        },
    )


def plot_profile(summary: dict[str, Any], path: str) -> list:
    """Draw the profile into ``path`` (its suffix picks the format); the paths written."""
    from verify.report.figures import draw_figure_files

    return draw_figure_files(profile_figure(summary), path)


def plan_outputs(args: argparse.Namespace) -> None:
    """--plot (and its data file) and --save, checked against each other and --model."""
    from verify.outputs import OutputPlan

    plan = OutputPlan()
    plot_file(args.plot, plan)
    if args.save:
        plan.add("--save", args.save)
    if args.model:
        if not Path(args.model).is_file():
            raise ValidationError("--model", "an existing .npz parameter file", args.model)
        plan.add_input("--model", args.model)
    plan.check()


def check_profile_size(args: argparse.Namespace) -> None:
    """Refuse (exit 2, with the estimate) an N whose table the machine cannot hold."""
    from verify.commands._model_source import model_requested
    from verify.sizes import check_size, function_estimate

    if args.n_bits > 30:  # beyond the profile's own limit, which says so itself
        return
    if model_requested(args):
        est = function_estimate(
            "transformer", args.n_bits, model_value(args, "d_model"), model_value(args, "n_layers")
        )
    else:
        est = function_estimate("family", args.n_bits)
    check_size("-N/--n-bits", est, args.allow_large)
    if est.seconds > 2:  # a long step says so (no bar: one exhaustive pass)
        print(f"profile: {est.text()} ...", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    check_model_options(args)  # flags that would be ignored, --save's path: before any work
    plan_outputs(args)
    check_profile_size(args)
    f = function_from_args(args)
    summary = profile_summary(f)
    written = plot_profile(summary, args.plot) if args.plot else []
    from verify.commands._model_source import print_model_info

    if args.json:
        if written:
            summary = {**summary, "plot": [str(p) for p in written]}
        json.dump(summary, sys.stdout, indent=1)
        print()
        print_model_info(f, json_mode=True)
    else:
        _print_table(summary)
        print_model_info(f)
        if written:
            print("plot written to " + ", ".join(map(str, written)))
    return 0
