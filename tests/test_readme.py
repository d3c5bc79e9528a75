"""README.md stays current: its set-up commands, its Python tour and its statement table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verify.report.readme import BEGIN, END, statements_table, update_readme

README = Path(__file__).resolve().parents[1] / "README.md"

SETUP = (
    'python3 -m venv .venv && .venv/bin/python -m pip install -e ".[test]"'
    " && .venv/bin/python -m verify report --quick\n.venv/bin/python -m pytest\n"
)


def test_setup_commands_are_the_two_documented_ones() -> None:
    assert "```bash\n" + SETUP + "```" in README.read_text()


def test_setup_commands_work_in_any_new_shell() -> None:
    """No command relies on an activated venv (a new shell would run another python/pytest):
    each runs the venv's own interpreter by its path. .ci/run runs the same test command."""
    for line in SETUP.splitlines():
        for cmd in (c.strip() for c in line.split("&&")):
            assert cmd.startswith((".venv/bin/python ", "python3 -m venv ")), cmd
    ci = (README.parent / ".ci" / "run").read_text()
    assert '"$venv/bin/python" -m pytest' in ci and "export CI=true" in ci and "trap" in ci


def _tour_commands() -> list[list[str]]:
    """Every `python -m verify ...` command of the README's bash blocks, as argv lists."""
    import shlex

    text = README.read_text()
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            for cmd in line.split("&&"):
                argv = shlex.split(cmd)
                while argv and argv[0] != "-m":
                    argv.pop(0)
                if argv[:2] == ["-m", "verify"]:
                    commands.append(argv[2:])
    return commands


def test_tour_commands_run_the_venvs_python() -> None:
    """A new shell has no bare `python` (nor an activated venv): every command of the README's
    bash blocks runs the venv's interpreter by its path, as the set-up line does."""
    text = README.read_text()
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            cmd = line.split("#", 1)[0].strip()
            if cmd:
                assert cmd.startswith((".venv/bin/python ", "python3 -m venv ")), cmd


def test_every_readme_command_parses() -> None:
    """The tour's commands use flags that exist (parsed, not run: the report takes minutes)."""
    from verify.cli import build_parser

    commands = _tour_commands()
    assert len(commands) >= 9
    parser = build_parser()
    for argv in commands:
        args = parser.parse_args(argv)
        assert callable(args.func), argv


def test_readme_names_the_console_script() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    scripts = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"verify-transformers": "verify.cli:run"}
    assert "`verify-transformers COMMAND`" in README.read_text()


def test_python_tour_runs(capsys) -> None:
    (block,) = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[") and "'uncertain'" in out[1]


def _doc() -> dict:
    row = {
        "label": "x",
        "measured": 2.0,
        "bound": 1.0,
        "relation": "<=",
        "shown_relation": ">",
        "ratio": 2.0,
    }
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
                "row_counts": {"holds": 1, "vacuous": 0, "exact": 0, "fails": 1},
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
    # a failing row is printed with the relation that is true of its numbers
    assert "violated | 1 / 0 / 0 / 1 | x: 2 > 1 |" in text and "| unchecked |  |" in text
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


def test_the_cpu_build_of_torch_is_documented() -> None:
    """Issue 43: the torch extra from the registry is the CUDA build (about 5.3 GB of venv); the
    README says how to get the CPU build (PyTorch's CPU wheel index, the extra's own pin) and
    what the venv then weighs."""
    import tomllib

    text = README.read_text()
    pin = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["torch"]
    assert pin == ["torch==2.13.0"]
    line = f"-m pip install {pin[0]} --index-url https://download.pytorch.org/whl/cpu"
    assert line in text
    assert text.index(line) < text.index('-m pip install -e ".[test,torch]"')
    assert re.search(r"venv is then about [\d.]+ GB", text)
