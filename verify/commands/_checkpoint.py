"""Loading ``check-model``'s CHECKPOINT: a model-spec ``.npz``, a torch state_dict (every layout
choice the file cannot tell given by a flag, no default), a pickled module (``--trust-pickle``)
or the user's own module class (``--module MODULE:NAME``) holding a state_dict.

With a module, ``check-model`` later runs it and compares its outputs with the spec pass
(``verify.torch.compare``); with a bare state_dict, ``--reference-logits FILE`` does the same
with the user's own outputs.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from verify.commands._annotated import (
    add_annotated_options,
    add_layer_norm_options,
    layer_norm_line,
    load_if_annotated,
    names_the_module_takes,
    state_mismatch,
)
from verify.errors import ValidationError

# the layout flags a bare state_dict needs (the file cannot tell them): flag -> its choices
LAYOUT_FLAGS = {
    "--norm": "{post,pre}",
    "--final-norm": "{yes,no}",
    "--activation": "{relu,gelu}",
    "--eos": "{yes,no}",
}


def add_checkpoint_options(p: argparse.ArgumentParser) -> None:
    """The flags that say what a torch file does not (see docs/torch.md)."""
    g = p.add_argument_group("what a bare state_dict does not tell (required, no defaults)")
    g.add_argument("-H", "--n-heads", type=int, default=None, help="attention heads")
    add_layer_norm_options(g)
    g.add_argument("--norm", choices=("post", "pre"), default=None, help="norm placement")
    g.add_argument("--pre-ln", dest="norm", action="store_const", const="pre", help="--norm pre")
    g.add_argument("--post-ln", dest="norm", action="store_const", const="post", help="--norm post")
    g.add_argument("--final-norm", choices=("yes", "no"), default=None, help="a final LayerNorm")
    g.add_argument("--activation", choices=("relu", "gelu"), default=None, help="MLP activation")
    g.add_argument("--eos", choices=("yes", "no"), default=None, help="an eos token appended")
    g.add_argument("--no-eos", dest="eos", action="store_const", const="no", help="--eos no")
    g.add_argument("--pos", default=None, choices=("sinusoidal", "none", "learned"))
    g.add_argument(
        "--threshold",
        type=_finite_real,
        default=None,
        metavar="T",
        help="the label rule: the model predicts 1 iff its output > T (required for a torch"
        " file: e.g. 0.5 for MSE on 0/1 targets or a sigmoid's logit 0; an .npz says its own, 0"
        " unless written)",
    )
    g.add_argument("--prefix", default=None, help="strip this prefix from every name first")
    add_annotated_options(g)
    g.add_argument(
        "--key-map", action="append", default=[], metavar="OLD=NEW", help="rename (prefix if .)"
    )
    m = p.add_argument_group("the user's own model, compared with the spec pass")
    m.add_argument(
        "--trust-pickle", action="store_true", help="allow a pickled nn.Module (runs its code)"
    )
    m.add_argument(
        "--module",
        default=None,
        metavar="MODULE:NAME",
        help="build the model with NAME(**KWARGS) from MODULE (a module name or a .py file)"
        " and load CHECKPOINT's state_dict into it",
    )
    m.add_argument(
        "--module-kwargs",
        default=None,
        metavar="JSON",
        help="the keyword arguments of --module's constructor, as a JSON object (e.g."
        ' \'{"hidden_dim": 16, "num_attn_heads": 2}\')',
    )
    m.add_argument(
        "--module-input",
        choices=("bits", "tokens", "seq-first", "ids"),
        default="bits",
        help="what the module's forward takes: int64 bits (B, N), or tokens with eos 2 appended;"
        " annotated-transformer modules: token ids sequence first (S, B) (seq-first, their"
        " default, with lengths when the forward takes them) or batch first (ids)",
    )
    m.add_argument(
        "--reference-logits",
        default=None,
        metavar="FILE",
        help="the user's outputs on some strings (.npz with bits, logits; or .csv bits,logit)",
    )
    m.add_argument("--seed", type=int, default=0, help="the sample of strings compared when N > 12")


def _finite_real(text: str) -> float:
    """A finite real number as typed (one that float64 turns into 0 or infinity refused)."""
    from verify.commands._options import real_value

    return real_value(text)


def module_kwargs(text: str | None) -> dict[str, Any]:
    """``--module-kwargs JSON``: a JSON object of keyword arguments (one-line error otherwise)."""
    import json

    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            "--module-kwargs", "a JSON object, e.g. '{\"hidden_dim\": 16}'", text[:80],
            f"{exc.msg} at column {exc.colno}",
        ) from exc  # fmt: skip
    if not isinstance(value, dict):
        raise ValidationError("--module-kwargs", "a JSON object of keyword arguments", text[:80])
    return value


def pairs(items: list[str], flag: str) -> dict[str, str]:
    """OLD=NEW items as a dict (ValidationError naming ``flag`` otherwise)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ValidationError(flag, "OLD=NEW", item)
        k, v = item.split("=", 1)
        out[k] = v
    return out


