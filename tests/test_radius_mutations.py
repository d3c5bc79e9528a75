"""The radius mutation suite (issue 25): every mutant of ``tests/_radius_mutants.py`` removes
or halves one term of one radius rule, and a soundness test of ``tests/test_radius_rules.py``
must fail on it (kernel radius below the independent implementation's, an arb containment, or
an exact-arithmetic bound) -- never a count of which tier settled what. A survivor is a
missing test.

Each mutant runs in its own process with ``NUMBA_DISABLE_JIT=1`` (nothing compiled: the rules
test file's tiny models take ~3 s in pure Python), stopping at the first failure, which must be
an AssertionError during a test's call (a mutant that breaks the code instead is reported as
such, not counted as killed). The unmutated run without the JIT must pass, so a kill is the
mutant's. Marker ``radius_mutation``; part of the default ``pytest`` run (about a minute on 2
cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import _radius_mutants as mutants
import pytest

pytestmark = pytest.mark.radius_mutation

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def run_rules(mutant: str | None, tmp_path: Path) -> tuple[int, list[dict], str]:
    """Run test_radius_rules.py without the JIT (with ``mutant`` applied): (exit code, the
    failures reported, the output)."""
    report = tmp_path / "failures.jsonl"
    env = dict(os.environ)
    env["NUMBA_DISABLE_JIT"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), env.get("PYTHONPATH", "")])
    env["VERIFY_RADIUS_MUTANT_REPORT"] = str(report)
    env.pop("VERIFY_RADIUS_MUTANT", None)
    if mutant:
        env["VERIFY_RADIUS_MUTANT"] = mutant
    cmd = [
        sys.executable, "-m", "pytest", str(TESTS / "test_radius_rules.py"), "-x", "-q",
        "-p", "_radius_mutants", "-p", "no:cacheprovider", "-o", "addopts=",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    failures = []
    if report.exists():
        failures = [json.loads(line) for line in report.read_text().splitlines()]
    return proc.returncode, failures, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_every_mutant_edit_applies() -> None:
    """Each mutant's source occurs exactly once where it says (else the suite would test a
    mutant that no longer exists)."""
    for m in mutants.MUTANTS:
        for module, old, new in m.edits:
            assert mutants.edit_source(module, old, new) != "", m.name
    assert len(mutants.MUTANTS) >= 12


def test_unmutated_rules_pass_without_jit(tmp_path: Path) -> None:
    code, failures, out = run_rules(None, tmp_path)
    assert code == 0 and not failures, out


@pytest.mark.parametrize("name", [m.name for m in mutants.MUTANTS])
def test_mutant_is_killed_by_a_soundness_test(name: str, tmp_path: Path) -> None:
    code, failures, out = run_rules(name, tmp_path)
    assert code == 1 and failures, f"mutant {name} survived:\n{out}"
    first = failures[0]
    print(f"{name}: killed by {first['test']}: {first['message'][:120]}")
    assert first["when"] == "call", first  # not an error in setup or collection
    assert first["message"].startswith(("AssertionError", "assert ")), first
