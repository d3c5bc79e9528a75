"""The command line's one flag vocabulary, shared by every command (see docs/cli.md).

Every command spells the same quantity with the same flag and the same default:

======================  =========================================  =======================
flag                    meaning                                    default
======================  =========================================  =======================
``-N, --n-bits``        input length N                             10
``-D, --d-model``       model width D                              16
``-L, --n-layers``      layers L                                   1
``-H, --n-heads``       attention heads                            2
``--eps``               layer-norm epsilon                         0
``--scheme``            init scheme                                uniform
``--scale``             init scale                                 1
``--seed`` / ``--seeds``  one seed (profile, report) / a set (sweep)  0 / 0:10
``-j, --jobs``          local worker processes (>= 1)              all cores
``--out``               output directory (report) or file (sweep)
``--plot``              a figure file ending in .png, .pdf or .svg
``--json``              print the results as JSON on stdout
``--no-progress``       no progress bar
``--allow-large``       run although the size estimate is refused  refused (exit 2)
======================  =========================================  =======================

Only the standard library is imported here: ``python -m verify --help`` must answer at once.
Internal argument names in errors raised deep inside the toolkit (``ln_eps``, ``d_model``,
``n_bits``, ``max_workers``, ...) are translated back into these flags by :func:`flag_message`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

# the shared defaults (a flag left out means this value)
DEFAULTS: dict[str, object] = {
    "n_bits": 10,
    "d_model": 16,
    "n_layers": 1,
    "n_heads": 2,
    "eps": 0.0,
    "scheme": "uniform",
    "scale": 1.0,
}
SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")  # = verify.model.SCHEMES
# ModelConfig's fields other than the grid axes (sweep --config KEY=VALUE); a test keeps this
# list equal to verify.model.ModelConfig's, so usage errors need not import the model
CONFIG_FIELDS = (
    "d_ff", "embedding", "eos", "final_norm", "ln_affine", "max_len", "norm_first", "pos_encoding",
    "ln_form", "threshold",
)  # fmt: skip
PLOT_SUFFIXES = (".png", ".pdf", ".svg")

# internal argument names (ValidationError.argument) -> the flag a user types
FLAGS: dict[str, str] = {
    "N": "-N/--n-bits",
    "n": "-N/--n-bits",
    "n_bits": "-N/--n-bits",
    "d_model": "-D/--d-model",
    "n_layers": "-L/--n-layers",
    "n_heads": "-H/--n-heads",
    "heads": "-H/--n-heads",
    "ln_eps": "--eps",
    "eps": "--eps",
    "scheme": "--scheme",
    "schemes": "--scheme",
    "scale": "--scale",
    "seed": "--seed",
    "seeds": "--seeds",
    "max_workers": "-j/--jobs",
    "workers": "-j/--jobs",
    "max_in_flight": "-j/--jobs",
    "family": "--family",
    "budget": "--quick/--full",
}


def flag_message(message: str, argument: str, overrides: dict[str, str] | None = None) -> str:
    """``message`` (a ValidationError's text about ``argument``) with internal names replaced by
    the flags of the command line (``overrides``: the command's own names, e.g. "path" ->
    "--model")."""
    names = {**FLAGS, **(overrides or {})}
    flag = names.get(argument)
    if flag is None and argument.startswith("model."):  # a --config KEY=VALUE field
        flag = f"--config {argument[len('model.') :]}"
    if flag and message.startswith(f"{argument}:"):
        message = flag + message[len(argument) :]
    # internal field names inside the explanation, e.g. "a divisor of d_model=15"
    inner = {k: v for k, v in names.items() if "_" in k}
    if inner:
        pattern = r"(?<![\w-])(" + "|".join(map(re.escape, inner)) + r")(?![\w])"
        head, sep, tail = message.partition(": ")
        message = head + sep + re.sub(pattern, lambda m: inner[m.group(1)], tail)
    return message


# ------------------------------------------------------------------------ argparse value types
def _int_at_least(minimum: int, what: str = "an integer"):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what} >= {minimum}, got {text!r}")
        return value

    parse.__name__ = "integer"
    return parse


def _real(
    minimum: float | None = None, strictly_positive: bool = False, maximum: float | None = None
):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a real number, got {text!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected a finite real number, got {text!r}")
        if value == 0.0 and any(c in "123456789" for c in text.lower().split("e")[0]):
            raise argparse.ArgumentTypeError(
                f"expected a real number float64 holds, got {text!r} (it underflows to 0;"
                " write 0 for zero)"
            )
        value += 0.0  # -0.0 is 0.0
        if strictly_positive and value <= 0:
            raise argparse.ArgumentTypeError(f"expected a real number > 0, got {text!r}")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"expected a real number >= {minimum}, got {text!r}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(
                f"expected a real number <= {maximum:.4g}, got {text!r}"
            )
        return value

    parse.__name__ = "real"
    return parse


positive_int = _int_at_least(1)
nonnegative_int = _int_at_least(0)
eps_value = _real(minimum=0.0)
real_value = _real()
scale_value = _real(strictly_positive=True, maximum=sys.float_info.max / 2)  # = MAX_SCALE


def jobs_value(text: str) -> int:
    """``-j``: a number of worker processes >= 1 (0 is refused, not read as 'all cores')."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected an integer >= 1, got {text!r} (leave -j out to use every core)"
        )
    return value


