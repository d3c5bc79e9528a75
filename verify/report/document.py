"""Build the report document (the content of report.json) from check outcomes.

report.md is rendered from this same document, so the two never disagree. The schema is
documented in docs/report-schema.md and checked by :func:`validate_document`.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from verify.json_values import NONFINITE, jsonable
from verify.registry import VERDICTS, Row
from verify.report.runner import (
    CHECK_STATUSES,
    FAILING,
    STATUS_ORDER,
    CheckOutcome,
    StatementOutcome,
    exit_code,
    row_ok,
)

SCHEMA = "verify-report"
SCHEMA_VERSION = 2  # 2: rows carry verdict, shown_relation, tightness (trivial, vacuous);
# checks and statements carry row_counts and worst_text; worst is the worst *informative* row
INTERRUPTED_EXIT = 130  # the exit code of a run stopped by Ctrl-C (128 + SIGINT)


_N_IN_LABEL = re.compile(r"\bN\s*=\s*(\d+)")


def fmt_number(x: Any) -> str:
    """A measured value or bound for text (6 significant digits; inf / nan spelled out)."""
    if isinstance(x, str):
        return x
    return f"{x:.6g}"


def tightness(row: Row) -> float:
    """How close a row is to its bound, > 1 meaning outside it: measured/bound for '<=' and
    bound/measured for '>=' when both are >= 0 (a ratio of signed values means nothing, so
    then 0 inside the bound and inf outside, as for '==' rows)."""
    m, b = row.measured, row.bound
    if row.relation in ("<=", ">=") and m >= 0 and b >= 0:
        num, den = (m, b) if row.relation == "<=" else (b, m)
        if den == 0:
            return 0.0 if num == 0 else math.inf
        return num / den
    return 0.0 if row_ok(row) else math.inf


def worst_row(rows: Sequence[Row]) -> Row | None:
    """The row of largest :func:`tightness` (NaN rows first: they decide nothing). Ties go to
    the row at the largest N named in its label ("N=12"), then to the later row: at equal
    tightness the largest size is the informative one."""
    best, best_key = None, None
    for i, r in enumerate(rows):
        try:
            t = tightness(r)
        except Exception:
            t = math.nan
        if math.isnan(t):
            return r
        ns = [int(m) for m in _N_IN_LABEL.findall(r.label)]
        key = (t, max(ns) if ns else -1, i)
        if best_key is None or key > best_key:
            best, best_key = r, key
    return best


def row_json(row: Row) -> dict[str, Any]:
    """A row as in report.json: the comparison, the relation that is true of its numbers
    (``shown_relation``: ">" for a failing "<="), its verdict (holds / vacuous / exact /
    fails), its tightness and, where set, its trivial bound."""
    out = {
        "label": row.label,
        "measured": row.measured,
        "bound": row.bound,
        "relation": row.relation,
        "shown_relation": row.shown_relation,
        "ratio": row.ratio,
        "tightness": row.tightness,
        "ok": row.ok,
        "verdict": row.verdict,
        "decisive": row.decisive,
        "definitional": row.definitional,
        "ci": list(row.ci) if row.ci is not None else None,
        "extra": row.extra,
    }
    if row.trivial is not None:
        out["trivial"] = row.trivial
        out["vacuous"] = row.vacuous
    return jsonable(out)


def rows_text(rows: Sequence[Row]) -> str:
    """What rows with no informative comparison are: "all exact (n identities, N = a..b)",
    "all vacuous (n rows, ...)", or both counts; the N range from the rows' labels."""
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    ns = sorted({int(m) for r in rows for m in _N_IN_LABEL.findall(r.label)})
    span = f", N = {ns[0]}..{ns[-1]}" if len(ns) > 1 else (f", N = {ns[0]}" if ns else "")
    if not rows:
        return "no rows"
    if counts["exact"] and not counts["vacuous"]:
        return f"all exact ({counts['exact']} identities{span})"
    if counts["vacuous"] and not counts["exact"]:
        return f"all vacuous ({counts['vacuous']} rows{span})"
    if counts["definitional"] and not counts["exact"]:
        return f"all definitional ({counts['definitional']} rows true by construction{span})"
    return f"{counts['exact']} identities, {counts['vacuous']} vacuous rows{span}"


def informative_worst(rows: Sequence[Row]) -> Row | None:
    """The informative row (neither vacuous nor an identity) of largest tightness; a row
    whose tightness is NaN first (it decides nothing)."""
    return worst_row([r for r in rows if r.verdict in ("holds", "fails")])


