"""The radius mutation suite (issue 25): every mutant of ``tests/_radius_mutants.py`` removes
or halves one term of one radius rule, and a soundness test of ``tests/test_radius_rules.py``,
``tests/test_radius_constructions.py``, ``tests/test_radius_exhaustive.py`` or
``tests/test_radius_dd_glue.py`` must fail on it
(kernel radius below the independent implementation's, an arb containment, or an
exact-arithmetic bound) -- never a count of which tier settled what. A survivor is a missing
test.

Each mutant runs in its own process with ``NUMBA_DISABLE_JIT=1`` (nothing compiled: the four
files' tiny models take ~10 s in pure Python; the one-layer exhaustive kernel runs there with
Python bodies of its register intrinsics, ``_radius_mutants.install_python_intrinsics``),
stopping at the first failure, which must be an AssertionError during a test's call (a mutant
that breaks the code instead is reported as such, not counted as killed). The unmutated run
without the JIT must pass, so a kill is the mutant's. The processes run two at a time. Marker
``radius_mutation``; left out of the default ``pytest`` run (pyproject's addopts) to keep it
fast, and run by ``.ci/run`` as its own step, ``pytest -m radius_mutation`` (46 mutants: 169 s
wall at load 4.4 on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import _radius_mutants as mutants
import pytest

pytestmark = pytest.mark.radius_mutation

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# the soundness tests, in this order: containment on materialising constructions first
FILES = (
    "test_radius_constructions.py",
    "test_radius_rules.py",
    "test_radius_dd_glue.py",
    "test_radius_exhaustive.py",
    "test_radius_ln_forms.py",
    "test_radius_threshold.py",
)
# a mutant of these modules runs the file written for them first (it is killed there in a
# second instead of after the ~5 s of the per-string files); the order changes no verdict
TARGETED = {
    "test_radius_exhaustive.py": ("verify.model.exhaustive", mutants.KERNELS + "exhaustive"),
    "test_radius_dd_glue.py": (
        "verify.model.double_double", mutants.KERNELS + "per_string_dd", mutants.KERNELS + "dd_l2",
    ),
    "test_radius_ln_forms.py": (
        "verify.model.arith", "verify.model.reference", "verify.model.ln_forms",
    ),
    "test_radius_threshold.py": ("verify.model.labels",),
}  # fmt: skip
WORKERS = min(2, os.cpu_count() or 1)  # mutant processes at a time


def file_order(mutant: str | None) -> list[str]:
    """FILES, with the file targeting the mutant's modules first."""
    modules = {m for m, _, _ in mutants.BY_NAME[mutant].edits} if mutant else set()
    first = [f for f, mods in TARGETED.items() if modules & set(mods)]
    return first + [f for f in FILES if f not in first]


def run_rules(mutant: str | None, tmp_path: Path) -> tuple[int, list[dict], str]:
    """Run the soundness tests (FILES) without the JIT (with ``mutant`` applied): (exit code, the
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
        sys.executable, "-m", "pytest", *(str(TESTS / f) for f in file_order(mutant)), "-x", "-q",
        "-p", "_radius_mutants", "-p", "no:cacheprovider", "-o", "addopts=",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
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


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, tuple]:
    """run_rules for the unmutated code (key None) and every mutant, WORKERS at a time."""
    names: list[str | None] = [None, *(m.name for m in mutants.MUTANTS)]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {
            n: pool.submit(run_rules, n, tmp_path_factory.mktemp(n or "unmutated")) for n in names
        }
        return {n: f.result() for n, f in futures.items()}


def test_unmutated_rules_pass_without_jit(outcomes: dict) -> None:
    code, failures, out = outcomes[None]
    assert code == 0 and not failures, out


@pytest.mark.parametrize("name", [m.name for m in mutants.MUTANTS])
def test_mutant_is_killed_by_a_soundness_test(name: str, outcomes: dict) -> None:
    code, failures, out = outcomes[name]
    assert code == 1 and failures, f"mutant {name} survived:\n{out}"
    first = failures[0]
    print(f"{name}: killed by {first['test']}: {first['message'][:120]}")
    assert first["when"] == "call", first  # not an error in setup or collection
    assert first["message"].startswith(("AssertionError", "assert ")), first
