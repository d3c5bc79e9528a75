"""The blueprint: the dependency graph of statements and derivation steps, each node coloured
by its status, and the report's "Derivation" section per statement.

Node statuses (:mod:`verify.proofs.status`): a statement's is the status it *earned*, the
weakest evidence on its path (proved, instance, box, sampled chain, prose, axiom-only, not
discharged, failed; "no derivation" for a registered statement without obligations); a step's
the weakest evidence of its obligations; *axiom* for a named external fact (attacked, not
proved); *prose* for a step left in prose, with the reason.

Report hooks (verify/report): ``writer.write_report`` calls :func:`report_derivations` and
stores its result as ``doc["derivations"]``, and attaches each statement's entry to its
statement as ``"derivation_steps"``; ``markdown`` renders :func:`blueprint_markdown` after the
overview and :func:`derivation_markdown` in each statement's section.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.outputs import save_options
from verify.proofs.core import AXIOMS, PROSE, Outcome
from verify.proofs.runner import STATEMENTS, load, run
from verify.proofs.status import (
    earned_statuses,
    obligation_class,
    obligation_evidence,
    statement_uses,
    trust_base,
    weakest,
)

__all__ = [
    "BLUEPRINT",
    "COLOURS",
    "blueprint_graph",
    "blueprint_markdown",
    "derivation_scope",
    "derivation_markdown",
    "draw_blueprint",
    "has_obligations",
    "not_discharged",
    "report_derivations",
    "statement_entries",
]

BLUEPRINT = (
    "blueprint"  # the figure's file stem in the report's figures/ (no check figure takes it)
)
NO_OBLIGATIONS = "no statement of this report has derivation obligations"
# the earned statuses (verify.proofs.status.RANKS), "no derivation" for a registered statement
# without obligations (its checks are numerical), and the axiom nodes
COLOURS = {
    "proved": "#2ca02c",
    "instance": "#98df8a",
    "box": "#bcbd22",
    "sampled chain": "#ff7f0e",
    "prose": "#9e9e9e",
    "axiom-only": "#aec7e8",
    "no derivation": "#c5b0d5",
    "not discharged": "#e0e0e0",
    "failed": "#d62728",
    "axiom": "#1f77b4",
}


def _step_status(outs: Sequence[Outcome]) -> str:
    """The weakest evidence of a step's obligations (failed when one does not hold)."""
    return weakest(obligation_evidence(o.obligation) if o.ok else "failed" for o in outs)


def blueprint_graph(
    outcomes: Sequence[Outcome],
    statements: Sequence[str] = (),
    *,
    scope: Sequence[str] = STATEMENTS,
) -> dict[str, Any]:
    """Nodes (id, kind, label, status, statement) and edges (from, to) of the blueprint:
    axiom -> step, step -> step (a fact from another step), step -> statement, statement ->
    statement. ``statements``: registered statements without obligations, drawn as
    numerically checked only; ``scope``: the statements with obligations drawn (those whose
    obligations ``outcomes`` holds, :func:`derivation_scope`)."""
    steps: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        steps.setdefault((o.obligation.statement, o.obligation.step), []).append(o)
    step_of = {o.obligation.id: f"step:{st}:{name}" for (st, name), os in steps.items() for o in os}
    nodes: list[dict[str, Any]] = []
    edges: set[tuple[str, str]] = set()
    all_st = list(dict.fromkeys([*scope, *statements]))
    earned = earned_statuses(outcomes, [st for st in all_st if st in STATEMENTS])
    uses = statement_uses()
    for st in all_st:
        # earned: proved only when every step over its domain and every statement it uses is
        # proved; otherwise the weakest evidence on its path (verify.proofs.status)
        status = earned[st]["status"] if st in earned else "no derivation"
        nodes.append(
            {"id": f"st:{st}", "kind": "statement", "label": st, "status": status, "statement": st}
        )
        for dep in uses.get(st, ()):
            if dep in all_st:
                edges.add((f"st:{dep}", f"st:{st}"))
    used_axioms: set[str] = set()
    for (st, name), outs in steps.items():
        sid = f"step:{st}:{name}"
        nodes.append(
            {
                "id": sid,
                "kind": "step",
                "label": name,
                "status": _step_status(outs),
                "statement": st,
                "obligations": [o.obligation.id for o in outs],
            }
        )
        edges.add((sid, f"st:{st}"))
        for o in outs:
            for f in o.obligation.facts:
                if f in AXIOMS:
                    used_axioms.add(f)
                    edges.add((f, sid))
                elif f in step_of and step_of[f] != sid:
                    edges.add((step_of[f], sid))
    for p in PROSE.values():
        if p.statement not in all_st:
            continue
        nodes.append(
            {
                "id": p.id,
                "kind": "step",
                "label": p.step,
                "status": "prose",
                "statement": p.statement,
            }
        )
        edges.add((p.id, f"st:{p.statement}"))
    for a in sorted(used_axioms):
        nodes.append(
            {
                "id": a,
                "kind": "axiom",
                "label": AXIOMS[a].name,
                "status": "axiom",
                "statement": None,
            }
        )
    return {"nodes": nodes, "edges": sorted(edges)}