def _worst_json(row: Row | None, rows: Sequence[Row]) -> tuple[dict[str, Any] | None, str]:
    if row is None:
        return None, rows_text(rows)
    text = f"{row.label}: {row.measured:.6g} {row.shown_relation} {row.bound:.6g}"
    return {**row_json(row), "tightness": jsonable(tightness(row))}, text


def check_json(outcome: CheckOutcome, figures: list[dict[str, Any]]) -> dict[str, Any]:
    """One check's entry of report.json (``figures`` as drawn by the writer)."""
    r = outcome.result
    rows = r.rows if r is not None else []
    worst, worst_txt = _worst_json(informative_worst(rows), rows)
    return {
        "name": outcome.check_name,
        "slow": outcome.slow,
        "status": outcome.status,
        "expected_violation": outcome.expected_violation,
        "runtime_s": outcome.runtime_s,
        "arithmetic": r.arithmetic if r else None,
        "seed": r.seed if r else None,
        "parameters": jsonable(r.parameters) if r else {},
        "notes": [str(n) for n in r.notes] if r else [],
        "counterexample": r.counterexample if r else None,
        "rows": [row_json(x) for x in rows],
        "row_counts": {v: sum(x.verdict == v for x in rows) for v in VERDICTS},
        "worst": worst,
        "worst_text": worst_txt if r is not None else "",
        "figures": figures,
        "error": (
            {
                "type": outcome.error.type,
                "message": outcome.error.message,
                "traceback": outcome.error.traceback,
            }
            if outcome.error
            else None
        ),
        "warnings": list(outcome.warnings),
    }


def statement_json(
    outcome: StatementOutcome, figures: Mapping[tuple[str, str], list[dict[str, Any]]]
) -> dict[str, Any]:
    """One statement's entry: its reconstructed text, hypotheses, bound, status and checks."""
    s = outcome.statement
    checks = [check_json(c, figures.get((s.id, c.check_name), [])) for c in outcome.checks]
    worst: dict[str, Any] | None = None
    best = -math.inf
    all_rows: list[Row] = []
    for c, cj in zip(outcome.checks, checks, strict=True):
        rows = c.result.rows if c.result is not None else []
        all_rows += rows
        w = informative_worst(rows)
        if w is None:
            continue
        t = tightness(w)
        t = math.inf if math.isnan(t) else t
        if worst is None or t > best:
            worst, best = {**cj["worst"], "check": c.check_name}, t
    worst_txt = (
        f"{worst['label']}: {fmt_number(worst['measured'])} {worst['shown_relation']}"
        f" {fmt_number(worst['bound'])}"
        if worst
        else rows_text(all_rows)
    )
    return {
        "id": s.id,
        "slug": s.slug,
        "title": s.title,
        "paper": s.paper,
        "confidence": s.confidence,
        "statement": s.statement,
        "hypotheses": [{"name": h.name, "description": h.description} for h in s.hypotheses],
        "bound_formula": s.bound_formula,
        "derivation": s.derivation,
        "status": outcome.status,
        "runtime_s": outcome.runtime_s,
        "worst": worst,
        "worst_text": worst_txt,
        "row_counts": {v: sum(c["row_counts"][v] for c in checks) for v in VERDICTS},
        "not_run": list(outcome.not_run),
        "interrupted": list(outcome.interrupted),
        "warnings": outcome.warnings
        + [
            f"[{c['name']}] figure {f['name']}: {f['error']}"
            for c in checks
            for f in c["figures"]
            if f.get("error")
        ],
        "checks": checks,
    }


