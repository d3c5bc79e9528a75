"""``python -m verify sweep``: a resumable grid over init scheme x D x L x eps x N x seeds."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from verify.commands._options import (
    DEFAULTS,
    add_allow_large,
    add_jobs,
    add_json,
    add_model_flags,
    add_n_bits,
    add_plot,
    add_progress,
    check_config_keys,
    check_heads,
    model_value,
    output_file,
    plot_file,
)
from verify.errors import ValidationError


def parse_seeds(text: str | list[str]):  # -> verify.sweep.grid.Seeds
    """Seeds from tokens "A:B" (A..B-1), "0,1,5" or "7"; several tokens are joined (a seed
    given twice counts once). A range is kept as a range: "0:1000000000" costs no memory."""
    from verify.sweep.grid import Seeds

    tokens = [text] if isinstance(text, str) else list(text)
    parts: list[range | int] = []
    for tok in tokens:
        try:
            bounds = [int(x) for x in tok.split(":", 1)] if ":" in tok else None
            if bounds is None:
                parts.extend(int(x) for x in tok.split(",") if x.strip())
        except ValueError:
            raise ValidationError("--seeds", 'ranges "A:B" or integers "0,1,5"', tok) from None
        if bounds is not None:
            if bounds[1] <= bounds[0]:
                raise ValidationError("--seeds", "a range A:B with A < B", tok)
            parts.append(range(*bounds))
    seeds = Seeds(parts)
    if not len(seeds):
        raise ValidationError("--seeds", "at least one seed", " ".join(tokens))
    if seeds.min() < 0:
        raise ValidationError("--seeds", "seeds >= 0", seeds.min())
    return seeds


def parse_config(items: list[str]) -> dict[str, object]:
    """KEY=VALUE pairs; VALUE true/false, an int, a float, or text."""
    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValidationError("--config", "KEY=VALUE", item)
        value: object = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        else:
            for conv in (int, float):
                try:
                    value = conv(raw)
                    break
                except ValueError:
                    pass
        out[key.strip()] = value
    return out


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="resumable grid of random transformers (certified truth table, sensitivity profile)",
        description=(
            "Run a grid of cells in parallel (local processes, a dask cluster or ray), appending"
            " each finished cell to a JSON-lines file. Rerun the same command to resume:"
            " finished cells are skipped. Exit code 0 when every cell succeeded, 1 when some"
            " raised (they are retried on the next run), 2 on bad usage (checked before any"
            " work), 130 when interrupted."
        ),
    )
    p.add_argument("--out", required=True, metavar="FILE", help="results file (JSON lines)")
    p.add_argument(
        "--kind",
        choices=("transformer", "random_function", "family"),
        default="transformer",
        help="random transformers, the uniformly random Boolean function baseline, or the"
        " registered family --family",
    )
    p.add_argument(
        "--family",
        default=None,
        metavar="NAME",
        help="with --kind family: profile this family at each N; with --kind transformer: record"
        " each model's agreement with it (families of other packages: --import MODULE)",
    )
    add_model_flags(p, many=True)
    add_n_bits(p, many=True)
    p.add_argument(
        "--seeds", nargs="+", default=["0:10"], metavar="S", help='"A:B", "0,1,5" or "0 1 5" (0:10)'
    )
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another ModelConfig field for every cell, e.g. --config norm_first=true"
        " --config pos_encoding=learned (repeatable; checked before any work)",
    )
    add_jobs(p)
    p.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="local (default: -j processes), dask (a LocalCluster), dask://HOST:PORT (a running"
        " dask scheduler), ray, or ray://HOST:PORT; see docs/clusters.md",
    )
    add_plot(p, "draw P[K_0 >= 1] per setting (95%% CIs) against the random-function limit 1 - 1/e")
    p.add_argument(
        "--csv",
        default=None,
        metavar="FILE",
        help="also write the grid's cells as CSV (one row per cell; see verify.sweep.results_rows)",
    )
    add_json(p, "the summary table")
    add_progress(p)
    add_allow_large(p)
    p.set_defaults(
        func=run,
        flag_names={
            "seed": "--seeds",
            "results": "--out",
            "model": "--config",
            "executor": "--executor",
            "kind": "--kind",
            "family": "--family",
            "cells": "--seeds",
        },
    )


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def plan_outputs(args: argparse.Namespace) -> None:
    """Every file the sweep writes (results and its lock, --csv, --plot and its data), checked
    against each other before any work; an existing results file must read as one."""
    from verify.outputs import OutputPlan

    plan = OutputPlan()
    out = output_file("--out", args.out)
    plan.add("--out", out, out.with_name(out.name + ".lock"))
    plot_file(args.plot, plan)
    if args.csv:
        plan.add("--csv", output_file("--csv", args.csv, suffixes=(".csv",)))
    plan.check()
    if out.exists():  # resumed: refused before any work if it is not a results file
        from verify.sweep.results import _read_records

        try:
            _read_records(out)
        except ValidationError as exc:
            raise ValidationError("--out", exc.expected, str(out), "not overwritten") from None


def check_grid_size(args: argparse.Namespace, n_cells: int, seeds_flag: str = "--seeds") -> None:
    """Refuse (exit 2, with the estimate) a grid the machine cannot hold, before any work."""
    import os

    from verify.sizes import check_size, sweep_estimate

    workers = args.jobs or os.cpu_count() or 1
    d = list(model_value(args, "d_model", many=True))
    ell = list(model_value(args, "n_layers", many=True))
    one = sweep_estimate(1, [max(args.n_bits)], args.kind, d, ell, 1)
    check_size("-N/--n-bits", one, args.allow_large)
    est = sweep_estimate(n_cells, list(args.n_bits), args.kind, d, ell, workers)
    check_size(seeds_flag, est, args.allow_large)


def run(args: argparse.Namespace) -> int:
    # everything the user typed is checked before any work
    plan_outputs(args)
    seeds = parse_seeds(args.seeds)
    config = parse_config(args.config)
    executor = (args.executor or "local").strip()
    remote = executor.startswith(("dask://", "tcp://", "ray://", "ray:"))
    if not (executor in ("local", "dask", "ray") or remote):
        raise ValidationError(
            "--executor", "local, dask, dask://HOST:PORT, ray or ray://HOST:PORT", executor
        )
    if args.jobs is not None and remote:
        raise ValidationError(
            "-j/--jobs", "no -j with a running cluster (its workers are fixed)", args.jobs
        )

    if args.kind == "transformer":  # what can be checked without loading the model
        check_config_keys(config)
        check_heads(model_value(args, "d_model", many=True), model_value(args, "n_heads"))

    from verify.plugins import requested_modules
    from verify.sweep import SweepGrid

    kind_is_model = args.kind == "transformer"
    if args.kind == "family" and not args.family:
        raise ValidationError("--family", "a family name with --kind family")
    if args.family:
        from verify.boolean import get_family

        get_family(args.family)
    if not kind_is_model:
        from verify.commands._options import typed

        ignored = typed(args)
        if ignored or config:
            raise ValidationError(
                (ignored or ["--config"])[0],
                "--kind transformer (only transformer cells have a model)",
            )

    grid = SweepGrid(
        schemes=tuple(model_value(args, "scheme", many=True)),
        d_model=tuple(model_value(args, "d_model", many=True)),
        n_layers=tuple(model_value(args, "n_layers", many=True)),
        ln_eps=tuple(model_value(args, "eps", many=True)),
        n_bits=tuple(args.n_bits),
        seeds=seeds,
        n_heads=model_value(args, "n_heads"),
        scale=model_value(args, "scale"),
        kind=args.kind,
        model=config,
        family=args.family,
        imports=tuple(requested_modules()),
    )
    check_grid_size(args, grid.n_cells)
    return _run_grid(args, grid, executor)


def _run_grid(args: argparse.Namespace, grid: Any, executor: str) -> int:
    from verify.interrupts import InterruptGuard
    from verify.sweep import (
        load_results,
        open_executor,
        results_rows,
        run_sweep,
        summarize,
        write_csv,
    )

    phase = ["kernels"]

    def announce() -> str:
        if phase[0] == "kernels":
            return f"stopping before any cell ran (kernels); {args.out} stays as it was"
        return (
            f"stopping the running cells; every finished cell is already in {args.out}"
            " (rerun the same command to resume)"
        )

    with InterruptGuard(announce) as guard:
        try:
            if grid.kind == "transformer":  # the kernels, a step of its own (first run: minutes)
                from verify.kernel_cache.warmup import compile_kernels

                compile_kernels(_log)
            phase[0] = "cells"
            with open_executor(executor, jobs=args.jobs) as handle:
                _log(f"sweep: {grid.n_cells} cells on {handle.description}")
                s = run_sweep(grid, args.out, executor=handle, progress=not args.no_progress)
        except KeyboardInterrupt:
            done = sum(1 for r in load_results(args.out) if r["status"] == "ok")
            _log(f"sweep: interrupted; {done} finished cell(s) in {args.out}")
            return guard.exit_code
    _log(
        f"sweep: {s.n_cells} cells, {s.n_skipped} already done, {s.n_run} run now"
        f" ({s.n_errors} errors) in {s.runtime_s:.1f} s -> {s.path}"
    )
    latest = [r for r in load_results(args.out) if grid.contains(r.get("cell") or {})]
    errors = [r for r in latest if r["status"] != "ok"]
    if errors:
        first = errors[0]["error"] or {}
        _log(
            f"  {len(errors)} cell(s) failed; first: {first.get('type')}: {first.get('message')}"
            f" (cell {json.dumps(errors[0]['cell'])}; tracebacks in {args.out})"
        )
    rows = [r for r in summarize(latest) if r["n_decided"]]
    varying = [
        k
        for k in (rows[0]["setting"] if rows else {})
        if k != "kind" and len({json.dumps(r["setting"].get(k)) for r in rows}) > 1
    ]
    written: list[str] = []
    outputs = " and ".join(x for x in (args.csv, args.plot) if x)
    writing = InterruptGuard(lambda: f"writing {outputs}; they complete in a moment")
    with writing, writing.deferred():  # a first Ctrl-C waits for whole files
        if args.csv:
            written.append(str(write_csv(results_rows(latest), args.csv)))
        if args.plot and any(r["n_nonconstant"] for r in rows):
            from verify.report.figures import draw_figure_files

            fig = p_k0_figure(rows, varying)
            written += [str(p) for p in draw_figure_files(fig, args.plot)]
        elif args.plot:
            why = "every decided model is constant" if rows else "no decided cell"
            _log(f"no plot: {why} ({args.plot} not written)")
    for path in written:
        _log(f"wrote {path}")
    if args.json:
        from verify.json_values import jsonable

        out = {
            "results": str(s.path),
            "cells": s.n_cells,
            "run_now": s.n_run,
            "skipped": s.n_skipped,
            "errors": len(errors),
            "varying": varying,
            "rows": rows,
            "written": written,
        }
        print(json.dumps(jsonable(out), indent=1))
    else:
        print("setting | seeds | decided | constant | mean as | mean K_0 | P[K_0 >= 1] [95% CI]")
        for row in rows:
            st = ", ".join(f"{k}={row['setting'].get(k)}" for k in varying) or "all cells"
            lo, hi = row["p_K0_ge_1_ci"]
            p = row["p_K0_ge_1"]
            pk = "n/a" if math.isnan(p) else f"{p:.3f} [{lo:.3f}, {hi:.3f}]"
            print(
                f"{st} | {row['n']} | {row['n_decided']} | {row['frac_constant']:.3f} |"
                f" {row['mean_avg_sensitivity']:.4g} | {row['mean_K0']:.4g} | {pk}"
            )
        if not rows:
            print("(no decided cell)")
    return 1 if errors else 0


_SHORT = {
    "scheme": "scheme",
    "d_model": "D",
    "n_layers": "L",
    "ln_eps": "eps",
    "n_bits": "N",
    "n_heads": "H",
    "scale": "scale",
    "model": "config",
}


def p_k0_figure(rows: list[dict], varying: list[str]):  # -> FigureData
    """Bars of P[K_0 >= 1 | f not constant] per setting with 95% Clopper-Pearson error bars,
    and the limit 1 - 1/e of a uniformly random Boolean function (almost never constant) as a
    horizontal line. Conditioned on f not constant: a constant f has K_0 = 2^N, and most
    drawn transformers are constant (78-92% in the README's sweep), which put every
    unconditional bar at 1.0. Each setting's label says how many of its decided models were
    not constant (the bar's n); settings whose models are all constant have no bar. Labels
    hold one short item a line (values only for the scheme), so they stay apart."""
    from verify.registry import FigureData

    def label(r: dict) -> str:
        items = [
            str(r["setting"].get(k))
            if k == "scheme"
            else f"{_SHORT.get(k, k)}={r['setting'].get(k)}"
            for k in varying
        ]
        items.append(f"{r['n_nonconstant']} of {r['n_decided']}")
        return "\n".join(items)

    drawn = [r for r in rows if r["n_nonconstant"]]
    ps = [r["p_K0_ge_1_nonconstant"] for r in drawn]
    ci = [r["p_K0_ge_1_nonconstant_ci"] for r in drawn]
    err = [[p - lo, hi - p] for p, (lo, hi) in zip(ps, ci, strict=True)]
    labels = [label(r) for r in drawn]
    limit = 1.0 - math.exp(-1.0)
    setting = ", ".join(_SHORT.get(k, k) for k in varying) or "setting"
    return FigureData(
        name="sweep_p_k0",
        title="P[K_0 >= 1] of the non-constant models per setting (sweep)",
        kind="bars",
        data={
            "series": [
                {
                    "label": "random transformers, f not constant",
                    "x": labels,
                    "y": ps,
                    "yerr": err,
                    "n": [r["n_nonconstant"] for r in drawn],
                },  # fmt: skip
                {"label": "random f, N -> inf: 1 - 1/e", "x": labels, "y": [limit] * len(drawn)},
            ],
            "xlabel": f"{setting}; non-constant of decided models",
            "ylabel": "P[K_0 >= 1 | f not constant]",
            "probability": True,
            "interval": "95% Clopper-Pearson",
        },
    )


__all__ = ["DEFAULTS", "p_k0_figure", "parse_config", "parse_seeds", "register", "run"]
