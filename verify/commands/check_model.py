"""``python -m verify check-model CHECKPOINT -N 8 [--family majority] ...``: one command that
checks a trained model.

CHECKPOINT is a model-spec ``.npz`` parameter file or a torch file: a state_dict (names of a
model built the usual way are mapped automatically, see ``verify.torch.spec_state_dict``), a
checkpoint dict holding one (``state_dict`` / ``model_state_dict`` / ``model``), or, with
``--trust-pickle``, a whole pickled ``nn.Module`` (its config is then read from its layers), or
a state_dict loaded into the user's own class (``--module MODULE:NAME``, its constructor's
keyword arguments in ``--module-kwargs JSON``). A bare state_dict does
not say what changes the function beyond its arrays: give ``-H``, ``--eps``, ``--norm``,
``--final-norm``, ``--activation``, ``--eos`` (no defaults; exit 2 listing the missing ones).
``--threshold T`` (the label rule: 1 iff the output > T) has no default for any torch file, and
``-N`` none at all; an ``.npz`` carries its threshold (0 unless written). A bare state_dict's
layout is reported as stated (and the other layouts that fit its arrays are run on a sample and
named where they compute another function) unless the user's outputs confirm it.
A module is run on the strings and compared with the spec pass before anything is certified
(``--reference-logits FILE`` does the same with the user's own outputs); a difference beyond
float rounding ends the command with exit 1 and one line.

Printed: the mapping of names, the config, the certified truth table over all 2^N strings
(how many labels float64 settled, how many needed high precision, how many stayed uncertain),
the sensitivity profile and K_0, agreement with a target family (--family), the comparison with
the user's model, and which statements' bounds apply to this theta and what they say (marked
vacuous where no better than the trivial bound of ``verify.theory.trivial``): Lemma 2.9, 3.2,
Cor 3.3, 3.4, H&R Cor 5, H&R Thm 6; the eps = 0 statements are about random theta and are only
named.
"""

from __future__ import annotations

import argparse
from typing import Any

from verify.commands._checkpoint import add_checkpoint_options, load_checkpoint, pairs
from verify.commands._cube import (
    MAX_CUBE_N,
    MAX_LOCAL_N,
    NOT_ON_EXECUTOR,
    cube_estimate,
    executor_spec,
    table_on_executor,
    table_results,
)
from verify.commands._options import add_allow_large, add_jobs, parse_param_value
from verify.commands._table_json import (
    add_table_option,
    check_table_flag,
    not_evaluated_for_ln_form,
    packed_table,
    refuse_executor,
    table_header,
)
from verify.commands._user_model import compare_user_model


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check-model",
        help="certified truth table, profile, K_0 and applicable bounds of a trained model",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument("checkpoint", metavar="CHECKPOINT", help=".npz parameter file or torch file")
    p.add_argument(
        "-N",
        "--n-bits",
        type=int,
        default=None,
        help="input length: the N the model was trained on (required: no default)",
    )
    p.add_argument("--family", default=None, help="target family to compare with (e.g. parity)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="family parameter (int, float, true/false, comma list e.g. subset=1,3,5, or text)",
    )
    add_checkpoint_options(p)
    p.add_argument("--save", default=None, metavar="PARAMS.npz", help="write the spec parameters")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    add_table_option(p)
    p.add_argument(
        "--executor",
        default=None,
        metavar="WHERE",
        help="certify the table in sub-cubes (fixed prefixes of the high bits) on local (-j"
        " processes), dask (a LocalCluster of -j workers), dask://HOST:PORT (a running dask"
        " scheduler), ray or ray://HOST:PORT; allows N up to 30 and prints the size and time"
        " estimate first; the table and what is read off it only (docs/clusters.md)",
    )
    add_jobs(p)
    add_allow_large(p)
    p.set_defaults(func=run)


