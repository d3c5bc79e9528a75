"""``python -m verify check-model CHECKPOINT -N 8 [--family majority] ...``: one command that
checks a trained model.

CHECKPOINT is a model-spec ``.npz`` parameter file or a torch file: a state_dict (names of a
model built the usual way are mapped automatically, see ``verify.torch.spec_state_dict``), a
checkpoint dict holding one (``state_dict`` / ``model_state_dict`` / ``model``), or, with
``--trust-pickle``, a whole pickled ``nn.Module`` (its config is then read from its layers). A
bare state_dict does not say how many heads the model has or its layer-norm eps: give
``--n-heads`` and ``--eps`` (no default is assumed; torch's eps default is 1e-5).

Printed: the mapping of names, the config, the certified truth table over all 2^N strings
(how many labels float64 settled, how many needed high precision, how many stayed uncertain),
the sensitivity profile and K_0, agreement with a target family (--family), agreement with the
torch module itself when it was given, and which statements' bounds apply to this theta and
what they say (Lemma 2.9, 3.2, Cor 3.3, 3.4, H&R Cor 5, H&R Thm 6; the eps = 0 statements are
about random theta and are only named).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check-model",
        help="certified truth table, profile, K_0 and applicable bounds of a trained model",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument("checkpoint", metavar="CHECKPOINT", help=".npz parameter file or torch file")
    p.add_argument("-N", "--n-bits", type=int, default=None, help="input length (default max_len)")
    p.add_argument("--family", default=None, help="target family to compare with (e.g. parity)")
    p.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="family parameter"
    )
    g = p.add_argument_group("what a bare state_dict does not tell (torch files)")
    g.add_argument("-H", "--n-heads", type=int, default=None, help="attention heads")
    g.add_argument("--eps", type=float, default=None, help="layer-norm eps (torch: 1e-5)")
    g.add_argument("--pre-ln", action="store_true", help="norm_first=True")
    g.add_argument("--no-eos", action="store_true", help="no eos token: read out at the last bit")
    g.add_argument("--pos", default=None, choices=("sinusoidal", "none", "learned"))
    g.add_argument("--prefix", default=None, help="strip this prefix from every name first")
    g.add_argument(
        "--key-map", action="append", default=[], metavar="OLD=NEW", help="rename (prefix if .)"
    )
    g.add_argument(
        "--trust-pickle", action="store_true", help="allow a pickled nn.Module (runs its code)"
    )
    p.add_argument("--save", default=None, metavar="PARAMS.npz", help="write the spec parameters")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


# ----------------------------------------------------------------------------- loading
def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    from verify.errors import ValidationError

    out = {}
    for item in items:
        if "=" not in item:
            raise ValidationError(flag, "OLD=NEW", item)
        k, v = item.split("=", 1)
        out[k] = v
    return out


def load_checkpoint(args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any]:
    """(Params, info about the loading, the torch module if one was given)."""
    from pathlib import Path

    from verify.errors import ValidationError
    from verify.model import Params

    path = Path(args.checkpoint)
    if not path.exists():
        raise ValidationError("CHECKPOINT", "an existing file", str(path))
    if path.suffix == ".npz":
        return Params.load(path), {"format": "model-spec .npz"}, None
    from verify.torch import _require_torch, from_torch, spec_state_dict

    _require_torch()
    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a pickled module, or not a torch file
        if not args.trust_pickle:
            raise ValidationError(
                "CHECKPOINT",
                "a state_dict (or --trust-pickle for a pickled nn.Module)",
                f"{path.name}: {type(exc).__name__}",
            ) from exc
        obj = torch.load(path, map_location="cpu", weights_only=False)
    fields: dict[str, Any] = {}
    if args.n_heads is not None:
        fields["n_heads"] = args.n_heads
    if args.eps is not None:
        fields["ln_eps"] = args.eps
    if args.pre_ln:
        fields["norm_first"] = True
    if args.no_eos:
        fields["eos"] = False
    if args.pos is not None:
        fields["pos_encoding"] = args.pos
    key_map = _pairs(args.key_map, "--key-map")
    module = None
    if isinstance(obj, torch.nn.Module):
        module = obj.eval()
        state = module.state_dict()
    elif isinstance(obj, dict):
        state = obj
        for key in ("state_dict", "model_state_dict", "model"):
            if key in obj and isinstance(obj[key], dict):
                state = obj[key]
                break
        state = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
    else:
        raise ValidationError("CHECKPOINT", "a state_dict or an nn.Module", type(obj).__name__)
    source = module if module is not None else state
    params = from_torch(source, key_map=key_map or None, prefix=args.prefix, **fields)
    _, mapping = spec_state_dict(state, key_map=key_map or None, prefix=args.prefix)
    assumed = []
    if module is None:
        cfg = params.config
        if not args.pre_ln:
            assumed.append(
                "pre-LN (a final norm was found)"
                if cfg.norm_first
                else "post-LN (torch's default; a state_dict does not tell: --pre-ln otherwise)"
            )
        if not args.no_eos:
            assumed.append(
                "an eos token appended, read out there (3-row token table; --no-eos otherwise)"
                if cfg.eos
                else "no eos token (2-row token table): read out at the last bit"
            )
        assumed.append(
            f"embedding {cfg.embedding} (from the table widths), positions from 0, tokens 0/1/2"
        )
    info = {
        "assumed": assumed,
        "format": "torch nn.Module" if module is not None else "torch state_dict",
        "keys_found": len(mapping.found),
        "renamed": [
            f"{old} -> {new}" + (f" ({note})" if note else "") for old, new, note in mapping.renames
        ],
    }
    return params, info, module


# ----------------------------------------------------------------------------- analysis
def analyse(params: Any, n_bits: int, family: Any = None, module: Any = None) -> dict[str, Any]:
    """Everything check-model prints, as a dict (see the module doc)."""
    import math

    import numpy as np

    from verify.boolean import sensitivity_profile
    from verify.boolean.analysis import average_sensitivity
    from verify.boolean.function import all_bit_strings
    from verify.checks.hahn_rofin import measure_tradeoff
    from verify.model import forward, truth_table
    from verify.theory import hahn_rofin as hr
    from verify.theory.bounds import (
        c_infl,
        cor_3_3_bound,
        lemma_2_9_bound,
        lemma_3_2_bound,
        log10_c_infl,
        log10_n_star,
    )

    cfg = params.config
    out: dict[str, Any] = {"config": cfg.to_dict(), "N": n_bits}
    table = truth_table(params, n_bits)
    out["truth_table"] = {
        "strings": int(2**n_bits),
        "float64": int(table.n_float64),
        "high_precision": int(table.n_high_precision),
        "uncertain": int(table.n_uncertain),
        "ones": int(np.sum(table.label == 1)),
        "zeros": int(np.sum(table.label == 0)),
    }
    f = table.function() if table.n_uncertain == 0 else None
    if f is not None:
        prof = sensitivity_profile(f)
        out["profile"] = [int(v) for v in prof]
        out["K0"] = int(prof[0])
        out["avg_sensitivity"] = float(average_sensitivity(f))
    bits = all_bit_strings(n_bits)
    if family is not None:
        agree = (table.label == family.table) & table.certified
        out["family"] = {
            "name": family.name,
            "agree": int(np.sum(agree)),
            "of": int(2**n_bits),
            "first_disagreements": ["".join(map(str, bits[i])) for i in np.flatnonzero(~agree)[:5]],
            "avg_sensitivity": float(average_sensitivity(family)),
            "K0": int(sensitivity_profile(family)[0]),
        }
    if module is not None:
        out["torch_module"] = _module_agreement(module, bits, table)
    res = forward(params, bits, diagnostics=True)
    finite = np.isfinite(res.beta)
    out["beta_max"] = float(np.max(res.beta[finite])) if finite.any() else math.inf
    out["beta_hr_max"] = float(np.max(res.beta_hr[finite])) if finite.any() else math.inf
    eps, k = cfg.ln_eps, cfg.n_norms
    st: list[dict[str, Any]] = []
    ci, lci = c_infl(params), log10_c_infl(params)
    # Lemma 2.9 on every edge
    worst = 0.0
    idx = np.arange(bits.shape[0])
    for n in range(n_bits):
        fl = idx ^ (1 << n)
        i_n = np.linalg.norm(res.y_readout - res.y_readout[fl], axis=1)
        at_r = (not cfg.eos) and n == n_bits - 1
        b = lemma_2_9_bound(ci, res.beta, res.beta[fl], n_bits, at_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(np.isfinite(b) & (b > 0), i_n / b, 0.0)
        worst = max(worst, float(np.nanmax(r)))
    st.append(
        {
            "statement": "Lemma 2.9",
            "applies": True,
            "says": f"I_n <= C_infl beta(x) beta(x^n) (1/N + delta), log10 C_infl = {lci:.4g}",
            "measured": f"worst I_n / bound over all {n_bits * 2**n_bits} flips: {worst:.4g}",
        }
    )
    if eps > 0:
        bound = lemma_3_2_bound(cfg)
        st.append(
            {
                "statement": "Lemma 3.2",
                "applies": True,
                "says": f"beta(theta, x) <= (1 + eps^-1/2)^K = {bound:.6g} for every x, any N",
                "measured": f"max beta over the 2^N strings: {out['beta_max']:.6g}",
            }
        )
        c33 = cor_3_3_bound(params)
        dt = max(
            float(np.nanmax(np.abs(res.T - res.T[idx ^ (1 << n)])))
            for n in range(n_bits - (0 if cfg.eos else 1))
        )
        st.append(
            {
                "statement": "Cor 3.3",
                "applies": True,
                "says": f"N |T(x) - T(x^n)| <= ||w|| C_infl (1+eps^-1/2)^2K = {c33:.4g}",
                "measured": f"N max |T(x) - T(x^n)| = {n_bits * dt:.4g}",
            }
        )
        if cfg.eos:
            xi = float(np.nanmin(np.abs(res.T)))
            if xi > 0:
                st.append(
                    {
                        "statement": "Cor 3.4",
                        "applies": True,
                        "says": "no non-constant function is recognised with this theta's margin"
                        f" xi = {xi:.4g} beyond N* = 10^{log10_n_star(params, xi):.4g}",
                        "measured": f"N = {n_bits}",
                    }
                )
    else:
        st.append(
            {
                "statement": "Lemma 3.2, Cor 3.3, 3.4, Prop 3.5",
                "applies": False,
                "says": "need eps > 0 (this theta has eps = 0: the blowup is unbounded)",
            }
        )
    m = measure_tradeoff(params, n_bits, result=res)
    if m is not None and m.avg_sensitivity > 0:
        need = hr.cor_5_required_blowup(m.avg_sensitivity, m.xi, m.w_norm, ci * m.factor)
        st.append(
            {
                "statement": "H&R Cor 5",
                "applies": True,
                "says": f"2 xi as_N(f) <= ||w|| C_infl E[beta^2 omega_f] = 10^{m.log10_bound:.4g}"
                f" (<= c_r ||w|| C_infl E[beta^2]); so E[beta^2] >= {need:.4g} is needed",
                "measured": f"2 xi as_N(f) = {m.lhs:.4g}"
                f" (xi {m.xi:.4g}, as {m.avg_sensitivity:.4g});"
                f" E[beta^2] = {m.mean_beta_sq:.4g}; ||theta||^2 = {m.param_norm_sq:.4g}",
            }
        )
    else:
        st.append(
            {
                "statement": "H&R Cor 5",
                "applies": False,
                "says": "needs a non-constant function with margin > 0",
            }
        )
    sigma = 0.02
    if not (cfg.norm_first and cfg.embedding == "concat") and cfg.d_model >= 2:
        t = hr.noise_cap_threshold(cfg.d_model, k, cfg.seq_len(n_bits), sigma, 0.5)
        st.append(
            {
                "statement": "H&R Thm 6",
                "applies": True,
                "says": f"under N(0, {sigma}^2) noise on the parameters, P[beta'(x) >="
                f" {hr.blowup_cap(t, eps, k):.4g}] <= 1/2 for every x of length N",
                "measured": f"max beta now: {out['beta_max']:.4g}",
            }
        )
    st.append(
        {
            "statement": "Lemma 4.2-Thm 4.5, Cor 4.6, 5.1-5.4",
            "applies": False,
            "says": "statements about random theta (almost every theta at eps = 0), not about"
            " one given theta",
        }
    )
    out["statements"] = st
    return out


def _module_agreement(module: Any, bits: Any, table: Any) -> dict[str, Any]:
    """Call the torch module on the strings (int64 (B, N)); compare its sign with the
    certified labels. A module whose forward takes something else is reported, not guessed."""
    import numpy as np
    import torch

    try:
        with torch.no_grad():
            t = module(torch.from_numpy(bits.astype(np.int64)))
        t = t.detach().double().reshape(-1).numpy()
    except Exception as exc:  # the module's own forward signature
        return {"called": False, "reason": f"{type(exc).__name__}: {exc}"[:200]}
    if t.shape[0] != bits.shape[0]:
        return {"called": False, "reason": f"output shape {t.shape}"}
    sure = table.certified
    agree = int(np.sum(((t > 0).astype(int) == table.label)[sure]))
    return {"called": True, "agree": agree, "of": int(sure.sum())}


# ----------------------------------------------------------------------------- command
def run(args: argparse.Namespace) -> int:
    import json

    from verify.boolean import make_family
    from verify.errors import ValidationError

    params, info, module = load_checkpoint(args)
    cfg = params.config
    n_bits = args.n_bits
    if n_bits is None:
        n_bits = min(cfg.max_len if cfg.pos_encoding == "learned" else 10, 16)
    cfg.check_n_bits(n_bits)
    if n_bits > 20:
        raise ValidationError("-N", "N <= 20 (certified tables over all 2^N strings)", n_bits)
    family = None
    if args.family:
        fparams = {k: _parse_value(v) for k, v in _pairs(args.param, "--param").items()}
        family = make_family(args.family, n_bits, **fparams)
    if args.save:
        params.save(args.save)
    out = {
        "checkpoint": args.checkpoint,
        "loading": info,
        **analyse(params, n_bits, family, module),
    }
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    _print(out)
    return 0


def _print(out: dict[str, Any]) -> None:
    load = out["loading"]
    print(f"checkpoint {out['checkpoint']} ({load['format']})")
    if load.get("renamed"):
        print(f"  {load['keys_found']} keys; mapped to model-spec names:")
        for line in load["renamed"]:
            if not line.startswith(("layers.", "encoder.layers.")) or "reshaped" in line:
                print(f"    {line}")
        layer_lines = [r for r in load["renamed"] if ".layers." in r or r.startswith("layers.")]
        if layer_lines:
            print(f"    ... and {len(layer_lines)} encoder-layer arrays (prefix removed)")
    for line in load.get("assumed", []):
        print(f"  assumed: {line}")
    c = out["config"]
    print(
        f"config: D={c['d_model']} L={c['n_layers']} H={c['n_heads']} d_ff={c['d_ff']}"
        f" eps={c['ln_eps']} {'pre' if c['norm_first'] else 'post'}-LN"
        f" {'eos' if c['eos'] else 'last-bit'} readout, positions {c['pos_encoding']},"
        f" embedding {c['embedding']}, max_len {c['max_len']}"
    )
    tt = out["truth_table"]
    print(
        f"certified truth table, N={out['N']}: {tt['strings']} strings, {tt['ones']} ones,"
        f" {tt['zeros']} zeros; settled by float64 {tt['float64']}, high precision"
        f" {tt['high_precision']}, uncertain {tt['uncertain']}"
    )
    if "profile" in out:
        print(f"sensitivity profile K_0..K_N: {out['profile']}")
        print(f"K_0 = {out['K0']}, average sensitivity {out['avg_sensitivity']:.6g}")
    if "family" in out:
        fam = out["family"]
        print(
            f"target {fam['name']}: agrees on {fam['agree']} of {fam['of']} strings"
            f" (target as {fam['avg_sensitivity']:.4g}, K_0 {fam['K0']})"
            + (
                f"; first disagreements {fam['first_disagreements']}"
                if fam["agree"] < fam["of"]
                else ""
            )
        )
    if "torch_module" in out:
        tm = out["torch_module"]
        if tm["called"]:
            print(f"torch module itself: sign agrees on {tm['agree']} of {tm['of']} strings")
        else:
            print(f"torch module not compared ({tm['reason']})")
    print(f"blowup: max beta {out['beta_max']:.6g}, max beta_hr {out['beta_hr_max']:.6g}")
    print("statements and what they say for this theta:")
    for s in out["statements"]:
        mark = "applies" if s["applies"] else "does not apply"
        print(f"  {s['statement']} ({mark}): {s['says']}")
        if s.get("measured"):
            print(f"      measured: {s['measured']}")
