"""Mutation run of ``verify/theory`` against ``python -m verify prove`` (issue 42).

Each mutant (:mod:`theory_mutants`: a constant halved/doubled/+-1, an operator swapped, a factor
or term dropped, an exponent changed, a comparison or sign flipped, min <-> max, a range off by
one, a return value halved/doubled) is one source edit of one module. It is run as the referee
would: a fresh ``python -m verify prove`` whose import of that module compiles the mutated text
(a meta-path loader serves it; no other file changes). The mutant is

- ``killed``: prove exits 1 naming a failed obligation (``NOT OK <id>``);
- ``error``: prove exits non-zero without naming one (the mutant crashed the import);
- ``timeout``: prove ran longer than 20 s + 10x the traced time of the obligations it runs (at
  most ``--timeout``): it would hang, which is not counted as killed;
- ``survived``: prove exits 0;
- ``unreached``: no obligation executes the mutated function (traced once, below): prove
  cannot see it, not run (``--run-unreached`` runs them too).

Which obligations to run: once, every obligation is discharged on the original code under
``sys.setprofile``, recording which top-level functions and classes of ``verify/theory`` each
one executes (and which run while the obligations are registered, at import). A mutant of
function f runs ``prove --only`` the obligations that executed f (all of them for module-level
code, defaults, decorators, and for code run at import). A kill under ``--only`` is a kill of the
full run (prove exits 1 on any failed obligation); ``--confirm K`` reruns K seeded survivors
with the full ``prove`` (no ``--only``) to check that the trace missed nothing.

Run by hand (long: minutes to hours on a loaded machine)::

    PYTHONPATH=$PWD python benchmarks/mutate_theory.py [--modules bounds small_ball]
        [--sample N --seed S] [--jobs 1] [--timeout 300] [--confirm 10] [--out DIR]

Writes ``DIR/mutants.json`` (every mutant with its outcome) and ``DIR/summary.md`` (counts by
module and operator, and every survivor); ``DIR/trace.json`` caches the trace (keyed by the
theory sources' hash).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mutant_runs import ROOT, ForkPool, load_trace, relevant, run_fresh, theory_files
from theory_mutants import Mutant, mutants_of_file


# ----------------------------------------------------------------------------- the run
def _summary(results: list[dict], args: argparse.Namespace, load: str, wall: float) -> str:
    by = Counter(r["outcome"] for r in results)
    lines = [
        "# Mutation run of verify/theory against `python -m verify prove`",
        "",
        f"- mutants: {len(results)}; {', '.join(f'{k} {v}' for k, v in sorted(by.items()))}",
        f"- seed {args.seed}, sample {args.sample or 'all'}, modules {args.modules or 'all'},"
        f" timeout {args.timeout} s, jobs {args.jobs}; wall {wall / 60:.1f} min; load {load}",
        "",
        "| module | mutants | killed | error | survived | unreached | timeout |",
        "|---|---|---|---|---|---|---|",
    ]
    per_mod: dict[str, Counter] = defaultdict(Counter)
    per_op: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        per_mod[r["path"]][r["outcome"]] += 1
        per_op[r["operator"]][r["outcome"]] += 1
    cols = ("killed", "error", "survived", "unreached", "timeout")
    for name, table in (("module", per_mod), ("operator", per_op)):
        if name == "operator":
            lines += ["", "| operator | mutants | " + " | ".join(cols) + " |", "|---" * 7 + "|"]
        for k in sorted(table):
            c = table[k]
            lines.append(f"| {k} | {sum(c.values())} | " + " | ".join(str(c[x]) for x in cols))
    lines += ["", "## Survivors (prove exits 0) by scope", ""]
    for r in sorted(results, key=lambda r: (r["path"], r["line"])):
        if r["outcome"] in ("survived", "timeout"):
            lines.append(
                f"- {r['path']}:{r['line']} [{r['scope']}, {r['context']}] {r['operator']}:"
                f" `{r['old']}` -> `{r['new']}` ({r['outcome']}; ran {len(r['ran'])})"
            )
    unreached = Counter(
        f"{r['path']}::{r['scope']}" for r in results if r["outcome"] == "unreached"
    )
    lines += ["", "## Unreached scopes (no obligation executes them)", ""]
    lines += [f"- {k}: {v} mutants" for k, v in sorted(unreached.items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modules", nargs="*", help="theory module stems (default: all)")
    p.add_argument("--scopes", nargs="*", help="only mutants in these top-level functions")
    p.add_argument("--operators", nargs="*", help="only these operators")
    p.add_argument("--sample", type=int, default=0, help="a seeded sample of N mutants")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shuffle", action="store_true", help="run in a seeded random order")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--confirm", type=int, default=0, help="rerun K survivors with full prove")
    p.add_argument("--run-unreached", action="store_true")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument(
        "--summary-only",
        action="store_true",
        help="summarise DIR/progress.jsonl (a stopped run: its shuffled prefix) and exit",
    )
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "mutants")
    args = p.parse_args(argv)

    files = [f for f in theory_files() if not args.modules or Path(f).stem in args.modules]
    mutants = [m for f in files for m in mutants_of_file(ROOT, f)]
    if args.scopes:
        mutants = [m for m in mutants if m.scope in args.scopes]
    if args.operators:
        mutants = [m for m in mutants if m.operator in args.operators]
    if args.sample and args.sample < len(mutants):
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=_order)
    if args.shuffle:  # a stopped run then covers every module evenly
        random.Random(args.seed).shuffle(mutants)
    if args.list:
        for m in mutants:
            print(m.label())
        print(f"{len(mutants)} mutants", file=sys.stderr)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if args.summary_only:
        rows = map(json.loads, (args.out / "progress.jsonl").read_text().splitlines())
        return _write(list(rows), args, 0.0)
    tr = load_trace(args.out)
    bad = sorted(set(tr["obligations"]) - set(tr["ok"]))
    if bad:
        print(f"the original code fails {bad}: fix that first", file=sys.stderr)
        return 1
    start = time.perf_counter()
    progress = args.out / "progress.jsonl"  # one line a mutant: a stopped run resumes
    done = {}
    if progress.exists():
        done = {r["id"]: r for r in map(json.loads, progress.read_text().splitlines())}
    results: list[dict] = [done[m.id] for m in mutants if m.id in done]
    mutants = [m for m in mutants if m.id not in done]
    pending: dict[str, dict] = {}

    def tasks():
        for m in mutants:
            ids, why = relevant(m, tr)
            rec = {**m.__dict__, "id": m.id, "ran": ids, "selection": why}
            if not ids and not args.run_unreached:
                yield from _record(rec | {"outcome": "unreached"})
                continue
            base = sum(tr["seconds"].get(i, 0.0) for i in ids) if ids else 60.0
            pending[m.id] = rec
            yield m, ids or None, min(args.timeout, 20.0 + 10.0 * base)

    def _record(rec: dict):
        results.append(rec)
        with progress.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        n = f"[{len(results)}/{total}]"
        print(
            f"{n} {rec['outcome']:9s} {rec['path']}:{rec['line']} {rec['scope']}"
            f" {rec['operator']}: {rec['old']} -> {rec['new']}",
            flush=True,
        )
        return ()

    total = len(mutants) + len(done)
    pool = ForkPool(args.jobs)
    for m, result in pool.run(t for t in tasks() if t):
        _record(pending.pop(m.id) | result)
    survivors = [r for r in results if r["outcome"] == "survived"]
    rng = random.Random(args.seed)
    for r in rng.sample(survivors, min(args.confirm, len(survivors))):
        m = Mutant(**{k: r[k] for k in Mutant.__dataclass_fields__})
        full = run_fresh(m, None, args.timeout * 4)
        r["confirmed_full"] = full["outcome"]
        print(f"full prove on survivor {m.label()}: {full['outcome']}", flush=True)
    return _write(results, args, time.perf_counter() - start)


def _write(results: list[dict], args: argparse.Namespace, wall: float) -> int:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    results.sort(key=lambda r: (r["path"], r["line"], r["col"], r["operator"], r["new"]))
    (args.out / "mutants.json").write_text(json.dumps(results, indent=1))
    (args.out / "summary.md").write_text(_summary(results, args, load, wall))
    print((args.out / "summary.md").read_text())
    return 0


def _order(m: Mutant) -> tuple:
    return (m.path, m.line, m.col, m.operator, m.new)


if __name__ == "__main__":
    sys.exit(main())
