"""``python -m verify gallery --from REPORT_JSON``: redraw docs/figures.md, the figure gallery.

Every figure of the report.json (written by ``python -m verify report --quick``) and the
figure of ``sweep --plot`` on a small grid are drawn into ``DOCS/figures/`` (PNG and the data
as JSON), and ``DOCS/figures.md`` gets one caption per figure (verify.report.gallery).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

# the small grid whose sweep --plot figure the gallery shows
SWEEP_GRID = {"d_model": (8, 16), "n_layers": (1,), "n_bits": (6,), "seeds": tuple(range(64))}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gallery",
        help="redraw the figure gallery docs/figures.md from a report.json",
        description=__doc__.splitlines()[0].split(": ", 1)[1],
    )
    p.add_argument(
        "--from", dest="source", required=True, metavar="REPORT_JSON",
        help="report.json of `python -m verify report --quick --out DIR`",
    )  # fmt: skip
    p.add_argument("--docs", default="docs", metavar="DIR", help="where figures.md goes (docs)")
    p.set_defaults(func=run)


def sweep_figure():  # -> FigureData
    """The ``sweep --plot`` figure of SWEEP_GRID (run here in one process, seeded)."""
    from verify.commands.sweep import p_k0_figure
    from verify.sweep import SweepGrid, load_results, run_sweep, summarize

    cells = SweepGrid(**SWEEP_GRID).cells()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep.jsonl"
        run_sweep(cells, out, max_workers=1, progress=False)
        return p_k0_figure(summarize(load_results(out)), ["d_model"])


def run(args: argparse.Namespace) -> int:
    from verify.errors import ValidationError
    from verify.report.gallery import build_gallery

    if not Path(args.docs).is_dir():
        raise ValidationError("--docs", "an existing directory", args.docs)
    path = build_gallery(args.source, args.docs, extra=[sweep_figure()])
    print(f"wrote {path}", file=sys.stderr)
    return 0