# ----------------------------------------------------------------------------- analysis
def analyse(
    params: Any,
    n_bits: int,
    family: Any = None,
    signs: Any = None,
    *,
    table: bool = False,
    radius: Any = None,
) -> dict[str, Any]:
    """Everything check-model prints, as a dict (see the module doc); ``signs``: (indices, the
    user's module's own outputs there), its predictions at the model's threshold compared with
    the certified labels. Every label is the model's rule: 1 iff T(x) > config.threshold.
    ``table``: carry the certified table itself, bit-packed (:func:`packed_table`); ``radius``:
    parameter balls (``truth_table``'s)."""
    import math

    import numpy as np

    from verify.checks.hahn_rofin import measure_tradeoff
    from verify.model.certified.onepass import table_and_diagnostics
    from verify.theory import hahn_rofin as hr
    from verify.theory.bounds import (
        c_infl,
        cor_3_3_bound,
        lemma_2_9_bound,
        lemma_3_2_bound,
        log10_c_infl,
        log10_n_star,
    )
    from verify.theory.norms import parameter_norms
    from verify.theory.trivial import output_swing_bound, readout_swing_bound

    cfg = params.config
    thr = cfg.threshold
    out: dict[str, Any] = table_header(cfg, n_bits)
    # the certified table and every string's float64 diagnostics (T, y_r, beta, beta_hr) from
    # one pass over the cube where the exhaustive kernel applies (verify.model.certified.onepass)
    table_out, (table, res) = table, table_and_diagnostics(params, n_bits, radius=radius)
    if radius:
        out["parameter_radius"] = {k: float(v.max()) for k, v in radius.items()}
    out.update(table_results(table, n_bits, family, signs, thr))
    if table_out:
        out["table"] = packed_table(table)
    # over the strings where it is defined (finite): the max (the paper's statements) and the
    # mean (what H&R log); how many strings have it undefined (a 0/0 layer norm at eps = 0)
    finite = np.isfinite(res.beta)
    for key, values in (("beta", res.beta), ("beta_hr", res.beta_hr)):
        out[f"{key}_max"] = float(np.max(values[finite])) if finite.any() else math.inf
        out[f"{key}_mean"] = float(np.mean(values[finite])) if finite.any() else math.inf
    if not finite.all():
        out["beta_undefined"] = int(np.count_nonzero(~finite))
    if cfg.ln_form != "torch":
        out["statements"] = [not_evaluated_for_ln_form(cfg.ln_form)]
        return out
    if not cfg.spec_layout:
        out["statements"] = [
            {
                "statement": "all",
                "applies": False,
                "says": "not evaluated: the papers' bounds and their constants are derived for"
                " the spec's two layouts (post-LN without a final norm, pre-LN with one), not"
                " for this one",
            }
        ]
        return out
    eps, k = cfg.ln_eps, cfg.n_norms
    st: list[dict[str, Any]] = []
    norms = parameter_norms(params)  # the spectral norms once (each statement reads them)
    ci, lci = c_infl(norms), log10_c_infl(norms)
    # Lemma 2.9 on every edge, _FLIP_CHUNK strings at a time (the same numbers, no (2^N, D)
    # temporaries)
    worst, tightest = 0.0, math.inf
    for n in range(n_bits):
        at_r = (not cfg.eos) and n == n_bits - 1
        for lo in range(0, 2**n_bits, _FLIP_CHUNK):
            idx = np.arange(lo, min(2**n_bits, lo + _FLIP_CHUNK))
            fl = idx ^ (1 << n)
            i_n = np.linalg.norm(res.y_readout[idx] - res.y_readout[fl], axis=1)
            b = lemma_2_9_bound(ci, res.beta[idx], res.beta[fl], n_bits, at_r)
            with np.errstate(invalid="ignore", divide="ignore"):
                r = np.where(np.isfinite(b) & (b > 0), i_n / b, 0.0)
            worst = max(worst, float(np.nanmax(r)))
            if np.isfinite(b).any():
                tightest = min(tightest, float(np.nanmin(np.where(np.isfinite(b), b, np.inf))))
    st.append(
        {
            "statement": "Lemma 2.9",
            "applies": True,
            "says": f"I_n <= C_infl beta(x) beta(x^n) (1/N + delta), log10 C_infl = {lci:.4g}",
            "measured": f"worst I_n / bound over all {n_bits * 2**n_bits} flips: {worst:.4g}",
            **_triviality(
                tightest,
                readout_swing_bound(params),
                "every flip's bound >= {b:.4g} >= the trivial 2 sqrt(D) max|g| = {t:.4g}",
            ),
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
        c33 = cor_3_3_bound(norms)
        idx = np.arange(2**n_bits)
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
                **_triviality(
                    c33,
                    n_bits * output_swing_bound(params),
                    "{b:.4g} >= the trivial N 2 sqrt(D) |w g| = {t:.4g}",
                ),
            }
        )
        if cfg.eos:
            xi = float(np.nanmin(np.abs(res.T - thr)))
            if xi > 0:
                st.append(
                    {
                        "statement": "Cor 3.4",
                        "applies": True,
                        "says": "no non-constant function is recognised with this theta's margin"
                        f" xi = {xi:.4g} beyond N* = 10^{log10_n_star(norms, xi):.4g}",
                        "measured": f"N = {n_bits}",
                        **_triviality(
                            log10_n_star(norms, xi),
                            math.log10(n_bits),
                            "N* = 10^{b:.4g} >= N = 10^{t:.4g}: nothing said at this N",
                        ),
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
                **_triviality(
                    m.log10_bound,
                    math.log10(max(2 * m.xi * n_bits, 1e-300)),
                    "10^{b:.4g} >= the trivial 2 xi N = 10^{t:.4g} (as_N <= N)",
                ),
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


_FLIP_CHUNK = 1 << 14  # strings per step of the Lemma 2.9 measurement


def _triviality(bound: float, trivial: float, why: str) -> dict[str, Any]:
    """``vacuous`` when ``bound`` is no better than ``trivial``, the bound that holds for
    nothing-saying reasons at this size (verify.theory.trivial); ``why``: the reason, with
    {b} and {t} for the two."""
    out: dict[str, Any] = {
        "bound": float(bound),
        "trivial_bound": float(trivial),
        "vacuous": bool(bound >= trivial),
    }
    if out["vacuous"]:
        out["why_vacuous"] = why.format(b=bound, t=trivial)
    return out


# ----------------------------------------------------------------------------- command
def _plan_outputs(args: argparse.Namespace) -> None:
    """--save, checked against the inputs (CHECKPOINT, --reference-logits) before any work:
    saving over the checkpoint it reads would overwrite the user's file (verify.outputs)."""
    from verify.outputs import OutputPlan

    if not args.save:
        return
    plan = OutputPlan()
    plan.add("--save", args.save)
    plan.add_input("CHECKPOINT", args.checkpoint)
    if getattr(args, "reference_logits", None):
        plan.add_input("--reference-logits", args.reference_logits)
    plan.check()


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from verify.boolean import make_family
    from verify.errors import ModelMismatchError, ValidationError

    if args.n_bits is None:
        raise ValidationError(
            "-N/--n-bits",
            "the input length the model was trained on (no default: certifying another length"
            " would certify a function the model never computed)",
            "missing",
        )
    check_table_flag(args)
    _plan_outputs(args)
    params, info, module = load_checkpoint(args)
    radius = info.pop("radius", None)  # parameter balls of an exact conversion
    cfg = params.config
    n_bits = args.n_bits
    cfg.check_n_bits(n_bits)
    executor = executor_spec(args)
    refuse_executor(executor, radius)
    if executor is None and n_bits > MAX_LOCAL_N:
        raise ValidationError(
            "-N",
            f"N <= {MAX_LOCAL_N} (certified tables over all 2^N strings in this process)",
            n_bits,
            f"--executor certifies N <= {MAX_CUBE_N} in sub-cubes",
        )
    if n_bits > MAX_CUBE_N:
        raise ValidationError("-N", f"N <= {MAX_CUBE_N} (a table of 2^N labels)", n_bits)
    estimate = cube_estimate(args, params, n_bits, executor, module)
    family = None
    if args.family:
        fparams = {k: parse_param_value(v) for k, v in pairs(args.param, "--param").items()}
        family = make_family(args.family, n_bits, **fparams)
    try:
        compared, signs = compare_user_model(args, params, module, n_bits)
    except ModelMismatchError as exc:
        print(f"python -m verify check-model: error: {exc}", file=sys.stderr)
        return 1
    if args.save:
        params.save(args.save)
    from verify.commands._layout_check import layout_status

    layout = layout_status(args, params, module, compared, n_bits)
    out = {
        "checkpoint": args.checkpoint,
        "loading": info,
        "compared": compared,
        **({"layout": layout} if layout is not None else {}),
    }
    if executor is None:
        from verify.interrupts import in_worker_thread  # Ctrl-C acted on at once

        what = "python -m verify check-model"
        kw = {"table": args.table, "radius": radius}
        print(f"certifying the 2^{n_bits} strings (Ctrl-C stops)", file=sys.stderr, flush=True)
        out.update(in_worker_thread(what, analyse, params, n_bits, family, signs, **kw))
    else:
        thr = params.config.threshold
        table = table_on_executor(args, params, n_bits, executor, estimate, out)
        out.update(table_header(params.config, n_bits))
        out.update(table_results(table, n_bits, family, signs, thr))
        if args.table:
            out["table"] = packed_table(table)
        out["statements"] = [NOT_ON_EXECUTOR]
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
    for line in load.get("given", []):
        print(f"  given: {line}")
    for line in load.get("assumed", []):
        print(f"  assumed: {line}")
    if "layout" in out:
        from verify.commands._layout_check import layout_lines

        for line in layout_lines(out["layout"]):
            print(line)
    c = out["config"]
    print(
        f"config: D={c['d_model']} L={c['n_layers']} H={c['n_heads']} d_ff={c['d_ff']}"
        f" eps={c['ln_eps']} {'pre' if c['norm_first'] else 'post'}-LN"
        + (f" {'with' if c['final_norm'] else 'without'} a final norm" if "final_norm" in c else "")
        + f" {'eos' if c['eos'] else 'last-bit'} readout, positions {c['pos_encoding']},"
        f" embedding {c['embedding']}, max_len {c['max_len']}"
    )
    tt = out["truth_table"]
    print(
        f"certified truth table, N={out['N']}, label 1 iff T(x) > {out['threshold']!r}:"
        f" {tt['strings']} strings, {tt['ones']} ones,"
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
    for line in [c["line"] for c in out.get("compared", {}).values()]:
        print(line)
    if "module_predictions" in out:
        ms = out["module_predictions"]
        print(
            f"the module's own predictions (output > {ms['threshold']!r}) agree with the"
            f" certified labels on {ms['agree']} of {ms['of']} certified strings compared"
            + (
                f"; first disagreements {ms['first_disagreements']}"
                if ms["agree"] < ms["of"]
                else ""
            )
        )
    if "executor" in out:
        ex = out["executor"]
        print(
            f"sub-cubes: {ex['subcubes']} ({ex['prefix_bits']} high bits fixed) on {ex['where']};"
            f" {ex['wall_s']:.1f} s (workers' time {ex['worker_s']:.1f} s, their CPU time"
            f" {ex['worker_cpu_s']:.1f} s, set-up"
            f" {ex['setup_s']:.1f} s, estimated {ex['estimate_s']:.0f} s);"
            f" resubmitted after a failure: {ex['resubmitted']}"
        )
    if "beta_max" in out:
        undefined = out.get("beta_undefined", 0)
        print(
            f"blowup over the {2 ** out['N'] - undefined} strings where defined: beta mean"
            f" {out['beta_mean']:.6g}, max {out['beta_max']:.6g}; H&R's beta_hr mean"
            f" {out['beta_hr_mean']:.6g}, max {out['beta_hr_max']:.6g}"
            + (f" ({undefined} strings undefined: a 0/0 layer norm)" if undefined else "")
        )
    print("statements and what they say for this theta:")
    for s in out["statements"]:
        mark = "applies" if s["applies"] else "does not apply"
        if s.get("vacuous"):
            mark = f"vacuous: {s['why_vacuous']}"
        print(f"  {s['statement']} ({mark}): {s['says']}")
        if s.get("measured"):
            print(f"      measured: {s['measured']}")
