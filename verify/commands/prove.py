"""``python -m verify prove [--only ID] [--json] [--coq [--coq-dir DIR]] [--list]``.

Discharges the derivation obligations of docs/proofs.md (z3, arb branch and bound, sympy, the
chain to the code) and their weakened twins; prints a table (statement, step, method, status,
time), the obligations by class and each statement's earned status; attacks every axiom the
obligations cite. Exit 1 when an obligation is failed, vacuous, degenerate or unknown, a twin is
not refuted, a cited axiom's attack finds a violation (or, with --coq, Coq rejects a generated
lemma's statement: a translation error); 2 on bad input.
``--focus ID`` discharges a statement and every statement it uses and draws them.
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
        help="also translate each z3, arb and sympy-identity obligation's claim into a Coq lemma"
        " and check it with coqc (counts by status; skipped with a message when coqc is absent)",
    )
    p.add_argument("--coq-dir", default=None, metavar="DIR", help="where the .v files go")
    p.add_argument(
        "--focus",
        default=None,
        metavar="ID",
        help='a statement ("Cor 4.6") or obligation id: discharge its statement and every'
        " statement it uses, and draw that part of the blueprint (--figure)",
    )
    p.add_argument(
        "--figure",
        default=None,
        metavar="PATH",
        help="with --focus: where the figure goes (.png or .pdf; default blueprint_<id>.png)",
    )
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
    focus_scope: list[str] = []
    if args.focus is not None:
        focus_scope = _focus_scope(args.focus)
        args.only = [*args.only, *focus_scope]
    elif args.figure is not None:
        from verify.errors import ValidationError

        raise ValidationError("--figure", "a path together with --focus ID", args.figure)
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
        coq_start = time.perf_counter()
        coq_results = run_coq(obs, out_dir)
        coq_seconds = time.perf_counter() - coq_start
    if args.json:  # a list of obligations; with --coq an object: the list and the Coq counts
        coq_by_id = {c.id: c for c in coq_results}
        doc = []
        from verify.proofs.status import obligation_class

        for o in outcomes:
            entry = o.as_dict()
            entry["class"] = obligation_class(o.obligation)
            if o.obligation.id in coq_by_id:
                entry["coq"] = coq_by_id[o.obligation.id].as_dict()
            doc.append(entry)
        if args.coq:
            json.dump(
                {"obligations": doc, "coq": _coq_summary(coq_results, out_dir, coq_seconds)},
                sys.stdout,
                indent=1,
            )
        else:
            json.dump(doc, sys.stdout, indent=1)
        print()
        earned = {}
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
        n_ok = len(outcomes) - len(bad)
        earned = _print_earned(outcomes)
        print(
            f"{n_ok} of {len(outcomes)} obligations proved with their twins refuted"
            f" in {total:.1f} s"
        )
        if args.coq:
            _print_coq(coq_results, out_dir, coq_seconds)
    broken_axioms = _attack_axioms(obs, quiet=args.json)
    if args.focus is not None:
        _draw_focus(args, outcomes, focus_scope, earned)
    if bad or broken_axioms or any(c.status == "error" for c in coq_results):
        return 1
    return 0


def _coq_summary(results, out_dir, seconds: float) -> dict:
    """The Coq counts: by status, by status and method, the untranslatable constructs."""
    from collections import Counter

    from verify.proofs.coq import coq_counts

    return {
        "dir": str(out_dir),
        "seconds": round(seconds, 1),
        "counts": dict(Counter(r.status for r in results)),
        "by_method": coq_counts(results),
        "by_class": coq_counts(results, "class"),
        "untranslatable": dict(Counter(r.detail for r in results if r.status == "untranslatable")),
    }


def _print_coq(results, out_dir, seconds: float) -> None:
    """One line per translated lemma that is not checked, then the counts."""
    for c in results:
        if c.status in ("not closed", "error"):
            print(f"coq {c.status:10s} {c.id}: {c.detail[:160]} ({c.path})")
    skipped = [c for c in results if c.status == "skipped"]
    if skipped:
        print(f"coq skipped: {skipped[0].detail}; the {len(skipped)} lemmas are written")
    s = _coq_summary(results, out_dir, seconds)
    by = s["by_method"]
    parts = [
        f"{st} {n} ({', '.join(f'{m} {k}' for m, k in sorted(by[st].items()))})"
        for st, n in sorted(s["counts"].items())
    ]
    print(f"coq: {len(results)} obligations: " + "; ".join(parts) + f" in {seconds:.1f} s")
    checked = s["by_class"].get("checked", {})
    print(
        "coq checked by class: "
        + (", ".join(f"{k} {v}" for k, v in sorted(checked.items())) or "none")
    )
    if s["untranslatable"]:
        print(
            "coq untranslatable: "
            + ", ".join(f"{k} {v}" for k, v in sorted(s["untranslatable"].items()))
        )
    print(f"coq lemmas: {out_dir}")


AXIOM_DRAWS = 1000  # per axiom in prove (the test suite runs 10^4 under Hypothesis)


def _attack_axioms(obs, quiet: bool = False) -> list[str]:
    """Attack every axiom the selected obligations cite (seeded draws, docs/proofs.md) and
    check the scalar schema of each one a ``uses=`` instantiates on its attack's draws (it
    must be the image of the attacked statement; tests/test_proofs_axiom_schemas.py checks
    every schema); print a line per violated axiom or schema and a summary
    (stderr with --json); return the violated ids."""
    from verify.proofs.axiom_schemas import check_schema
    from verify.proofs.axioms import attack_axiom
    from verify.proofs.core import AXIOMS

    used = sorted({f for ob in obs for f in ob.facts if f in AXIOMS})
    linked = {u.fact for ob in obs for u in ob.meta.get("uses", ()) if u.fact in AXIOMS}
    out = sys.stderr if quiet else sys.stdout
    broken = []
    for a in used:
        worst, seed = attack_axiom(a, AXIOM_DRAWS)
        if not worst <= 1e-9:
            broken.append(a)
            print(f"NOT OK {a}: its attack found a violation {worst:.3g} (seed {seed})", file=out)
            continue
        if a not in linked:
            continue
        worst, seed = check_schema(a, AXIOM_DRAWS)
        if not worst <= 1e-9:
            broken.append(a)
            print(
                f"NOT OK {a}: its schema fails on its attack's draws by {worst:.3g} (seed {seed})",
                file=out,
            )
    print(
        f"{len(used)} axioms attacked ({AXIOM_DRAWS} draws each; the schemas of the"
        f" {len(linked)} instantiated by uses= checked on the same draws): "
        + (f"{len(broken)} violated" if broken else "no violation"),
        file=out,
    )
    return broken


def _focus_statement(name: str) -> str:
    """The statement ``name`` names: itself, or the statement of an obligation id."""
    from verify.errors import ValidationError
    from verify.proofs.runner import STATEMENTS, load

    by_id = {ob.id: ob.statement for ob in load()}
    st = by_id.get(name) or next((s for s in STATEMENTS if s.lower() == name.lower()), None)
    if st is None:
        raise ValidationError("--focus", "a statement or an obligation id (see prove --list)", name)
    return st


def _focus_scope(name: str) -> list[str]:
    """The statement of ``name`` (a statement or an obligation id) and every statement it
    uses, transitively."""
    from verify.proofs.runner import STATEMENTS
    from verify.proofs.status import statement_uses

    st = _focus_statement(name)
    uses = statement_uses()
    todo, seen = [st], []
    while todo:
        cur = todo.pop()
        if cur not in seen:
            seen.append(cur)
            todo.extend(uses.get(cur, ()))
    return [s for s in STATEMENTS if s in seen]


def _print_earned(outcomes) -> dict:
    """Print each statement's earned status and the obligations by class; return the
    statuses."""
    from collections import Counter

    from verify.proofs.citations import citation_counts as obligation_kinds
    from verify.proofs.core import OBLIGATIONS
    from verify.proofs.status import citation_counts, earned_statuses, obligation_class

    sts = list(dict.fromkeys(o.obligation.statement for o in outcomes))
    earned = earned_statuses(outcomes, sts)
    classes = Counter(obligation_class(o.obligation) for o in outcomes)
    print("obligations by class: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    cites = citation_counts(o.obligation for o in outcomes)
    print(
        "citations checked by uses=: " + ", ".join(f"{k} {n} of {t}" for k, (n, t) in cites.items())
    )
    kinds = obligation_kinds(o.obligation for o in outcomes)
    print(
        f"  of the obligation citations: {kinds['composition']} are compositions in chains (no"
        f" hypothesis); of the rest {kinds['checked']} checked, {kinds['label']} labels"
    )
    print(f"{'statement':24s} {'earned':14s} {'derivation':14s} weakest on its path")
    done = {o.obligation.id for o in outcomes}
    scope = set(_focus_scope_all(sts))
    missing = {ob.statement for ob in OBLIGATIONS.values() if ob.statement in scope}
    missing = {st for st in missing if any(
        ob.id not in done for ob in OBLIGATIONS.values() if ob.statement == st)}  # fmt: skip
    for st, e in earned.items():
        if _closure(st) & missing:  # some obligation on its path was not discharged
            print(f"{st:24s} (not all of its path discharged: run without --only, or --focus)")
            continue
        print(f"{st:24s} {e['status']:14s} {e['derivation']:14s} {e['weakest'] or '-'}")
    return earned


def _closure(st: str) -> set[str]:
    from verify.proofs.status import statement_uses

    uses = statement_uses()
    todo, seen = [st], set()
    while todo:
        cur = todo.pop()
        if cur not in seen:
            seen.add(cur)
            todo.extend(uses.get(cur, ()))
    return seen


def _focus_scope_all(sts) -> set[str]:
    out: set[str] = set()
    for st in sts:
        out |= _closure(st)
    return out


def _draw_focus(args, outcomes, scope, earned) -> None:
    from pathlib import Path

    from verify.proofs.blueprint import blueprint_graph, draw_blueprint
    from verify.proofs.status import trust_base
    from verify.registry.core import slugify

    target = _focus_statement(args.focus)
    t = trust_base(target)
    print(
        f"trust base of {target}: axioms {', '.join(t['axioms']) or 'none'} (cited without a"
        f" checked use: {', '.join(t['axioms_cited_only']) or 'none'}; no schema:"
        f" {', '.join(t['axioms_no_schema']) or 'none'}); solvers"
        f" {', '.join(t['solvers'])}; sampled {len(t['sampled'])}, instances"
        f" {len(t['instances'])}, boxes {len(t['boxes'])}, prose {len(t['prose'])}"
    )
    path = Path(args.figure or f"blueprint_{slugify(args.focus)}.png")
    graph = blueprint_graph(outcomes, scope=scope)
    written = draw_blueprint(graph, path.with_suffix(""), (path.suffix or ".png",))
    print(f"figure: {written[0]} ({len(scope)} statements: {', '.join(scope)})", file=sys.stderr)