# ------------------------------------------------------------------------ shared flags
def add_n_bits(p: argparse.ArgumentParser, *, many: bool = False) -> None:
    kw: dict = {"nargs": "+"} if many else {}
    p.add_argument(
        "-N",
        "--n-bits",
        dest="n_bits",
        type=positive_int,
        default=[DEFAULTS["n_bits"]] if many else DEFAULTS["n_bits"],
        metavar="N",
        help=f"input length N{' (several allowed)' if many else ''} (default {DEFAULTS['n_bits']})",
        **kw,
    )


def add_model_flags(p: argparse._ActionsContainer, *, many: bool = False) -> None:
    """-D/--d-model, -L/--n-layers, -H/--n-heads, --eps, --scheme, --scale.

    With ``many`` (sweep) -D, -L, --eps and --scheme take several values (grid axes). The
    defaults are None so that a command can tell a flag the user typed from one left out
    (:func:`typed`); :func:`model_value` fills in the shared default."""
    kw: dict = {"nargs": "+"} if many else {}
    axes = " (several allowed)" if many else ""
    d = DEFAULTS
    p.add_argument(
        "-D",
        "--d-model",
        dest="d_model",
        type=positive_int,
        default=None,
        metavar="D",
        help=f"model width D{axes} (default {d['d_model']})",
        **kw,
    )
    p.add_argument(
        "-L",
        "--n-layers",
        dest="n_layers",
        type=positive_int,
        default=None,
        metavar="L",
        help=f"layers L{axes} (default {d['n_layers']})",
        **kw,
    )
    p.add_argument(
        "-H",
        "--n-heads",
        "--heads",
        dest="n_heads",
        type=positive_int,
        default=None,
        metavar="H",
        help=f"attention heads, a divisor of D (default {d['n_heads']})",
    )
    p.add_argument(
        "--eps",
        "--ln-eps",
        dest="eps",
        type=eps_value,
        default=None,
        metavar="EPS",
        help=f"layer-norm epsilon >= 0{axes} (default {d['eps']:g})",
        **kw,
    )
    p.add_argument(
        "--scheme",
        "--schemes",
        dest="scheme",
        choices=SCHEMES,
        default=None,
        metavar="SCHEME",
        help=f"init scheme{axes}: {', '.join(SCHEMES)} (default {d['scheme']})",
        **kw,
    )
    p.add_argument(
        "--scale",
        type=scale_value,
        default=None,
        metavar="S",
        help=f"init scale > 0 (uniform bound, gaussian std, xavier gain; default {d['scale']:g})",
    )


MODEL_FLAGS = {
    "d_model": "-D/--d-model",
    "n_layers": "-L/--n-layers",
    "n_heads": "-H/--n-heads",
    "eps": "--eps",
    "scheme": "--scheme",
    "scale": "--scale",
}


def typed(args: argparse.Namespace, names=MODEL_FLAGS) -> list[str]:
    """The flags among ``names`` (dest -> flag) that the user gave."""
    return [flag for dest, flag in names.items() if getattr(args, dest, None) is not None]


