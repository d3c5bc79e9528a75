"""``python -m verify train``: the training experiment of ``verify.experiments.train``.

Trains the spec's transformer (optional extra torch; CPU; seeded) on PARITY, sparse PARITY,
MAJORITY, FIRST and DICTATOR at several N, appends one JSON line per trained model to --out
(a rerun with the same settings resumes), prints a table and, with --plot-dir, draws blowup,
sharpness, accuracy and sensitivity against N per function. See docs/torch.md.
"""

from __future__ import annotations

import argparse

FUNCTIONS = ("parity", "sparse_parity", "majority", "first", "dictator")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train the spec transformer on Boolean targets and measure H&R's quantities",
        description=(
            "Train the spec's transformer (torch, CPU, seeded) on PARITY, sparse PARITY,"
            " MAJORITY, FIRST, DICTATOR at several N; record certified truth tables, accuracy,"
            " sensitivity, profile and K_0, beta and beta_hr, parameter norm and Hahn & Rofin's"
            " sharpness as JSON lines."
        ),
    )
    p.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=FUNCTIONS)
    p.add_argument("-N", "--n-bits", nargs="+", type=int, default=[6, 10, 14, 18], dest="ns")
    p.add_argument("--seeds", nargs="+", type=int, default=[0], help="training seeds")
    p.add_argument("-D", "--d-model", type=int, default=16)
    p.add_argument("-L", "--n-layers", type=int, default=2)
    p.add_argument("-H", "--n-heads", type=int, default=2)
    p.add_argument("--d-ff", type=int, default=32)
    p.add_argument("--eps", type=float, default=1e-5, help="layer-norm eps (torch's default)")
    p.add_argument("--pre-ln", action="store_true", help="norm_first (default post-LN)")
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument(
        "--targets",
        choices=("pm1", "01"),
        default="pm1",
        help="MSE targets: pm1 (-1/+1, label 1 iff T > 0) or 01 (0/1 as Hahn & Rofin, label 1"
        " iff T > 0.5); H&R's recipe: --targets 01 --lr 3e-4 --weight-decay 0.1",
    )
    p.add_argument("--sigma", type=float, default=0.02, help="sharpness noise (H&R: 0.02)")
    p.add_argument(
        "--exhaustive-max", type=int, default=20, help="certified tables over all 2^N up to N"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--out", default=None, metavar="FILE.jsonl", help="append records here")
    p.add_argument("--plot-dir", default=None, metavar="DIR", help="draw the figures here")
    p.add_argument("--json", action="store_true", help="print the records as JSON lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from verify.commands._options import output_dir, output_file
    from verify.errors import ValidationError

    # before any work: the output paths, and the options torch will not check
    if args.out:
        output_file("--out", args.out)
    if args.plot_dir:
        output_dir("--plot-dir", args.plot_dir)
    if args.threads < 1:
        raise ValidationError("--threads", "an integer >= 1", args.threads)
    from verify.torch import TorchUnavailableError, _require_torch

    try:
        _require_torch()
    except TorchUnavailableError:
        raise ValidationError(
            "train", "PyTorch installed", hint="pip install '.[torch]', see docs/torch.md"
        ) from None
    import torch

    from verify.experiments.train import TrainSettings, figures, run_experiment, summary_table

    torch.set_num_threads(args.threads)
    settings = TrainSettings(
        d_model=args.d_model,
        n_layers=args.n_layers,
        n_heads=args.n_heads,
        d_ff=args.d_ff,
        ln_eps=args.eps,
        norm_first=args.pre_ln,
        steps=args.steps,
        batch=args.batch,
        lr=args.lr,
        weight_decay=args.weight_decay,
        targets=args.targets,
        sigma=args.sigma,
        exhaustive_max=args.exhaustive_max,
        max_len=max(32, max(args.ns)),
        threads=args.threads,
    )
    records = run_experiment(
        args.functions, args.ns, args.seeds, settings, out=args.out, progress=not args.json
    )
    if args.json:
        for rec in records:
            print(json.dumps(rec))
    else:
        print(summary_table(records))
    if args.plot_dir:
        from verify.report.figures import draw_figure

        out = Path(args.plot_dir)
        out.mkdir(parents=True, exist_ok=True)
        for fig in figures(records):
            path = draw_figure(fig, out / f"{fig.name}.png")
            if not args.json:
                print(f"wrote {path}")
    return 0