def _main_pickle(path: Path, exc: BaseException) -> ValidationError | None:
    """The one-line error for a module pickled from a script's __main__, if that is the cause."""
    text = str(exc)
    if "__main__" not in text:
        return None
    m = re.search(r"attribute '(\w+)' on <module '__main__'", text) or re.search(
        r"__main__\.(\w+)", text
    )
    cls = m.group(1) if m else "YourModel"
    return ValidationError(
        "CHECKPOINT",
        f"a model that can be loaded here; {path.name} pickles class {cls} from a script's"
        " __main__, which no other program can import",
        hint=f"save model.state_dict() and pass --module SCRIPT.py:{cls} (the script that"
        f" defines {cls}; keep its training under `if __name__ == '__main__':`), or give the"
        " state_dict alone with the layout flags",
    )


def _torch_load(path: Path, trust_pickle: bool) -> Any:
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a pickled module, or not a torch file
        main = _main_pickle(path, exc)
        if main is not None:
            raise main from exc
        if not trust_pickle:
            raise ValidationError(
                "CHECKPOINT",
                "a state_dict (or --trust-pickle for a pickled nn.Module)",
                f"{path.name}: {type(exc).__name__}",
            ) from exc
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        main = _main_pickle(path, exc)
        if main is not None:
            raise main from exc
        if isinstance(exc, (ModuleNotFoundError, AttributeError)):
            raise ValidationError(
                "CHECKPOINT",
                "a pickled module whose class can be imported here",
                f"{path.name}: {type(exc).__name__}: {exc}"[:200],
                "run from the folder that holds the class's module or put it on PYTHONPATH,"
                " or save model.state_dict() and pass --module FILE.py:CLASS",
            ) from exc
        raise ValidationError(
            "CHECKPOINT", "a torch file", f"{path.name}: {type(exc).__name__}: {exc}"[:200]
        ) from exc


def _build_module(
    spec: str, state: dict[str, Any], kwargs: dict[str, Any], prefix: str | None = None
) -> Any:
    """NAME(**kwargs) from MODULE (an importable name or a .py path), with ``state`` loaded
    strictly (the names as they are when they are the module's, else with ``prefix``
    stripped)."""
    import importlib
    import importlib.util

    import torch

    if ":" not in spec:
        raise ValidationError("--module", "MODULE:NAME (e.g. train.py:Classifier)", spec)
    where, name = spec.rsplit(":", 1)
    try:
        if where.endswith(".py"):
            file = Path(where)
            if not file.is_file():
                raise ValidationError("--module", "an existing .py file before ':'", where)
            loader = importlib.util.spec_from_file_location(f"_check_model_{file.stem}", file)
            mod = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(mod)
        else:
            mod = importlib.import_module(where)
    except ValidationError:
        raise
    except Exception as exc:
        raise ValidationError(
            "--module", "an importable module", f"{where}: {type(exc).__name__}: {exc}"[:200]
        ) from exc
    factory: Any = mod
    for part in name.split("."):
        factory = getattr(factory, part, None)
    if not callable(factory):
        raise ValidationError("--module", f"a class or factory named {name} in {where}", spec)
    call = f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"
    try:
        module = factory(**kwargs)
    except Exception as exc:
        what = f"{call} to build the model" + (
            "" if kwargs else " (constructor arguments go in --module-kwargs JSON)"
        )
        raise ValidationError(
            "--module", what, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        ) from exc
    if not isinstance(module, torch.nn.Module):
        raise ValidationError("--module", f"{call} returning an nn.Module", type(module).__name__)
    state = names_the_module_takes(state, set(module.state_dict()), prefix)
    try:
        module.load_state_dict(state, strict=True)
    except Exception as exc:
        text = state_mismatch(set(module.state_dict()), state, exc)
        raise ValidationError(
            "--module",
            f"a model whose state_dict is CHECKPOINT's ({call})",
            text,
            "--prefix strips a prefix of the file's names; --show-keys lists them",
        ) from exc
    return module.eval()


def _state_of(obj: Any) -> dict[str, Any]:
    import torch

    state = obj
    for key in ("state_dict", "model_state_dict", "model"):
        if key in obj and isinstance(obj[key], dict):
            state = obj[key]
            break
    return {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}


