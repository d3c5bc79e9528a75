"""``python -m verify report [--quick|--full] [--out DIR] [--only ID ...] [--seed S] [-j J]
[--executor WHERE] [--pdf] [--json]``."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from verify.commands._options import add_jobs, add_json, add_progress, nonnegative_int, output_dir
from verify.errors import ValidationError

if TYPE_CHECKING:
    from verify.report import Report

DEFAULT_OUT = "docs/reports/latest"
ONLY_OUT = "docs/reports/only"  # --only without --out writes to ONLY_OUT/<ids>


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="run every registered statement's checks and write report.md/.json and figures",
        description=(
            "Run the registered statements' checks and write report.md, report.json, rows.csv"
            " and figures/ (PNG at 300 dpi, with --pdf also PDF, and each figure's data as CSV)."
            " The checks run in -j worker processes (one per core) or on a cluster (--executor),"
            " with the same statuses and numbers as a serial run (-j 1). The Numba"
            " kernels are compiled (first run only) or loaded from the cache first, as a step"
            " of its own that no check's time includes. Exit code 0 when every statement"
            " holds, is vacuous or was not run at this budget, or is undecided (listed); 1 when"
            " one is violated or its check raised; 2 on bad usage (checked before any work);"
            " 130 when interrupted (Ctrl-C: the report of the finished checks is written)."
            " Writing docs/reports/example also refreshes the README's table of statements."
        ),
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--quick",
        dest="budget",
        action="store_const",
        const="quick",
        help="budget 'quick', no slow checks (under a minute warm on 2 cores)",
    )
    g.add_argument(
        "--default",
        dest="budget",
        action="store_const",
        const="default",
        help="budget 'default' (what `report` without --only runs): larger samples than quick",
    )
    g.add_argument(
        "--full",
        dest="budget",
        action="store_const",
        const="full",
        help="budget 'full' and the slow checks: the paper-size experiments",
    )
    p.set_defaults(budget=None)  # "default" for the whole report, "quick" with --only
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"output directory (default {DEFAULT_OUT}; with --only, {ONLY_OUT}/<ids>)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        default=None,
        help='statement ids, e.g. --only "Lemma 3.2" cor_5_1; runs at budget quick unless'
        " --full or --default is given (the whole report's default budget is 'default')",
    )
    p.add_argument(
        "--seed", type=nonnegative_int, default=0, metavar="S", help="seed of every check (0)"
    )
    add_jobs(p)
    p.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="where the checks run: local (default: -j processes; -j 1 runs everything in this"
        " process), dask (a LocalCluster of -j workers), dask://HOST:PORT (a running dask"
        " scheduler), ray, or ray://HOST:PORT; the figures and the derivations stay local"
        " (see docs/clusters.md)",
    )
    p.add_argument(
        "--pdf", action="store_true", help="draw each figure as PDF too (default: PNG only)"
    )
    add_progress(p)
    p.add_argument(
        "--list", action="store_true", help="list the statements and their checks, run nothing"
    )
    add_json(p, "the summary (or, with --list, the statements)")
    p.set_defaults(func=run)


def only_folder(only: list[str]) -> str:
    """``docs/reports/only/<ids>``: the folder of a report restricted to ``only`` (the ids as
    typed, made file-name safe: "Thm 4.5" -> thm_4_5, several joined by '+')."""
    slugs = [re.sub(r"[^a-z0-9]+", "_", s.strip().lower()).strip("_") or "x" for s in only]
    return f"{ONLY_OUT}/{'+'.join(dict.fromkeys(slugs))}"


def list_statements(only: list[str] | None, as_json: bool = False) -> int:
    """Print each statement (id, slug, title) and its checks (slow ones marked)."""
    from verify.report.runner import select_statements

    statements = select_statements(only)
    if as_json:
        out = [
            {
                "id": st.id,
                "slug": st.slug,
                "title": st.title,
                "confidence": st.confidence,
                "checks": [{"name": c.name, "slow": bool(c.slow)} for c in st.checks],
            }
            for st in statements
        ]
        print(json.dumps(out, indent=1))
        return 0
    for st in statements:
        print(f"{st.id}  [{st.slug}]  {st.title}  {st.confidence}")
        for c in st.checks:
            print(f"    - {c.name}{'  (slow)' if c.slow else ''}")
        if not st.checks:
            print("    (no check registered)")
    return 0


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    if args.list:
        return list_statements(args.only, args.json)
    out = args.out or (only_folder(args.only) if args.only else DEFAULT_OUT)
    executor = (args.executor or "local").strip()
    if not (
        executor in ("local", "dask", "ray")
        or executor.startswith(("dask://", "tcp://", "ray://", "ray:"))
    ):
        raise ValidationError(
            "--executor", "local, dask, dask://HOST:PORT, ray or ray://HOST:PORT", executor
        )
    budget = args.budget or ("quick" if args.only else "default")
    # before any work: exit 2 on a path that cannot be written, or a folder that holds files
    # other than a previous report (the report replaces the folder whole)
    output_dir("--out", out)
    from verify.outputs import check_replaceable
    from verify.report import REPORT_FILES

    check_replaceable("--out", out, REPORT_FILES)
    from verify.outputs import folder_lock

    with folder_lock("--out", out, "report"):  # a second report into it: exit 2, one line
        return _report(args, out, executor, budget)


def _report(args: argparse.Namespace, out: str, executor: str, budget: str) -> int:
    """The report into ``out`` (checked and locked by :func:`run`)."""
    if executor == "local" and args.jobs != 1:  # its imports run beside this process's
        from verify._forkserver import REPORT_PRELOAD, start_fork_server

        start_fork_server(REPORT_PRELOAD)

    from verify.interrupts import InterruptGuard
    from verify.report import generate_report
    from verify.report.writer import RunState

    argv = ["python", "-m", "verify", "report"]
    if args.budget is not None:
        argv.append(f"--{args.budget}")
    if args.only:
        argv += ["--only", *args.only]
    if args.seed:
        argv += ["--seed", str(args.seed)]
    if args.out is not None:
        argv += ["--out", args.out]
    if args.pdf:
        argv.append("--pdf")
    state = RunState(out_dir=Path(out))
    g = InterruptGuard(state.announce, "second interrupt: abandoned; the folder is as before")
    try:
        with g:
            report = generate_report(
                out,
                budget=budget,
                include_slow=budget == "full",
                seed=args.seed,
                only=args.only,
                progress=not args.no_progress,
                command=shlex.join(argv),
                log=_log,
                guard=g,
                state=state,
                jobs=args.jobs,
                executor=executor,
                pdf=args.pdf,
            )
    except KeyboardInterrupt:  # before any check ran (kernels, loading the statements)
        _log(f"interrupted before any check ran: nothing written, {out} as it was")
        return g.exit_code
    doc = report.document
    summ = doc["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in summ["counts"].items() if n) or "no statements"
    kernels = doc.get("kernels") or {}
    _log(
        f"report: {counts}; {summ['runtime_s']:.1f} s in all: kernels"
        f" {kernels.get('seconds', 0.0):.1f} s, checks {summ['phases'].get('checks_s', 0.0):.1f} s,"
        f" figures {summ.get('figures_s', 0.0):.1f} s"
    )
    timed = sorted(
        ((c["runtime_s"], st["id"], c["name"]) for st in doc["statements"] for c in st["checks"]),
        reverse=True,
    )
    if timed:
        slow = "; ".join(f"{sid} [{name[:40]}] {t:.1f} s" for t, sid, name in timed[:3])
        _log(f"  slowest checks: {slow}")
    from verify.report.runner import FAILING, KNOWN_VIOLATION

    for st in doc["statements"]:
        if st["status"] in FAILING or st["status"] in (KNOWN_VIOLATION, "undecided"):
            _log(f"  {st['id']}: {st['status']}")
    written = (
        f"wrote {report.markdown}, {report.json}, {report.out_dir / 'rows.csv'} and"
        f" {len(report.figures)} figure(s) ({'PNG, PDF' if args.pdf else 'PNG'}, CSV of the"
        " data) in"
        f" {report.out_dir / 'figures'}"
    )
    if args.json:
        _log(written)
        print(
            json.dumps(
                {
                    "out": str(report.out_dir),
                    "markdown": str(report.markdown),
                    "json": str(report.json),
                    "exit_code": report.exit_code,
                    "summary": summ,
                    "kernels": kernels,
                    "statements": [
                        {"id": st["id"], "status": st["status"], "worst": st["worst"]}
                        for st in doc["statements"]
                    ],
                },
                indent=1,
            )
        )
    else:
        print(written)
    if summ.get("interrupted_in"):  # (a Ctrl-C while the files were written changes nothing)
        _log(f"interrupted: {report.out_dir} holds the report of the checks that finished")
        return g.exit_code if g.interrupted else report.exit_code
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
            _log(f"updated the table of statements in {REPO_ROOT / 'README.md'}")