def build_document(
    outcomes: Sequence[StatementOutcome],
    *,
    run: Mapping[str, Any],
    environment: Mapping[str, Any],
    figures: Mapping[tuple[str, str], list[dict[str, Any]]] | None = None,
    runtime_s: float | None = None,
    command: str = "",
    kernels: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole report.json document. ``runtime_s``: the checks and figures, without the
    kernels' compilation, which ``kernels`` (see verify.kernel_cache.warmup.KernelStats) times."""
    statements = [statement_json(o, figures or {}) for o in outcomes]
    counts = {k: 0 for k in STATUS_ORDER}
    for st in statements:
        counts[st["status"]] += 1
    n_run = sum(len(st["checks"]) for st in statements)
    row_counts = {v: sum(st["row_counts"][v] for st in statements) for v in VERDICTS}
    code = exit_code(outcomes)
    n_interrupted = sum(len(st["interrupted"]) for st in statements)
    if n_interrupted:
        code = INTERRUPTED_EXIT
    return jsonable(
        {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "generated_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command,
            "run": dict(run),
            "environment": dict(environment),
            "kernels": dict(kernels) if kernels is not None else None,
            "summary": {
                "exit_code": code,
                "all_hold": code == 0,
                "counts": counts,
                "row_counts": row_counts,
                "n_statements": len(statements),
                "n_checks_run": n_run,
                "n_checks_not_run": sum(len(st["not_run"]) for st in statements),
                "n_checks_interrupted": n_interrupted,
                "n_errors": sum(c["status"] == "error" for st in statements for c in st["checks"]),
                "runtime_s": runtime_s
                if runtime_s is not None
                else sum(st["runtime_s"] for st in statements),
            },
            "statements": statements,
        }
    )


# ---------------------------------------------------------------------------------------------
# validation of a loaded report.json (used by the tests and by anyone consuming the file)

_NUM = (int, float)


def _number(x: Any) -> bool:
    return (isinstance(x, _NUM) and not isinstance(x, bool)) or x in NONFINITE


def validate_document(doc: Any) -> list[str]:
    """Problems with ``doc`` as a report.json document (empty list: valid, schema version 2)."""
    errs: list[str] = []

    def need(obj: Any, key: str, types: Any, where: str) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            errs.append(f"{where}: missing {key!r}")
            return None
        if types is not None and not isinstance(obj[key], types):
            errs.append(f"{where}.{key}: expected {types}, got {type(obj[key]).__name__}")
        return obj[key]

    if not isinstance(doc, dict):
        return ["document: expected an object"]
    if doc.get("schema") != SCHEMA:
        errs.append(f"schema: expected {SCHEMA!r}")
    if doc.get("schema_version") != SCHEMA_VERSION:
        errs.append(f"schema_version: expected {SCHEMA_VERSION}")
    need(doc, "generated_at", str, "document")
    need(doc, "command", str, "document")
    run = need(doc, "run", dict, "document") or {}
    for k, t in (("budget", str), ("include_slow", bool), ("seed", int)):
        need(run, k, t, "run")
    env = need(doc, "environment", dict, "document") or {}
    need(env, "python", str, "environment")
    libs = need(env, "libraries", dict, "environment") or {}
    for lib in ("numpy", "numba", "mpmath", "python-flint", "sympy"):
        need(libs, lib, (str, type(None)), "environment.libraries")
    summ = need(doc, "summary", dict, "document") or {}
    code = need(summ, "exit_code", int, "summary")
    if code not in (0, 1, INTERRUPTED_EXIT, None):
        errs.append(f"summary.exit_code: expected 0, 1 or {INTERRUPTED_EXIT}")
    if code == INTERRUPTED_EXIT and not (
        summ.get("n_checks_interrupted") or summ.get("interrupted_in")
    ):
        errs.append(f"summary.exit_code: {INTERRUPTED_EXIT} without interrupted checks")
    need(summ, "counts", dict, "summary")
    stmts = need(doc, "statements", list, "document") or []
    failing = False
    for i, st in enumerate(stmts):
        w = f"statements[{i}]"
        for k, t in (
            ("id", str),
            ("title", str),
            ("statement", str),
            ("confidence", str),
            ("hypotheses", list),
            ("bound_formula", str),
            ("status", str),
            ("checks", list),
            ("not_run", list),
            ("warnings", list),
        ):
            need(st, k, t, w)
        if st.get("status") not in STATUS_ORDER:
            errs.append(f"{w}.status: expected one of {STATUS_ORDER}")
        failing |= st.get("status") in FAILING
        for j, c in enumerate(st.get("checks") or []):
            cw = f"{w}.checks[{j}]"
            for k, t in (("name", str), ("status", str), ("rows", list), ("figures", list)):
                need(c, k, t, cw)
            if c.get("status") not in CHECK_STATUSES:
                errs.append(f"{cw}.status: expected one of {CHECK_STATUSES}")
            if c.get("status") == "error" and not isinstance(c.get("error"), dict):
                errs.append(f"{cw}.error: expected the error of a failed check")
            for k, row in enumerate(c.get("rows") or []):
                for key in ("measured", "bound", "ratio"):
                    if not _number(row.get(key)):
                        errs.append(f"{cw}.rows[{k}].{key}: expected a number")
                if row.get("relation") not in ("<=", ">=", "=="):
                    errs.append(f"{cw}.rows[{k}].relation: expected <=, >= or ==")
                if row.get("verdict") not in VERDICTS:
                    errs.append(f"{cw}.rows[{k}].verdict: expected one of {VERDICTS}")
    if code is not None and code != INTERRUPTED_EXIT and code != int(failing):
        errs.append("summary.exit_code: does not match the statements' statuses")
    return errs