def _layout_fields(
    args: argparse.Namespace, spec: dict[str, Any], module: Any, no_eos_row: bool
) -> dict[str, Any]:
    """ModelConfig fields from the layout flags; with a bare state_dict every missing one (and
    -H, --eps, --pos where the file does not tell them) is listed in one error."""
    from verify.torch.layout import check_supported, module_layout

    told = module_layout(module) if module is not None else None
    has_final = any(k.startswith("final_norm.") for k in spec)
    if module is None:
        missing = [f"{flag} {choices}" for flag, choices in LAYOUT_FLAGS.items()
                   if getattr(args, flag[2:].replace("-", "_")) is None]  # fmt: skip
        if args.n_heads is None:
            missing.insert(0, "-H/--n-heads")
        if args.eps is None:
            missing.insert(1 if args.n_heads is None else 0, "--eps")
        if args.pos is None and "pos_embedding" not in spec:
            missing.append("--pos {sinusoidal,none}")
        if args.threshold is None:
            missing.append("--threshold T")
        if missing:
            raise ValidationError(
                "CHECKPOINT",
                "the flags for what a bare state_dict cannot tell (no defaults): "
                + ", ".join(missing),
                "missing",
            )
        if has_final != (args.final_norm == "yes"):
            raise ValidationError(
                "--final-norm",
                "yes (the file holds a final norm)" if has_final else "no (the file has none)",
                args.final_norm,
            )
    if told is not None and told.norm_first is not None:
        said = {
            "--norm": ("pre" if told.norm_first else "post", args.norm),
            "--final-norm": ("yes" if told.final_norm else "no", args.final_norm),
            "--activation": (told.activation, args.activation),
        }
        for flag, (module_says, given) in said.items():
            if given is not None and given != module_says:
                raise ValidationError(flag, f"{module_says} (the module's layers say so)", given)
    if args.threshold is None:
        raise ValidationError(
            "--threshold",
            "T, the label rule of the model (it predicts 1 iff its output > T; no default for a"
            " torch model: e.g. 0.5 for MSE on 0/1 targets, 0 for +-1 targets or a logit)",
            "missing",
        )
    fields: dict[str, Any] = {"threshold": args.threshold}
    if args.n_heads is not None:
        fields["n_heads"] = args.n_heads
    if args.eps is not None:
        fields["ln_eps"] = args.eps
    if args.pos is not None:
        fields["pos_encoding"] = args.pos
    if getattr(args, "ln_form", None) is not None:
        fields["ln_form"] = args.ln_form
    norm = args.norm
    if norm is None and told is not None and told.norm_first is not None:
        norm = "pre" if told.norm_first else "post"
    final = args.final_norm or (
        ("yes" if told.final_norm else "no")
        if told is not None and told.norm_first is not None
        else ("yes" if has_final else "no")
    )
    activation = args.activation or (told.activation if told is not None else None) or "relu"
    if activation != "relu":
        check_supported(False, False, activation)
    if norm is not None:
        fields["norm_first"] = norm == "pre"
        fields["final_norm"] = final == "yes"
        check_supported(norm == "pre", final == "yes", activation)
    if args.eos is not None:
        if args.eos == "yes" and no_eos_row:
            raise ValidationError("--eos", "no (the token table has 2 rows: no eos token)", "yes")
        fields["eos"] = args.eos == "yes"
    return fields


