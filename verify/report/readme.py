"""The README's table of statements, generated from a report document.

The table sits between the markers ``<!-- statements:begin -->`` and
``<!-- statements:end -->`` of README.md. ``python -m verify report --out docs/reports/example``
(the example report) refreshes it, so the README always shows the committed example's statuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verify.report.markdown import cell, counts_text, worst_text

BEGIN = "<!-- statements:begin -->"
END = "<!-- statements:end -->"
EXAMPLE_DIR = Path("docs") / "reports" / "example"


def statements_table(doc: Mapping[str, Any], report_link: str) -> str:
    """Markdown table: id (linked into the report), title, status, worst measured-vs-bound."""
    run = doc["run"]
    lines = [
        f"Statuses from the example report ([{report_link}]({report_link}), budget"
        f" `{run['budget']}`, seed {run['seed']}, generated {doc['generated_at']}):",
        "",
        "| statement | title | confidence | status | rows h / v / e / f |"
        " worst informative case (measured vs bound) |",
        "|---|---|---|---|---|---|",
    ]
    for st in doc["statements"]:
        lines.append(
            f"| [{cell(st['id'])}]({report_link}#{st['slug']}) | {cell(st['title'])} |"
            f" {cell(st['confidence'])} | {st['status']} | {counts_text(st.get('row_counts'))} |"
            f" {worst_text(st.get('worst'), st.get('worst_text', ''))} |"
        )
    lines += [
        "",
        "*rows h / v / e / f*: comparisons that hold with content / are vacuous (the bound no"
        " better than the trivial one at that size) / are exact identities / fail.",
        "",
        "*holds*: every measured value is within its computed bound; *vacuous*: the bound says"
        " nothing at the tested sizes; *violated*: a finding, its parameters saved under"
        " `theorems/counterexamples/` (see the report); *known_violation*: such a finding,"
        " documented and reproduced (like a strict xfail); *not_reproduced*: a documented"
        " finding that no longer reproduces; *undecided*: the arithmetic or the"
        " statistics could not settle it; *error*: the check raised; *skipped*: only slow"
        " checks (`--full`); *unchecked*: no check registered yet.",
    ]
    return "\n".join(lines)


def update_readme(readme: str | Path, doc: Mapping[str, Any], report_link: str) -> bool:
    """Replace the marked block of ``readme`` by :func:`statements_table`; False (file left
    alone) when the file or its markers are missing."""
    path = Path(readme)
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8")
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        return False
    new = text[: i + len(BEGIN)] + "\n" + statements_table(doc, report_link) + "\n" + text[j:]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return True
