"""``check-model`` on a model written the annotated transformer's way (Bhattamishra et al.'s
classifier): the structure recognised and converted exactly (``verify.torch.annotated``), what
its names cannot tell from flags or probed from the user's module
(``verify.torch.annotated_probe``), the module called through the sequence-first adapter."""

from __future__ import annotations

import argparse
from typing import Any

from verify.errors import ValidationError

NORM_FLAG = {"pre": True, "post": False, None: None}


def add_layer_norm_options(g: Any) -> None:
    """--eps (its help states both formulas) and --ln-form."""
    from verify.commands._options import eps_value

    g.add_argument(
        "--eps",
        type=eps_value,
        default=None,
        help="layer-norm eps: torch's form gamma (v - mean) / sqrt(var_biased + eps) + beta"
        " (nn.LayerNorm's default 1e-5); with --ln-form annotated a (v - mean) /"
        " (std_unbiased + eps) + b",
    )
    g.add_argument(
        "--ln-form",
        choices=("torch", "annotated"),
        default=None,
        help="the layer norm's formula: torch (nn.LayerNorm, the default) or annotated (the"
        " annotated transformer's: unbiased std, eps added to the std)",
    )


def add_annotated_options(g: Any) -> None:
    """--token-ids, --embed-scale, --show-keys."""
    g.add_argument(
        "--token-ids",
        default=None,
        metavar="ZERO,ONE,END",
        help="token ids of '0', '1' and the end token in a larger vocabulary (e.g. 2,3,0)",
    )
    g.add_argument(
        "--embed-scale",
        choices=("sqrt-d", "1"),
        default=None,
        help="token embeddings multiplied by sqrt(D) (the annotated transformer's) or not",
    )
    g.add_argument(
        "--show-keys", action="store_true", help="list the file's keys and shapes (on stderr)"
    )


def names_the_module_takes(
    state: dict[str, Any], want: set[str], prefix: str | None
) -> dict[str, Any]:
    """``state`` as it is when its names are the module's (``want``), else with ``prefix``
    stripped when that gives the module's names (``--prefix`` with ``--module``: the prefix
    names a part of the file, or the module is a wrapper holding it)."""
    if prefix and set(state) != want:
        stripped = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        return stripped if set(stripped) == want else state
    return state


def state_mismatch(want: set[str], state: dict[str, Any], exc: BaseException) -> str:
    """One short line for a state_dict the module does not take (not torch's long message)."""
    missing, extra = sorted(want - set(state)), sorted(set(state) - want)
    if missing or extra:
        return (
            f"{len(missing)} of its arrays missing (e.g. {missing[:2]}), {len(extra)} unexpected"
            f" (e.g. {extra[:2]})"
        )
    return str(exc).splitlines()[0][:160]


def layer_norm_line(config: Any, source: str) -> str:
    """The ``given:`` line of the layer norm the passes compute: its formula and eps."""
    from verify.model.spec.ln_forms import ln_formula

    return f"layer norm {config.ln_form}: {ln_formula(config.ln_form, config.ln_eps)} ({source})"


def load_if_annotated(
    args: argparse.Namespace, state: dict[str, Any], module: Any, prefix: str | None
) -> tuple[Any, dict[str, Any], Any] | None:
    """``--show-keys``'s list (stderr); then :func:`load_annotated` when the names (after
    ``prefix``) are the annotated transformer's, else None (the usual mapping)."""
    import sys

    from verify.torch.annotated import is_annotated

    if getattr(args, "show_keys", False):
        for name, value in state.items():
            print(f"  key {name} {tuple(value.shape)}", file=sys.stderr)
    if prefix:
        state = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
    if is_annotated(state):
        return load_annotated(args, state, module, args.n_bits)
    if getattr(args, "module_input", "bits") in ("seq-first", "ids"):
        raise ValidationError(
            "--module-input",
            "bits or tokens (seq-first and ids call an annotated-transformer module)",
            args.module_input,
        )
    return None


def _token_ids(text: str | None) -> tuple[int, int, int] | None:
    if text is None:
        return None
    try:
        ids = tuple(int(t) for t in text.split(","))
    except ValueError:
        ids = ()
    if len(ids) != 3 or min(ids) < 0:
        raise ValidationError("--token-ids", "ZERO,ONE,END: three ids, e.g. 2,3,0", text)
    return ids  # type: ignore[return-value]


