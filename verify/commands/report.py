"""``python -m verify report [--quick|--full] [--out DIR] [--only ID ...] [--seed S]``."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verify.report import Report

DEFAULT_OUT = "docs/reports/latest"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="run every registered statement's checks and write report.md/.json and figures",
        description=(
            "Run the registered statements' checks and write report.md, report.json and"
            " figures/*.png. Exit code 0 when every statement holds, is vacuous or was not run"
            " at this budget, or is undecided (listed); 1 when one is violated or its check"
            " raised; 2 on bad"
            " usage; 130 when interrupted (Ctrl-C: the report of the finished checks is"
            " written). Writing docs/reports/example also refreshes the README's table of"
            " statements."
        ),
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--quick",
        dest="budget",
        action="store_const",
        const="quick",
        help="budget 'quick', no slow checks (a few minutes on 2 cores)",
    )
    g.add_argument(
        "--full",
        dest="budget",
        action="store_const",
        const="full",
        help="budget 'full' and the slow checks: the paper-size experiments",
    )
    p.set_defaults(budget="default")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"default {DEFAULT_OUT}")
    p.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        default=None,
        help='statement ids, e.g. --only "Lemma 3.2" cor_5_1',
    )
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of every check (0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--list", action="store_true", help="list the statements and their checks, run nothing"
    )
    p.set_defaults(func=run)


def list_statements(only: list[str] | None) -> int:
    """Print each statement (id, slug, title) and its checks (slow ones marked)."""
    from verify.report.runner import select_statements

    for st in select_statements(only):
        print(f"{st.id}  [{st.slug}]  {st.title}  {st.confidence}")
        for c in st.checks:
            print(f"    - {c.name}{'  (slow)' if c.slow else ''}")
        if not st.checks:
            print("    (no check registered)")
    return 0


def run(args: argparse.Namespace) -> int:
    from verify.report import generate_report
    from verify.report.runner import FAILING, KNOWN_VIOLATION

    if args.list:
        return list_statements(args.only)

    argv = ["python", "-m", "verify", "report"]
    if args.budget != "default":
        argv.append(f"--{args.budget}")
    if args.only:
        argv += ["--only", *args.only]
    if args.seed:
        argv += ["--seed", str(args.seed)]
    if args.out != DEFAULT_OUT:
        argv += ["--out", args.out]
    report = generate_report(
        args.out,
        budget=args.budget,
        include_slow=args.budget == "full",
        seed=args.seed,
        only=args.only,
        progress=not args.no_progress,
        command=shlex.join(argv),
    )
    summ = report.document["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in summ["counts"].items() if n) or "no statements"
    print(f"report: {counts}; {summ['runtime_s']:.1f} s", file=sys.stderr)
    timed = sorted(
        (
            (c["runtime_s"], st["id"], c["name"])
            for st in report.document["statements"]
            for c in st["checks"]
        ),
        reverse=True,
    )
    if timed:
        slow = "; ".join(f"{sid} [{name[:40]}] {t:.1f} s" for t, sid, name in timed[:3])
        print(f"  slowest checks: {slow}", file=sys.stderr)
    for st in report.document["statements"]:
        if st["status"] in FAILING or st["status"] in (KNOWN_VIOLATION, "undecided"):
            print(f"  {st['id']}: {st['status']}", file=sys.stderr)
    print(f"wrote {report.markdown}, {report.json} and {len(report.figures)} figure(s)")
    if report.document["summary"]["n_checks_interrupted"]:
        print("interrupted: the report holds the checks that finished", file=sys.stderr)
        return 130
    _refresh_readme(report)
    return report.exit_code


def _refresh_readme(report: Report) -> None:
    """Writing the example report (docs/reports/example of this checkout) also refreshes the
    README's table of statements."""
    from verify.report.readme import EXAMPLE_DIR, update_readme
    from verify.report.runner import REPO_ROOT

    if report.out_dir.resolve() == (REPO_ROOT / EXAMPLE_DIR).resolve():
        if update_readme(
            REPO_ROOT / "README.md", report.document, EXAMPLE_DIR.as_posix() + "/report.md"
        ):
            print(f"updated the table of statements in {REPO_ROOT / 'README.md'}")
