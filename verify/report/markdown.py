"""Render report.md from the report document (the content of report.json)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# rows shown per check in report.md (all of them are in report.json; the worst is always shown)
MAX_ROWS = 25
# characters of a check's parameters shown in report.md (report.json has them all)
MAX_PARAMS_CHARS = 400

_BADGE = {
    "holds": "holds",
    "vacuous": "vacuous at the tested sizes",
    "definitional": "definitional (true of every model by construction)",
    "violated": "**VIOLATED**",
    "undecided": "undecided",
    "error": "**ERROR**",
    "known_violation": "violated: **documented finding** (reproduced)",
    "not_reproduced": "**documented finding NOT reproduced**",
    "skipped": "not run at this budget",
    "unchecked": "no check registered",
    "interrupted": "**interrupted** before its checks ran",
}


def fmt(x: Any) -> str:
    """A number for a table: 6 significant digits; the strings inf/-inf/nan as they are."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def cell(text: Any) -> str:
    """Text safe inside a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _row_line(r: Mapping[str, Any], check: str | None = None) -> str:
    ci = f"[{fmt(r['ci'][0])}, {fmt(r['ci'][1])}]" if r.get("ci") else ""
    ok = "yes" if r.get("ok") else "**no**"
    lead = f"{cell(check)} | " if check is not None else ""
    relation = r.get("shown_relation", r["relation"])
    verdict = r.get("verdict", "")
    ok = {"fails": "**no**", "vacuous": "vacuous", "exact": "exact"}.get(verdict, ok)
    ok = "definitional" if verdict == "definitional" else ok
    return (
        f"| {lead}{cell(r['label'])} | {fmt(r['measured'])} | {cell(relation)} |"
        f" {fmt(r['bound'])} | {fmt(r['ratio'])} | {ci} | {ok} |"
    )


def worst_text(w: Mapping[str, Any] | None, fallback: str = "") -> str:
    """The worst informative row as "label: measured REL bound" (the relation true of the
    numbers), else ``fallback`` (what the rows are: "all exact (...)", "all vacuous (...)")."""
    if not w:
        return cell(fallback)
    rel = w.get("shown_relation", w["relation"])
    return f"{cell(w['label'])}: {fmt(w['measured'])} {rel} {fmt(w['bound'])}"


def counts_text(c: Mapping[str, int] | None) -> str:
    """Row verdict counts as "h / v / e / f" (holds, vacuous, exact, fails), then
    "(+ n definitional)" when some rows are true by construction (never counted as holds)."""
    if not c:
        return ""
    text = f"{c['holds']} / {c['vacuous']} / {c['exact']} / {c['fails']}"
    return text + (f" (+ {c['definitional']} definitional)" if c.get("definitional") else "")


def repo_link(path: str, repo_prefix: str | None) -> str:
    """``path`` (relative to the repository, optionally with a #fragment) as a markdown link
    from the report's directory when the file exists, else as code."""
    from verify.report.runner import REPO_ROOT

    file, sep, frag = path.partition("#")
    target = Path(file)
    if target.is_absolute():  # shown relative to the repository when inside it
        try:
            target = target.relative_to(REPO_ROOT)
        except ValueError:
            return f"`{path}`"
    if repo_prefix is not None and file and (REPO_ROOT / target).is_file():
        rel = target.as_posix() + sep + frag
        return f"[{rel}]({repo_prefix.rstrip('/')}/{rel})"
    return f"`{path}`"


def _kernels_text(k: Mapping[str, Any] | None) -> str:
    """The compilation step, which no check's time includes."""
    if not k:
        return ""
    what = (
        f"{k['compiled']} compiled, {k['from_cache']} loaded from the Numba cache"
        if k.get("compiled")
        else f"all {k.get('from_cache', 0)} loaded from the Numba cache"
    )
    return (
        f"; {fmt(k['seconds'])} s of it before the checks to compile the kernels ({what}):"
        " compilation happens on the first run only and is in no check's time"
    )


def _phases_text(phases: Mapping[str, Any] | None) -> str:
    """Every phase's share of the total run time."""
    if not phases:
        return ""
    names = {
        "kernels_s": "kernels",
        "statements_s": "loading the statements",
        "checks_s": "checks",
        "overview_s": "overview",
        "figures_s": "figures",
    }
    parts = [f"{names[k]} {fmt(v)} s" for k, v in phases.items() if k in names]
    return f" ({', '.join(parts)}, the rest writing the files)" if parts else ""


def render_markdown(doc: Mapping[str, Any], repo_prefix: str | None = None) -> str:
    """The whole report.md; ``repo_prefix`` is the repository root relative to the report's
    directory (links to derivations and counterexample files use it)."""
    env, run, summ = doc["environment"], doc["run"], doc["summary"]
    out: list[str] = []
    add = out.append
    add("# Lemma report")
    add("")
    only = run.get("only")
    add(
        f"Generated {doc['generated_at']} by `{doc['command'] or 'python -m verify report'}`"
        f" (budget **{run['budget']}**, slow checks {'run' if run['include_slow'] else 'not run'},"
        f" seed {run['seed']}{', only ' + ', '.join(only) if only else ''})"
        f" with verify {env.get('verify')} at commit `{env.get('git_commit')}`."
        f" Total run time {fmt(summ['runtime_s'])} s{_phases_text(summ.get('phases'))}"
        f"{_kernels_text(doc.get('kernels'))}."
    )
    add("")
    counts = ", ".join(f"{n} {k}" for k, n in summ["counts"].items() if n)
    verdict = (
        "no statement run is violated (each holds, is vacuous, is undecided or is a documented"
        " finding)"
        if summ["exit_code"] == 0
        else "some statement is violated, raised an error or was interrupted"
    )
    add(f"**Result: {verdict}** ({counts or 'no statements'}; exit code {summ['exit_code']}).")
    if summ.get("n_checks_interrupted"):
        add("")
        add(
            f"**The run was interrupted**: {summ['n_checks_interrupted']} check(s) were not"
            " reached; this report holds the checks that finished."
        )
    elif summ.get("interrupted_in"):
        add("")
        add(
            f"**The run was interrupted** while {summ['interrupted_in']} were being made: every"
            " check finished, but the figures not drawn are listed as such (their data is in"
            " report.json; `verify.report.figures.redraw_report_figures` draws them)."
        )
    add("")
    add(
        "> The statements below are *reconstructions* of the papers' statements (their full texts"
        " were not at hand), keeping the papers' numbering; each carries its confidence tag"
        " ([paper], [note] or [inferred]). Bounds are the toolkit's explicit versions. A"
        " violation is a violation of the reconstructed explicit bound, saved as a"
        " counterexample for a human to read."
    )
    add("")
    add("## Summary")
    add("")
    add(
        "| statement | title | status | checks run | rows h / v / e / f |"
        " worst informative case (measured vs bound) | ratio | time (s) |"
    )
    add("|---|---|---|---|---|---|---|---|")
    for st in doc["statements"]:
        w = st.get("worst")
        nrun = len(st["checks"])
        nr = f"{nrun}" + (f" (+{len(st['not_run'])} not run)" if st["not_run"] else "")
        add(
            f"| [{cell(st['id'])}](#{st['slug']}) | {cell(st['title'])} |"
            f" {_BADGE.get(st['status'], st['status'])} | {nr} |"
            f" {counts_text(st.get('row_counts'))} | {worst_text(w, st.get('worst_text', ''))} |"
            f" {fmt(w['ratio']) if w else ''} | {fmt(st['runtime_s'])} |"
        )
    add("")
    rc = summ.get("row_counts")
    if rc:
        add(
            f"Rows: {rc['holds']} hold with content, {rc['vacuous']} are vacuous (the bound is no"
            f" better than the trivial one at the tested size), {rc['exact']} are exact"
            f" identities, {rc.get('definitional', 0)} are definitional (true of every model by"
            f" construction: they test the implementation, never counted as holding),"
            f" {rc['fails']} lie outside their bound at the tested sizes (a"
            " violation only where the check's policy makes it one: a strict bound, or a"
            " decisive statistical row; for an asymptotic statement it is evidence, and the"
            " status is undecided)."
        )
        add("")
    add(
        "Ratio is measured / bound; for a `<=` bound a ratio <= 1 means it holds, for a `>=`"
        " bound a ratio >= 1 does. The worst case is the informative row (neither vacuous nor an"
        " identity) closest to, or furthest past, its bound."
    )
    add("")
    add("## Environment")
    add("")
    add("| | version |")
    add("|---|---|")
    add(f"| python | {env.get('python')} ({env.get('implementation')}) |")
    for lib, ver in env.get("libraries", {}).items():
        add(f"| {lib} | {ver or 'not installed'} |")
    add(f"| platform | {cell(env.get('platform'))}, {env.get('cpu_count')} CPUs |")
    add("")
    over = doc.get("overview") or {}
    if over.get("figures") or over.get("notes"):
        add("## Overview")
        add("")
        for f in over.get("figures", []):
            if f.get("file"):
                add(f"![{cell(f['title'])}]({f['file']})")
            else:
                add(f"(figure {f['name']} could not be drawn: {f.get('error')})")
            add("")
        for n in over.get("notes", []):
            add(f"- {n}")
        if over.get("notes"):
            add("")
    from verify.proofs.blueprint import blueprint_markdown, derivation_markdown  # issue 28

    out.extend(blueprint_markdown(doc.get("derivations")))
    for st in doc["statements"]:
        out.extend(_statement(st, repo_prefix))
        out.extend(derivation_markdown(st.get("derivation_steps") or []))
    return "\n".join(out) + "\n"


def _statement(st: Mapping[str, Any], repo_prefix: str | None = None) -> list[str]:
    out: list[str] = []
    add = out.append
    add(f'<a id="{st["slug"]}"></a>')
    add("")
    add(f"## {st['id']}: {st['title']}")
    add("")
    add(f"*Reconstructed statement* ({st['paper']}, confidence {st['confidence']}):")
    add("")
    add("> " + st["statement"].strip().replace("\n", "\n> "))
    add("")
    if st["hypotheses"]:
        add("**Hypotheses:**")
        add("")
        for h in st["hypotheses"]:
            add(f"- *{h['name']}*: {h['description']}")
        add("")
    if st["bound_formula"]:
        add(f"**Bound checked:** {st['bound_formula']}")
        add("")
    if st.get("derivation"):
        add(f"**Derivation:** {repo_link(st['derivation'], repo_prefix)}")
        add("")
    line = f"**Status:** {_BADGE.get(st['status'], st['status'])}"
    line += f" (run time {fmt(st['runtime_s'])} s)."
    if st.get("worst"):
        w = st["worst"]
        line += f" Worst case ({cell(w['check'])}): {worst_text(w)}, ratio {fmt(w['ratio'])}."
    elif st.get("worst_text"):
        line += f" No informative row: {cell(st['worst_text'])}."
    if st.get("row_counts"):
        line += f" Rows (holds / vacuous / exact / fails): {counts_text(st['row_counts'])}."
    add(line)
    add("")
    if st["not_run"]:
        add(
            "Checks not run (slow at this budget, or an optional package missing): "
            + ", ".join(st["not_run"])
            + "."
        )
        add("")
    if st.get("interrupted"):
        add("Checks not reached (the run was interrupted): " + ", ".join(st["interrupted"]) + ".")
        add("")
    for wmsg in st["warnings"]:
        add(f"- warning: {wmsg}")
    if st["warnings"]:
        add("")
    for c in st["checks"]:
        out.extend(_check(c, repo_prefix))
    return out


def _check(c: Mapping[str, Any], repo_prefix: str | None = None) -> list[str]:
    out: list[str] = []
    add = out.append
    add(f"### Check: {c['name']} — {_BADGE.get(c['status'], c['status'])}")
    add("")
    if c["error"]:
        e = c["error"]
        add(f"The check raised {e['type']}: {cell(e['message'])}. Counted as a failure.")
        add("")
        add("```text")
        add(e["traceback"].rstrip())
        add("```")
        add("")
        return out
    line = f"Arithmetic: {c['arithmetic']}. Seed: {c['seed']}. Run time: {fmt(c['runtime_s'])} s."
    if c["parameters"]:
        params = json.dumps(c["parameters"], sort_keys=True)
        if len(params) > MAX_PARAMS_CHARS:
            params = params[:MAX_PARAMS_CHARS] + " ...` (in full in report.json)"
        else:
            params += "`"
        line += f" Parameters: `{params}."
    add(line)
    add("")
    rows = c["rows"]
    if rows:
        shown = rows[:MAX_ROWS]
        w = c.get("worst")
        if w and not any(r["label"] == w["label"] for r in shown):
            shown = [*shown, w]
        add("| quantity | measured | rel. | bound | ratio | CI of measured | within bound |")
        add("|---|---|---|---|---|---|---|")
        out.extend(_row_line(r) for r in shown)
        add("")
        if len(rows) > len(shown) or len(shown) > MAX_ROWS:
            add(f"({len(rows)} rows in all; the rest are in report.json.)")
            add("")
        if w:
            add(f"Worst case: {worst_text(w)} (ratio {fmt(w['ratio'])}).")
            add("")
        elif c.get("worst_text"):
            add(f"No informative row: {cell(c['worst_text'])}.")
            add("")
    for n in c["notes"]:
        add(f"- {n}")
    if c["notes"]:
        add("")
    if c["counterexample"]:
        add(f"Counterexample: {repo_link(c['counterexample'], repo_prefix)}.")
        add("")
    if c.get("expected_violation"):
        add(
            "Documented finding (expected to be violated, like a strict xfail):"
            f" {repo_link(c['expected_violation'], repo_prefix)}."
        )
        add("")
    for f in c["figures"]:
        if f.get("file"):
            add(f"![{cell(f['title'])}]({f['file']})")
        else:
            add(f"(figure {f['name']} could not be drawn: {f.get('error')})")
        add("")
    return out