def model_value(args: argparse.Namespace, dest: str, *, many: bool = False):
    """The value of a model flag, or its shared default when left out."""
    value = getattr(args, dest, None)
    if value is None:
        value = [DEFAULTS[dest]] if many else DEFAULTS[dest]
    return value


def add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-j",
        "--jobs",
        "--workers",
        dest="jobs",
        type=jobs_value,
        default=None,
        metavar="J",
        help="local worker processes, >= 1 (default: one per core)",
    )


def add_json(p: argparse.ArgumentParser, what: str = "the results") -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as JSON on stdout (messages go to stderr)",
    )


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_allow_large(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run even when the estimated memory exceeds what the machine has free or the"
        " estimated time exceeds 24 h (without it such a run exits 2 with the estimate)",
    )


def add_plot(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help=f"{what}, written to FILE exactly; FILE ends in .png, .pdf or .svg (the figure's"
        " data goes beside it: x.png -> x.data.csv)",
    )


# ------------------------------------------------------------------------ output paths
def _probe_dir(directory: Path) -> str | None:
    """Why files cannot be created in ``directory`` (created if missing), or None."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "it is an existing file, not a directory"
    except OSError as exc:
        return exc.strerror or str(exc)
    if not directory.is_dir():
        return "it is not a directory"
    try:
        fd, name = tempfile.mkstemp(prefix=".verify-probe-", dir=directory)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def output_dir(flag: str, path: str | os.PathLike[str]):
    """Check (before any work) that ``path`` is, or can be made, a writable directory."""
    from verify.errors import ValidationError
    from verify.outputs import check_path_name

    p = check_path_name(flag, path)
    if p.exists() and not p.is_dir():
        raise ValidationError(flag, "a directory", str(path), "it is an existing file")
    why = _probe_dir(p)
    if why:
        raise ValidationError(flag, "a writable directory", str(path), why)
    return p


def output_file(flag: str, path: str | os.PathLike[str], *, suffixes: tuple[str, ...] = ()):
    """Check (before any work) that ``path`` can be written as a file: not a directory, its
    folder writable (created if missing), its suffix one of ``suffixes`` when given."""
    from verify.errors import ValidationError
    from verify.outputs import check_path_name

    p = check_path_name(flag, path)
    if str(path).endswith(os.sep) or p.is_dir():
        raise ValidationError(flag, "a file path, not a directory", str(path))
    if suffixes and p.suffix.lower() not in suffixes:
        raise ValidationError(flag, "a file name ending in " + ", ".join(suffixes), str(path))
    why = _probe_dir(p.parent if str(p.parent) else Path("."))
    if why:
        raise ValidationError(flag, "a file in a writable directory", str(path), why)
    if p.exists() and not os.access(p, os.W_OK):
        raise ValidationError(flag, "a writable file", str(path), "permission denied")
    return p


def plot_file(path: str | None, plan=None):
    """``--plot FILE``: checked before any work; None when not given. With ``plan`` (an
    :class:`verify.outputs.OutputPlan`) the figure's files (FILE and FILE.data.csv) join it."""
    if path is None:
        return None
    from verify.outputs import figure_paths

    p = output_file("--plot", path, suffixes=PLOT_SUFFIXES)
    if plan is not None:
        plan.add("--plot", *figure_paths(p))
    return p


# ------------------------------------------------------------------------ cheap model checks
def check_heads(d_models: list[int], n_heads: int) -> None:
    """Every D a multiple of H (what ModelConfig demands), checked without importing it."""
    from verify.errors import ValidationError

    for d in d_models:
        if d % n_heads:
            raise ValidationError(
                "-D/--d-model", f"multiples of -H/--n-heads={n_heads}", d, "D = H x head width"
            )


def check_config_keys(config: dict[str, object]) -> None:
    """``--config`` keys must be ModelConfig fields other than the grid axes."""
    from verify.errors import ValidationError

    for key in config:
        if key not in CONFIG_FIELDS:
            raise ValidationError(
                f"--config {key}", "a ModelConfig field: " + ", ".join(CONFIG_FIELDS), key
            )


def parse_param_value(text: str) -> Any:
    """A family parameter's value from the command line: true/false, a comma list (e.g.
    ``subset=1,3,5``; each item parsed the same way), an int, a float, else the text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if "," in text:
        return [parse_param_value(t) for t in text.split(",") if t]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text