def load_annotated(
    args: argparse.Namespace, state: dict[str, Any], module: Any, n_bits: int | None
) -> tuple[Any, dict[str, Any], Any]:
    """(Params, loading info (with ``radius``: the parameter balls), the adapted module)."""
    from verify.model.spec.ln_forms import ln_formula
    from verify.torch.annotated import Choice, convert, recognise
    from verify.torch.annotated_probe import SequenceFirstAdapter, module_attribute, probe

    structure = recognise(state)
    if n_bits is None:
        raise ValidationError("-N", "the string length (the position table has 400 rows)")
    ids = _token_ids(args.token_ids)
    scale = {"sqrt-d": "sqrt_d", "1": "1", None: None}[args.embed_scale]
    eps, heads = args.eps, args.n_heads
    if module is not None:
        eps = eps if eps is not None else module_attribute(module, ("eps",), ("a_2", "eps"))
        if eps is None:
            eps = module_attribute(module, ("eps",), ("weight", "eps"))
        heads = heads or module_attribute(module, ("h", "num_heads", "n_heads"), ("linears",))
    missing = [f for f, v in (("--token-ids ZERO,ONE,END", ids), ("--eps", eps),
               ("-H/--n-heads", heads)) if v is None]  # fmt: skip
    if module is None:
        missing += [f for f, v in (("--embed-scale", scale), ("--ln-form", args.ln_form),
                    ("--norm", args.norm)) if v is None]  # fmt: skip
    if missing:
        raise ValidationError(
            "CHECKPOINT",
            "the flags for what an annotated-transformer state_dict cannot tell: "
            + ", ".join(missing),
            "missing",
        )
    seq_first = args.module_input != "ids"
    given = []
    if module is not None:
        choice, tried = probe(
            module, structure, n_bits, token_ids=ids, scale=scale, ln_form=args.ln_form,
            norm_first=NORM_FLAG[args.norm], ln_eps=float(eps), n_heads=int(heads),
            seq_first=seq_first, seed=args.seed,
        )  # fmt: skip
        given.append(f"read from the module by probing ({tried} readings tried, one matched):"
                     f" {choice.describe()}")  # fmt: skip
        from verify.torch.annotated_probe import takes_lengths

        call = "(S, B) ids" if seq_first else "(B, S) ids"
        adapter = SequenceFirstAdapter(
            module, choice.token_ids, seq_first=seq_first, lengths=takes_lengths(module)
        )
        given.append(
            f"the module called as forward({call}{', lengths' if adapter.lengths else ''}),"
            " end token appended; a 2-class output read as logit_1 - logit_0 (label 1 iff"
            " class 1 wins argmax; a tie is class 0)"
        )
    else:
        choice = Choice(ids, scale, args.ln_form, args.norm == "pre", float(eps), int(heads))
        adapter = None
        given.append(f"flags: {choice.describe()}")
    params, radius, notes = convert(structure, choice, n_bits)
    thr = getattr(args, "threshold", None)
    if structure.classes == 2:
        if thr not in (None, 0.0):
            raise ValidationError("--threshold", "0 or none for a 2-class head (argmax)", thr)
        given.append("label 1 iff T = logit_1 - logit_0 > 0 (argmax of the 2-class head)")
    else:
        if thr is None:
            raise ValidationError("--threshold", "the label rule T(x) > T of a 1-logit head")
        import dataclasses

        from verify.model import Params

        params = Params(dataclasses.replace(params.config, threshold=float(thr)), dict(params))
        given.append(f"label 1 iff T(x) > {thr:g} (--threshold)")
    cfg = params.config
    given.append(f"layer norm {cfg.ln_form}: {ln_formula(cfg.ln_form, cfg.ln_eps)}")
    info = {
        "format": "annotated-transformer state_dict" + (" in the user's module" if module else ""),
        "given": given + notes,
        "assumed": []
        if module is not None
        else [
            "end token appended, positions from 0; unchecked without a module or --reference-logits"
        ],  # fmt: skip
        "keys_found": len(structure.found),
        "renamed": [],
        "radius": radius or None,
    }
    return params, info, adapter