def draw_blueprint(
    graph: dict[str, Any], stem: Path, formats: Sequence[str] = (".png", ".pdf")
) -> list[Path]:
    """Draw the graph (axioms left, steps in the middle grouped by statement, statements
    right; edges as thin lines) with matplotlib's object API; write one file per format."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    nodes = {n["id"]: n for n in graph["nodes"]}
    order = [n["id"] for n in graph["nodes"] if n["kind"] == "statement"]
    steps = [n for n in graph["nodes"] if n["kind"] == "step"]
    pos: dict[str, tuple[float, float]] = {}
    y = 0.0
    for sid in order:
        st = nodes[sid]["statement"]
        mine = [n for n in steps if n["statement"] == st]
        ys = []
        for n in mine:
            pos[n["id"]] = (1.0, -y)
            ys.append(-y)
            y += 1
        pos[sid] = (2.2, sum(ys) / len(ys) if ys else -y)
        if not ys:
            y += 1
        y += 0.6
    axioms = [n for n in graph["nodes"] if n["kind"] == "axiom"]
    for i, n in enumerate(axioms):
        pos[n["id"]] = (-0.2, -(i + 0.5) * y / max(len(axioms), 1))
    # type and height grow as the figure holds fewer steps (prove --focus draws one
    # statement's ancestors): 3.2 pt for the whole blueprint, up to 7 pt
    fs_step = min(7.0, max(3.2, 240 / max(len(steps), 1)))
    fs_st = fs_step + 1.5
    fig = Figure(figsize=(8.5, max(4.0, 0.05 * fs_step * y)))
    ax = fig.add_subplot(1, 1, 1)
    for a, b in graph["edges"]:
        if a in pos and b in pos:
            (x0, y0), (x1, y1) = pos[a], pos[b]
            if nodes[a]["kind"] == nodes[b]["kind"] == "statement":  # an arc on the right
                bulge = x0 + 0.25 + 0.012 * abs(y1 - y0)
                mid = (y0 + y1) / 2
                ax.plot([x0, bulge], [y0, mid], color="#555555", lw=0.6, zorder=1)
                arrow = {"arrowstyle": "->", "lw": 0.6, "color": "#555555"}
                ax.annotate("", xy=(x1 + 0.03, y1), xytext=(bulge, mid), arrowprops=arrow)
            else:
                ax.plot([x0, x1], [y0, y1], color="#bbbbbb", lw=0.3, zorder=1)
    for nid, (px, py) in pos.items():
        n = nodes[nid]
        size = {"statement": 60, "step": 14, "axiom": 22}[n["kind"]]
        marker = {"statement": "s", "step": "o", "axiom": "D"}[n["kind"]]
        ax.scatter(
            [px],
            [py],
            s=size,
            c=COLOURS[n["status"]],
            marker=marker,
            zorder=2,
            edgecolors="black",
            linewidths=0.3,
        )
        label = textwrap.shorten(n["label"], 58 if n["kind"] == "step" else 30, placeholder="...")
        ha = "right" if n["kind"] == "axiom" else "left"
        dx = -0.04 if n["kind"] == "axiom" else 0.04
        ax.text(
            px + dx,
            py,
            label,
            fontsize=fs_step if n["kind"] == "step" else fs_st,
            ha=ha,
            va="center",
            zorder=3,
            bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"}
            if n["kind"] == "statement"
            else None,
        )
    ax.set_xlim(-1.3, 3.4)
    ax.axis("off")
    handles = [Line2D([], [], marker="o", ls="", color=c, label=k) for k, c in COLOURS.items()]
    ax.legend(handles=handles, loc="upper right", fontsize=5, frameon=False)
    ax.set_title(
        "Blueprint: axioms (left), derivation steps (middle), statements (right; a square is"
        " proved only when every step and every statement it uses is; otherwise the weakest"
        " evidence on its path; arrows: statement uses statement)",
        fontsize=6,
    )
    written = []
    for fmt in formats:
        path = stem.with_suffix(fmt)
        fig.savefig(path, dpi=300, bbox_inches="tight", **save_options(path))
        written.append(path)
    return written


_RUN: dict[str, Outcome] = {}  # obligation id -> its outcome, discharged once per process
STANDALONE = ("Trivial bounds",)  # the trivial bounds every "vacuous" verdict compares with


def has_obligations(statements: Sequence[str] = ()) -> bool:
    """Whether a report of ``statements`` (all when empty) discharges any obligation, i.e.
    :func:`derivation_scope` is not empty; without loading the obligations (~1.4 s)."""
    return not statements or any(st in STATEMENTS for st in statements)


def derivation_scope(statements: Sequence[str] = ()) -> list[str]:
    """The statements (of STATEMENTS, in that order) whose obligations a report of
    ``statements`` discharges: every one when ``statements`` is empty; else the selected ones,
    transitively every statement their derivations use (a fact taken from another statement's
    obligation: :func:`~verify.proofs.status.statement_uses`), and STANDALONE when any is
    left. A report of statements
    without obligations (a plug-in's) discharges none."""
    if not statements:
        return list(STATEMENTS)
    if not has_obligations(statements):
        return []
    load()
    uses = statement_uses()
    todo, seen = list(statements), set()
    while todo:
        st = todo.pop()
        if st not in seen:
            seen.add(st)
            todo.extend(uses.get(st, ()))
    scope = [st for st in STATEMENTS if st in seen]
    return [st for st in STATEMENTS if st in scope or st in STANDALONE] if scope else []


def _outcomes(scope: Sequence[str]) -> list[Outcome]:
    """The outcomes of the obligations of the statements ``scope`` (in load order), each
    discharged once per process (the report may be written several times)."""
    obligations = [ob for ob in load() if ob.statement in scope]
    for o in run([ob for ob in obligations if ob.id not in _RUN]):
        _RUN[o.obligation.id] = o
    return [_RUN[ob.id] for ob in obligations]


def _entry(st: str, outs: Sequence[Outcome]) -> dict[str, Any]:
    steps: dict[str, list[Outcome]] = {}
    for o in outs:
        steps.setdefault(o.obligation.step, []).append(o)
    axioms = sorted({f for o in outs for f in o.obligation.facts if f in AXIOMS})
    classes: dict[str, int] = {}
    for o in outs:
        c = obligation_class(o.obligation)
        classes[c] = classes.get(c, 0) + 1
    return {
        "statement": st,
        "classes": classes,
        "n_steps": len(steps),
        "n_obligations": len(outs),
        "n_machine_checked": sum(o.ok and o.obligation.evidence == "symbolic" for o in outs),
        "n_numerical": sum(o.ok and o.obligation.evidence == "points" for o in outs),
        "n_failed": sum(not o.ok for o in outs),
        "axioms": [
            {"id": a, "name": AXIOMS[a].name, "reference": AXIOMS[a].reference} for a in axioms
        ],
        "prose": [
            {"id": p.id, "step": p.step, "reason": p.reason}
            for p in PROSE.values()
            if p.statement == st
        ],
        "steps": [
            {"step": name, "status": _step_status(os), "obligations": [o.as_dict() for o in os]}
            for name, os in steps.items()
        ],
    }


def not_discharged(reason: str) -> dict[str, Any]:
    """The report's derivation data when no obligation is discharged, and why (``reason``,
    also the blueprint figure's error): none of the report's statements has obligations, or
    the run was interrupted."""
    figure = {"name": "blueprint", "file": None, "files": [], "error": reason}
    return {
        "ok": True,
        "n_obligations": 0,
        "seconds": 0.0,
        "task_s": 0.0,
        "statements": {},
        "figure": figure,
    }


def report_derivations(
    fig_dir: Path, statements: Sequence[str] = (), *, pdf: bool = False
) -> dict[str, Any]:
    """The report's derivation data for the statements ``statements`` (all when empty) and
    those their derivations use (:func:`derivation_scope`): per statement with obligations
    ("Small-ball bound" goes with Lemma 4.2) its steps, obligations, axioms and prose, and the
    blueprint figure drawn into ``fig_dir`` (``blueprint.png``, with ``pdf`` also ``.pdf``)."""
    started = time.perf_counter()
    scope = derivation_scope(statements)
    if not scope:  # no statement of the report has derivation obligations: nothing to do
        return not_discharged(NO_OBLIGATIONS)
    outs = _outcomes(scope)
    by_st: dict[str, list[Outcome]] = {}
    for o in outs:
        by_st.setdefault(o.obligation.statement, []).append(o)
    entries = {st: _entry(st, by_st.get(st, [])) for st in scope}
    earned = earned_statuses(outs, scope)
    for st, e in entries.items():
        e["earned"] = earned[st]
        e["trust"] = trust_base(st)
    figure: dict[str, Any] = {"name": "blueprint", "file": None, "files": [], "error": None}
    try:
        fig_dir.mkdir(parents=True, exist_ok=True)
        graph = blueprint_graph(outs, statements, scope=scope)
        formats = (".png", ".pdf") if pdf else (".png",)
        paths = draw_blueprint(graph, fig_dir / BLUEPRINT, formats)
        figure["file"] = f"{fig_dir.name}/{paths[0].name}"
        figure["files"] = [f"{fig_dir.name}/{p.name}" for p in paths]
    except Exception as exc:  # recorded, never costs the report
        figure["error"] = f"{type(exc).__name__}: {exc}"
    return {
        "ok": all(o.ok for o in outs),
        "n_obligations": len(outs),
        "seconds": round(sum(o.seconds for o in outs), 2),
        "task_s": round(time.perf_counter() - started, 2),  # with loading and the figure
        "statements": entries,
        "earned": earned,
        "figure": figure,
    }


def statement_entries(derivations: dict[str, Any], statement: str) -> list[dict[str, Any]]:
    """The derivation entries shown under a registered statement (Lemma 4.2 also shows the
    small-ball constant's)."""
    names = [statement] + (["Small-ball bound"] if statement == "Lemma 4.2" else [])
    return [derivations["statements"][n] for n in names if n in derivations.get("statements", {})]


def blueprint_markdown(derivations: dict[str, Any] | None) -> list[str]:
    """The blueprint section of report.md."""
    if not derivations:
        return []
    out = ["## Blueprint: derivation steps as proof obligations", ""]
    if not derivations["n_obligations"]:
        why = derivations["figure"].get("error") or NO_OBLIGATIONS
        return [*out, f"(no obligation discharged: {why}; `python -m verify prove` checks them"
                " all)", ""]  # fmt: skip
    fig = derivations["figure"]
    if fig.get("file"):
        out += [f"![blueprint]({fig['file']})", ""]
    else:
        out += [f"(the blueprint could not be drawn: {fig.get('error')})", ""]
    ok = "all proved, every weakened twin refuted" if derivations["ok"] else "**NOT all proved**"
    out += [
        f"{derivations['n_obligations']} obligations ({ok}; {derivations['seconds']} s;"
        " `python -m verify prove`, docs/proofs.md). Colours: the status each statement"
        " *earned*: green proved (every step over its whole domain, and every statement it"
        " uses), light green instance (a step at fixed sizes), olive box (a step on a compact"
        " box), orange sampled chain (the code compared with the composition at seeded"
        " points), grey prose, light grey not discharged (a partial report: some step on its"
        " path was not run), red failed; blue axiom.",
        "",
    ]
    earned = derivations.get("earned") or {}
    if earned:
        out += [
            "| statement | earned status | derivation alone | weakest on its path | uses |",
            "|---|---|---|---|---|",
        ]
        for st, e in earned.items():
            uses = ", ".join(e["uses"]) or "-"
            out.append(
                f"| {st} | {e['status']} | {e['derivation']} | {e['weakest'] or '-'} | {uses} |"
            )
        out.append("")
    return out


def derivation_markdown(entries: Sequence[dict[str, Any]]) -> list[str]:
    """A statement's "Derivation" subsection of report.md."""
    out: list[str] = []
    for e in entries:
        title = "### Derivation" + ("" if len(entries) == 1 else f" ({e['statement']})")
        out += [
            title,
            "",
            f"{e['n_steps']} steps, {e['n_obligations']} obligations: {e['n_machine_checked']}"
            f" machine-checked, {e['n_numerical']} checked at seeded points (the chain to the"
            f" code), {e['n_failed']} failed"
            + (
                " (by class: "
                + ", ".join(f"{k} {v}" for k, v in sorted(e["classes"].items()))
                + ")"
                if e.get("classes")
                else ""
            )
            + ".",
            "",
            *(
                [
                    f"Earned status: **{e['earned']['status']}** (derivation alone:"
                    f" {e['earned']['derivation']}; weakest on its path:"
                    f" {e['earned']['weakest'] or '-'}).",
                    "",
                ]
                if e.get("earned")
                else []
            ),
            *(
                [
                    "Trust base (this statement and the ones it uses): axioms "
                    + (", ".join(f"`{a}`" for a in e["trust"]["axioms"]) or "none")
                    + " (attacked, not proved); solvers "
                    + ", ".join(e["trust"]["solvers"])
                    + f"; {len(e['trust']['sampled'])} chains at sampled points,"
                    f" {len(e['trust']['instances'])} fixed-size instances,"
                    f" {len(e['trust']['boxes'])} compact boxes,"
                    f" {len(e['trust']['prose'])} prose steps.",
                    "",
                ]
                if e.get("trust")
                else []
            ),
            "| step | obligation | method | status | twin |",
            "|---|---|---|---|---|",
        ]
        for s in e["steps"]:
            for o in s["obligations"]:
                step = s["step"].replace("|", "\\|")
                out.append(
                    f"| {step} | `{o['id']}` | {o['method']} | {o['status']} | {o['twin']} |"
                )
        out.append("")
        if e["axioms"]:
            out.append(
                "Axioms: "
                + "; ".join(f"`{a['id']}` ({a['name']}; {a['reference']})" for a in e["axioms"])
                + "."
            )
            out.append("")
        for p in e["prose"]:
            out.append(f"Prose only: {p['step']} ({p['reason']}).")
            out.append("")
    return out
