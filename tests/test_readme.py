"""README.md stays current: its set-up commands, its Python tour and its statement table."""

from __future__ import annotations

import re
from pathlib import Path

from verify.report.readme import BEGIN, END, statements_table, update_readme

README = Path(__file__).resolve().parents[1] / "README.md"

SETUP = (
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]"'
    " && python -m verify report --quick\npytest\n"
)


def test_setup_commands_are_the_two_documented_ones() -> None:
    assert "```bash\n" + SETUP + "```" in README.read_text()


def test_python_tour_runs(capsys) -> None:
    (block,) = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[") and "'uncertain'" in out[1]


def _doc() -> dict:
    row = {"label": "x", "measured": 2.0, "bound": 1.0, "relation": "<=", "ratio": 2.0}
    return {
        "run": {"budget": "quick", "seed": 0},
        "generated_at": "2026-11-30T00:00:00Z",
        "statements": [
            {
                "id": "Lemma 3.2",
                "slug": "lemma_3_2",
                "title": "A | B",
                "confidence": "[note]",
                "status": "violated",
                "worst": {**row, "check": "c"},
            },
            {
                "id": "Conj 5.5",
                "slug": "conj_5_5",
                "title": "t",
                "confidence": "[note]",
                "status": "unchecked",
                "worst": None,
            },
        ],
    }


def test_update_readme_table(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{BEGIN}\nold\n{END}\noutro\n")
    assert update_readme(readme, _doc(), "docs/reports/example/report.md")
    text = readme.read_text()
    assert text.startswith("intro\n" + BEGIN) and text.endswith(END + "\noutro\n")
    assert "\nold\n" not in text
    assert "| [Lemma 3.2](docs/reports/example/report.md#lemma_3_2) | A \\| B | [note] |" in text
    assert "violated | x: 2 <= 1 |" in text and "| unchecked |  |" in text
    assert statements_table(_doc(), "r.md") in text.replace(
        "docs/reports/example/report.md", "r.md"
    )
    no_markers = tmp_path / "OTHER.md"
    no_markers.write_text("nothing here\n")
    assert not update_readme(no_markers, _doc(), "r.md")
    assert no_markers.read_text() == "nothing here\n"
    assert BEGIN in README.read_text() and END in README.read_text()


def test_readme_table_matches_the_committed_example_report() -> None:
    """The README shows the statuses of docs/reports/example (both written by
    `python -m verify report --quick --out docs/reports/example`)."""
    import json

    example = README.parent / "docs" / "reports" / "example" / "report.json"
    doc = json.loads(example.read_text())
    text = README.read_text()
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()
    assert block == statements_table(doc, "docs/reports/example/report.md")
