"""Issue 43, items 7 and 8: tracebacks and silent results of the command line that become one
line with exit code 2 (the model files' cases are in tests/test_model_files.py): Numba's
environment variables, `gallery --from` a file that is not a report, `prove --only ""` and
`--coq-dir` without `--coq`."""

from __future__ import annotations

import json

import pytest
from _cli import assert_one_line, run_cli


@pytest.mark.parametrize(
    ("variable", "value"),
    [("NUMBA_NUM_THREADS", "0"), ("NUMBA_NUM_THREADS", "two"), ("NUMBA_DISABLE_JIT", "1")],
)
def test_numba_variables_the_toolkit_cannot_run_with(variable, value, monkeypatch, capsys):
    """NUMBA_NUM_THREADS=0 was Numba's traceback at import; NUMBA_DISABLE_JIT=1 a
    NotImplementedError from `ln_block` (an intrinsic, no Python body) once a model ran."""
    monkeypatch.setenv(variable, value)
    code, err, out = run_cli(["profile", "--random", "-N", "3"], capsys)
    assert code == 2 and not out
    assert_one_line(err, variable, repr(value))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"schema": "verify-report", "statements": [', "not JSON"),
        ("[1, 2]", "a JSON list"),
        ('{"schema": "something-else", "statements": []}', "schema"),
        (b"\xff\xfe{}", "not JSON"),
    ],
)
def test_gallery_from_a_file_that_is_not_a_report(tmp_path, text, needle, capsys) -> None:
    """A truncated or non-object JSON was a traceback; a report of an unknown schema wrote a
    near-empty gallery with exit 0."""
    src = tmp_path / "report.json"
    if isinstance(text, bytes):
        src.write_bytes(text)
    else:
        src.write_text(text)
    docs = tmp_path / "docs"
    docs.mkdir()
    code, err, _ = run_cli(["gallery", "--from", str(src), "--docs", str(docs)], capsys)
    assert code == 2
    assert_one_line(err, "--from", needle)
    assert not (docs / "figures.md").exists()


def test_gallery_accepts_the_committed_report() -> None:
    """The control: the example report reads as a report."""
    from pathlib import Path

    from verify.report.gallery import report_figures

    example = Path(__file__).resolve().parents[1] / "docs" / "reports" / "example" / "report.json"
    assert json.loads(example.read_text())["schema"] == "verify-report"
    assert report_figures(example)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["prove", "--only", ""], "--only"),
        (["prove", "--only", "lemma_2_9", "--only", " "], "--only"),
        (["prove", "--only", "lemma_2_9", "--coq-dir", "{tmp}"], "--coq-dir"),
    ],
)
def test_prove_refuses_what_it_would_ignore(tmp_path, argv, needle, capsys, monkeypatch):
    """`--only ""` matched every obligation (all ran); `--coq-dir` without `--coq` was ignored."""

    def boom(*a, **k):
        raise AssertionError("obligations ran")

    monkeypatch.setattr("verify.proofs.runner.run", boom)
    code, err, _ = run_cli([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert code == 2
    assert_one_line(err, needle)
