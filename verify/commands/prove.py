"""``python -m verify prove [--only ID] [--json] [--coq [--coq-dir DIR]] [--list]``.

Discharges the derivation obligations of docs/proofs.md (z3, arb branch and bound, sympy, the
chain to the code) and their weakened twins; prints a table (statement, step, method, status,
time). Exit 1 when an obligation is failed or unknown, or a twin is not refuted (or, with
--coq, a Coq lemma fails); 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from verify.commands._options import add_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "prove",
        help="discharge the derivations' proof obligations (z3, arb, sympy, chain to the code)",
        description=(
            "Discharge every derivation step's proof obligation and refute its weakened twin;"
            " print statement, step, method, status and time. Exit 1 on any failed or unknown"
            " obligation or unrefuted twin."
        ),
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="ID",
        help='an obligation id, id prefix (lemma_2_9) or statement ("Lemma 2.9"); repeatable',
    )
    add_json(p, "the obligations")
    p.add_argument("--list", action="store_true", help="list the obligations and exit")
    p.add_argument(
        "--coq",
        action="store_true",
        help="also write the exp/sqrt/log scalar obligations as Coq lemmas and check them with"
        " coqc (skipped with a message when coqc is absent)",
    )
    p.add_argument("--coq-dir", default=None, metavar="DIR", help="where the .v files go")
    p.set_defaults(func=run)


def _cell(text: str, width: int) -> str:
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "~"


def run(args: argparse.Namespace) -> int:
    from verify.errors import ValidationError
    from verify.proofs.runner import run as discharge_all
    from verify.proofs.runner import select

    if args.coq_dir is not None and not args.coq:
        raise ValidationError("--coq-dir", "--coq as well (the folder is for its .v files)")
    blank = [only for only in args.only if not only.strip()]
    if blank:
        raise ValidationError("--only", "an obligation id, prefix or statement", blank[0])
    obs = select(args.only)
    if args.list:
        for ob in obs:
            print(f"{ob.id:40s} {ob.statement:16s} {ob.method:6s} {ob.step}")
        return 0
    start = time.perf_counter()
    outcomes = discharge_all(obs)
    total = time.perf_counter() - start
    bad = [o for o in outcomes if not o.ok]
    coq_results = []
    if args.coq:
        import tempfile
        from pathlib import Path

        from verify.proofs.coq import run_coq

        out_dir = (
            Path(args.coq_dir) if args.coq_dir else Path(tempfile.mkdtemp(prefix="verify-coq-"))
        )
        coq_results = run_coq(obs, out_dir)
    if args.json:  # a list of obligations (with their Coq lemma's status where one ran)
        coq_by_id = {c.id: c for c in coq_results}
        doc = []
        for o in outcomes:
            entry = o.as_dict()
            if o.obligation.id in coq_by_id:
                c = coq_by_id[o.obligation.id]
                entry["coq"] = {"file": str(c.path), "status": c.status, "detail": c.detail}
            doc.append(entry)
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        print(
            f"{'statement':14s} {'step':44s} {'method':6s} {'status':8s} {'twin':11s}"
            f" {'time':>7s}  id"
        )
        for o in outcomes:
            ob = o.obligation
            print(
                f"{_cell(ob.statement, 14):14s} {_cell(ob.step, 44):44s} {ob.method:6s}"
                f" {o.verdict.status:8s} {o.twin.status:11s} {o.seconds:6.2f}s  {ob.id}"
            )
        for o in bad:
            print(
                f"NOT OK {o.obligation.id}: {o.verdict.detail} {o.verdict.point or ''};"
                f" twin: {o.twin.detail}"
            )
        for c in coq_results:
            print(f"coq {c.status:8s} {c.id}: {c.detail} ({c.path})")
        n_ok = len(outcomes) - len(bad)
        print(
            f"{n_ok} of {len(outcomes)} obligations proved with their twins refuted"
            f" in {total:.1f} s"
        )
    if bad or any(c.status == "failed" for c in coq_results):
        return 1
    return 0
