"""``python -m verify sweep``: a resumable grid over init scheme x D x L x eps x N x seeds."""

from __future__ import annotations

import argparse
import json
import math
import sys

from verify.errors import ValidationError
from verify.lemmas.registry import FigureData


def parse_seeds(text: str | list[str]) -> list[int]:
    """Seeds from tokens "A:B" (A..B-1), "0,1,5" or "7"; several tokens are concatenated."""
    tokens = [text] if isinstance(text, str) else list(text)
    seeds: list[int] = []
    for tok in tokens:
        try:
            if ":" in tok:
                a, b = tok.split(":", 1)
                seeds.extend(range(int(a), int(b)))
            else:
                seeds.extend(int(x) for x in tok.split(",") if x.strip())
        except ValueError:
            raise ValidationError("--seeds", 'ranges "A:B" or integers "0,1,5"', tok) from None
    if not seeds:
        raise ValidationError("--seeds", "at least one seed", " ".join(tokens))
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
            "Run a grid of cells in parallel on the local cores, appending each finished cell to"
            " a JSON-lines file. Rerun the same command to resume: finished cells are skipped."
            " Exit code 0 when every cell succeeded, 1 when some raised (they are retried on the"
            " next run), 2 on bad usage."
        ),
    )
    p.add_argument("--out", required=True, metavar="FILE", help="results file (JSON lines)")
    p.add_argument(
        "--kind",
        choices=("transformer", "random_function"),
        default="transformer",
        help="random transformers, or the uniformly random Boolean function baseline",
    )
    p.add_argument(
        "--schemes",
        nargs="+",
        default=["uniform"],
        metavar="SCHEME",
        help="init schemes: uniform, gaussian, xavier_uniform, xavier_normal (uniform)",
    )
    p.add_argument(
        "-D", "--d-model", nargs="+", type=int, default=[16], metavar="D", help="d_model (16)"
    )
    p.add_argument(
        "-L", "--n-layers", nargs="+", type=int, default=[1], metavar="L", help="layers (1)"
    )
    p.add_argument(
        "--eps",
        "--ln-eps",
        nargs="+",
        type=float,
        default=[0.0],
        metavar="EPS",
        help="layer-norm epsilon (0)",
    )
    p.add_argument(
        "-N", "--n-bits", nargs="+", type=int, default=[8], metavar="N", help="input length (8)"
    )
    p.add_argument(
        "--seeds", nargs="+", default=["0:10"], metavar="S", help='"A:B", "0,1,5" or "0 1 5" (0:10)'
    )
    p.add_argument("-H", "--heads", type=int, default=2, help="attention heads (2)")
    p.add_argument("--scale", type=float, default=1.0, help="init scale (1.0)")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another ModelConfig field for every cell, e.g. --config norm_first=true"
        " --config pos_encoding=learned (repeatable)",
    )
    p.add_argument("-j", "--workers", type=int, default=None, help="local processes (all cores)")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        default=None,
        help="draw P[K_0 >= 1] per setting (95%% CIs) against the random-function limit 1 - 1/e",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from verify.sweep import SweepGrid, cell_key, load_results, run_sweep, summarize

    grid = SweepGrid(
        schemes=tuple(args.schemes),
        d_model=tuple(args.d_model),
        n_layers=tuple(args.n_layers),
        ln_eps=tuple(args.eps),
        n_bits=tuple(args.n_bits),
        seeds=tuple(parse_seeds(args.seeds)),
        n_heads=args.heads,
        scale=args.scale,
        kind=args.kind,
        model=parse_config(args.config),
    )
    cells = grid.cells()
    s = run_sweep(cells, args.out, max_workers=args.workers, progress=not args.no_progress)
    print(
        f"sweep: {s.n_cells} cells, {s.n_skipped} already done, {s.n_run} run now"
        f" ({s.n_errors} errors) in {s.runtime_s:.1f} s -> {s.path}",
        file=sys.stderr,
    )
    keys = {cell_key(c) for c in cells}
    latest = [r for r in load_results(args.out) if r["key"] in keys]
    rows = [r for r in summarize(latest) if r["n_decided"]]
    varying = [
        k
        for k in (rows[0]["setting"] if rows else {})
        if k != "kind" and len({json.dumps(r["setting"].get(k)) for r in rows}) > 1
    ]
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
    if args.plot and rows:
        from verify.report.figures import draw_figure

        path = draw_figure(p_k0_figure(rows, varying), args.plot)
        print(f"wrote {path}", file=sys.stderr)
    return 1 if any(r["status"] != "ok" for r in latest) else 0


def p_k0_figure(rows: list[dict], varying: list[str]) -> FigureData:
    """Bars of P[K_0 >= 1] per setting with 95% Clopper-Pearson error bars, next to the limit
    1 - 1/e of a uniformly random Boolean function."""
    labels = ["/".join(str(r["setting"].get(k)) for k in varying) or "all" for r in rows]
    ps = [r["p_K0_ge_1"] for r in rows]
    err = [
        [p - r["p_K0_ge_1_ci"][0], r["p_K0_ge_1_ci"][1] - p] for p, r in zip(ps, rows, strict=True)
    ]
    limit = 1.0 - math.exp(-1.0)
    return FigureData(
        name="sweep_p_k0",
        title="P[K_0 >= 1] per setting (sweep), 95% Clopper-Pearson intervals",
        kind="bars",
        data={
            "series": [
                {"label": "sweep cells", "x": labels, "y": ps, "yerr": err},
                {"label": "random f, N -> inf: 1 - 1/e", "x": labels, "y": [limit] * len(rows)},
            ],
            "xlabel": " / ".join(varying) or "setting",
            "ylabel": "P[K_0 >= 1]",
        },
    )