def load_checkpoint(args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any]:
    """(Params, info about the loading, the user's torch module if one was given)."""
    from verify.model import Params
    from verify.model.spec.npz_file import regular_file

    path = regular_file("CHECKPOINT", args.checkpoint, "an existing file")
    if args.module_kwargs is not None and not args.module:
        raise ValidationError("--module-kwargs", "--module FILE_OR_MODULE:NAME with it", "none")
    if path.suffix == ".npz":
        if args.module:
            raise ValidationError("--module", "a torch state_dict as CHECKPOINT", path.name)
        params = Params.load(path)
        if getattr(args, "ln_form", None) not in (None, params.config.ln_form):
            raise ValidationError(
                "--ln-form", f"{params.config.ln_form} (the parameter file says so)", args.ln_form
            )
        thr = params.config.threshold
        if args.threshold is not None and args.threshold != thr:
            raise ValidationError(
                "--threshold",
                f"{thr!r}, the threshold {path.name} holds"
                + ("" if thr else " (a file without the field: the spec's 0)"),
                args.threshold,
                "the file states the label rule; to certify another, save the model with"
                " ModelConfig(..., threshold=T)",
            )
        info = {
            "format": "model-spec .npz",
            "given": [
                f"label 1 iff T(x) > {thr!r} (the file's threshold)",
                layer_norm_line(params.config, "the parameter file"),
            ],
            "assumed": [],
        }
        return params, info, None
    from verify.torch import _require_torch, from_torch, spec_state_dict

    _require_torch()
    import torch

    obj = _torch_load(path, args.trust_pickle)
    key_map = pairs(args.key_map, "--key-map") or None
    module, prefix = None, args.prefix
    if isinstance(obj, torch.nn.Module):
        if args.module:
            raise ValidationError("--module", "a state_dict as CHECKPOINT", "a pickled module")
        module = obj.eval()
        state = module.state_dict()
        fmt = "torch nn.Module (pickled)"
    elif isinstance(obj, dict):
        state = _state_of(obj)
        fmt = "torch state_dict"
        if args.module:
            module = _build_module(args.module, state, module_kwargs(args.module_kwargs), prefix)
            if prefix and not any(k.startswith(prefix) for k in module.state_dict()):
                prefix = None  # stripped to load it
            state = module.state_dict()
            fmt = f"torch state_dict in the user's module {args.module}"
    else:
        raise ValidationError("CHECKPOINT", "a state_dict or an nn.Module", type(obj).__name__)
    annotated = load_if_annotated(args, state, module, prefix)
    if annotated is not None:
        return annotated
    spec, mapping = spec_state_dict(state, key_map=key_map, prefix=prefix)
    padded = any(new == "token_embedding" and "padded" in note for _, new, note in mapping.renames)
    fields = _layout_fields(args, spec, module, padded)
    source = module if module is not None else state
    params = from_torch(source, key_map=key_map, prefix=prefix, **fields)
    cfg = params.config
    notes = []
    if (
        "pos_embedding" in spec
        and params["pos_embedding"].shape[0] == len(spec["pos_embedding"]) + 1
    ):
        notes.append(
            f"pos_embedding: {len(spec['pos_embedding'])} rows serve N <= {cfg.max_len} bits (no"
            " eos); the file's layout adds a zero row, never read"
        )
    given = [f"label 1 iff the output > {cfg.threshold!r} (--threshold)"]
    if module is None:
        given.append(
            f"{'pre' if cfg.norm_first else 'post'}-LN, final norm {args.final_norm},"
            f" {args.activation}, {'eos token appended' if cfg.eos else 'no eos token'}"
            " (flags: the file does not tell them)"
        )
    given.append(
        layer_norm_line(
            cfg, "--ln-form" if args.ln_form else "torch's nn.LayerNorm: the default, --ln-form"
        )
    )
    assumed = [
        f"embedding {cfg.embedding} (from the table widths), positions from 0, tokens 0/1/2"
        + (
            "; checked by comparing outputs"
            if module is not None or args.reference_logits
            else "; unchecked without a module or --reference-logits"
        )
    ]
    info = {
        "given": given,
        "assumed": assumed,
        "format": fmt,
        "keys_found": len(mapping.found),
        "renamed": [
            f"{old} -> {new}" + (f" ({note})" if note else "") for old, new, note in mapping.renames
        ]
        + notes,
    }
    return params, info, module


def load_reference_logits(path_text: str, n_bits: int) -> tuple[Any, Any, str]:
    """(bits (B, N) uint8, logits (B,) float64, the dtype they were computed in) from FILE:
    ``.npz`` with arrays ``bits`` and ``logits`` (their dtype is taken as the computing dtype),
    or ``.csv`` lines ``0110,0.25`` (x_1 first; taken as float32, the usual training dtype)."""
    import numpy as np

    from verify.model.plain.forward import check_bits

    path = Path(path_text)
    if not path.is_file():
        raise ValidationError("--reference-logits", "an existing .npz or .csv file", path_text)
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                bits, logits = data["bits"], data["logits"]
        except (KeyError, OSError, ValueError) as exc:
            raise ValidationError(
                "--reference-logits", "an .npz with arrays bits (B, N) and logits (B,)", path.name
            ) from exc
        dtype = str(logits.dtype) if logits.dtype in (np.float32, np.float64) else "float32"
    elif path.suffix == ".csv":
        rows = [
            line.split(",")
            for line in path.read_text().splitlines()
            if line.strip() and line[0] in "01"
        ]
        try:
            bits = np.array([[int(c) for c in r[0].strip()] for r in rows], dtype=np.int64)
            logits = np.array([float(r[1]) for r in rows])
        except (IndexError, ValueError) as exc:
            raise ValidationError(
                "--reference-logits", "lines BITS,LOGIT (e.g. 0110,0.25)", path.name
            ) from exc
        dtype = "float32"
    else:
        raise ValidationError("--reference-logits", "a .npz or .csv file", path.name)
    bits = check_bits(bits, n_bits)
    logits = np.asarray(logits, dtype=np.float64).reshape(-1)
    if logits.shape[0] != bits.shape[0] or not np.all(np.isfinite(logits)):
        raise ValidationError(
            "--reference-logits", f"{bits.shape[0]} finite logits, one per string", logits.shape
        )
    return bits, logits, dtype
