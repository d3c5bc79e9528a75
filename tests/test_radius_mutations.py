"""The radius mutation suite (issues 25, 41): every mutant of ``tests/_radius_mutants.py``
removes or halves one term of one radius rule, and a soundness test of ``FILES`` must fail on it
(kernel radius below the independent implementation's, an arb containment, or an
exact-arithmetic bound) -- never a count of which tier settled what. A survivor is a missing
test.

Each mutant runs in its own process with ``NUMBA_DISABLE_JIT=1`` (nothing compiled: the
files' tiny models take seconds in pure Python; the one-layer exhaustive kernel runs there with
Python bodies of its register intrinsics, ``_radius_mutants.install_python_intrinsics``),
stopping at the first failure, which must be an AssertionError during a test's call (a mutant
that breaks the code instead is reported as such, not counted as killed). The unmutated run
without the JIT must pass, so a kill is the mutant's. The processes run two at a time. A kill
by a test marked ``tier_count`` (a count of which tier settled what) does not count: the mutant
is rerun with those tests deselected (``-m "not tier_count"``) and must still die
(``run_mutant``). Marker ``radius_mutation``; left out of the default ``pytest`` run
(pyproject's addopts) to keep it fast, and run by ``.ci/run`` as its own step, ``pytest -m
radius_mutation`` (46 mutants: 169 s wall at load 4.4 on 2 cores, one process per run). With
issue 44's 7 layer-norm-form mutants and issue 41's 50 of the double-double tier, the
exhaustive kernel at L >= 2 and the sub-cube bounds (``tests/_radius_mutants_tiers.py``,
killed by ``tests/test_radius_l2_dd.py``, ``tests/test_radius_l2_exhaustive.py`` and the
sub-cube's op-level containment test) and issue 40's 2: 105 mutants, 258 s wall at load 6-10
on 2 cores, 123 CPU-seconds (88 of them with a process per run: 948 s at load 8-9), the runs
forked from a server that did the imports once (``tests/_radius_forkserver.py``) and going
file by file until one fails. Issue 44's 12 mutants of the annotated layer norm in the kernels
(killed by ``tests/test_radius_ln_kernels.py``): 117 mutants, 432 s wall at load 5-8.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import _radius_mutants as mutants
import pytest

pytestmark = pytest.mark.radius_mutation

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# the soundness tests, in this order: containment on materialising constructions first (a
# file, or one test of a file by its node id)
SUBCUBE_OPS = "test_subcube.py::test_each_nonlinear_step_contains_the_exact_values"
FILES = (
    "test_radius_constructions.py",
    "test_radius_rules.py",
    "test_radius_dd_glue.py",
    "test_radius_exhaustive.py",
    "test_radius_ln_forms.py",
    "test_radius_l2_dd.py",
    "test_radius_l2_exhaustive.py",
    SUBCUBE_OPS,
    "test_radius_threshold.py",
    "test_radius_ln_kernels.py",
)
# a mutant of these modules runs the file written for them first (it is killed there in a
# second instead of after the ~5 s of the per-string files); the order changes no verdict
TARGETED = {
    "test_radius_l2_exhaustive.py": (
        "verify.model.stages.stage_l2",
        "verify.model.stages.position",
        "verify.model.stages.attention",
        "verify.model.exhaustive.exhaustive_kernel",
        "verify.model.stages.l2_bounds",
    ),
    "test_radius_l2_dd.py": (
        "verify.model.double_double.dd_kernel",
        "verify.model.double_double.dd_l2",
        "verify.model.stages.l2_bounds",
        "verify.model.double_double.dd_pass",
    ),
    SUBCUBE_OPS: ("verify.model.subcube.affine",),
    "test_radius_exhaustive.py": (
        "verify.model.exhaustive.exhaustive_pass",
        "verify.model.exhaustive.exhaustive_kernel",
    ),
    "test_radius_dd_glue.py": (
        "verify.model.double_double.dd_pass",
        "verify.model.double_double.dd_kernel",
        "verify.model.double_double.dd_l2",
    ),
    "test_radius_ln_forms.py": (
        "verify.model.arithmetic.contexts",
        "verify.model.generic.reference",
        "verify.model.spec.ln_forms",
    ),
    "test_radius_threshold.py": ("verify.model.spec.label_rule",),
    "test_radius_ln_kernels.py": (
        "verify.model.stages.layer_norm", "verify.model.double_double.dd_norm",
        "verify.model.stages.l2_bounds", "verify.model.subcube.affine_split",
    ),
}  # fmt: skip
WORKERS = min(2, os.cpu_count() or 1)  # mutant processes at a time


def file_order(mutant: str | None, files: tuple[str, ...] = FILES) -> list[str]:
    """files, with the files targeting the mutant's modules first (in TARGETED's order)."""
    modules = {m for m, _, _ in mutants.BY_NAME[mutant].edits} if mutant else set()
    first = [f for f, mods in TARGETED.items() if modules & set(mods) and f in files]
    return first + [f for f in files if f not in first]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["NUMBA_DISABLE_JIT"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), env.get("PYTHONPATH", "")])
    env.pop("VERIFY_RADIUS_MUTANT", None)
    env.pop("VERIFY_RADIUS_MUTANT_REPORT", None)
    return env


class _ForkServer:
    """One ``tests/_radius_forkserver.py`` process: the imports paid once, each run forked."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(TESTS / "_radius_forkserver.py")], cwd=ROOT, env=_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        ready = self.proc.stdout.readline()
        if not ready.strip():
            raise RuntimeError("the radius mutation fork server did not start")

    def run(self, env: dict[str, str], unset: list[str], args: list[str], out: Path) -> int:
        req = {"env": env, "unset": unset, "args": args, "cwd": str(ROOT), "out": str(out)}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return int(json.loads(self.proc.stdout.readline())["code"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


_SERVERS: queue.Queue | None = None
_SERVERS_LOCK = threading.Lock()


def _servers() -> queue.Queue | None:
    """WORKERS fork servers (None where os.fork is not available: a process per run)."""
    global _SERVERS
    if not hasattr(os, "fork"):
        return None
    with _SERVERS_LOCK:
        if _SERVERS is None:
            _SERVERS = queue.Queue()
            for _ in range(WORKERS):
                _SERVERS.put(_ForkServer())
            atexit.register(_close_servers)
        return _SERVERS


def _close_servers() -> None:
    global _SERVERS
    if _SERVERS is not None:
        while not _SERVERS.empty():
            _SERVERS.get().close()
        _SERVERS = None


def run_rules(
    mutant: str | None,
    tmp_path: Path,
    files: tuple[str, ...] = FILES,
    without_tier_counts: bool = False,
) -> tuple[int, list[dict], str]:
    """Run the soundness tests (``files``, paths relative to tests/) without the JIT (with
    ``mutant`` applied), with ``-m "not tier_count"`` when ``without_tier_counts``: (exit code,
    the failures reported, the output). Each run is a fresh pytest process: forked from a fork
    server that did the imports once (``tests/_radius_forkserver.py``), or started anew."""
    tag = "-no-counts" if without_tier_counts else ""
    report = tmp_path / f"failures{tag}.jsonl"
    extra = {"VERIFY_RADIUS_MUTANT_REPORT": str(report)}
    if mutant:
        extra["VERIFY_RADIUS_MUTANT"] = mutant
    marks = ["-m", "not tier_count"] if without_tier_counts else []
    code, out = 0, ""
    # one file at a time, in file_order, until one fails: a mutant killed by the file written
    # for its module collects (compiles, rewrites) that file only
    for k, name in enumerate(file_order(mutant, files)):
        args = [
            str(TESTS / name), "-x", "-q", "-p", "_radius_mutants", "-p", "no:cacheprovider",
            "-o", "addopts=", *marks,
        ]  # fmt: skip
        log = tmp_path / f"output{tag}-{k}.txt"
        code, text = _pytest_run(mutant, extra, args, log)
        out += f"==== {name}: exit {code}\n{text[-4000:]}"
        if code == 5:  # every test of the file deselected (-m "not tier_count"): none failed
            code = 0
        if code != 0:
            break
    failures = []
    if report.exists():
        failures = [json.loads(line) for line in report.read_text().splitlines()]
    return code, failures, out[-6000:]


def _pytest_run(mutant: str | None, extra: dict, args: list[str], log: Path) -> tuple[int, str]:
    """One pytest run of ``args`` with the environment ``extra`` (on top of ``_env()``): forked
    from a fork server, or a new process where os.fork is not available."""
    servers = _servers()
    if servers is not None:
        server = servers.get()
        try:
            code = server.run(extra, [] if mutant else ["VERIFY_RADIUS_MUTANT"], args, log)
        finally:
            servers.put(server)
        return code, log.read_text(errors="replace") if log.exists() else ""
    env = {**_env(), **extra}  # pragma: no cover - platforms without fork
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def run_mutant(
    mutant: str | None, tmp_path: Path, files: tuple[str, ...] = FILES
) -> tuple[int, list[dict], str]:
    """``run_rules``; when the first failure is a ``tier_count`` test (a count of which tier
    settled what, not a soundness test), the mutant is run again with those tests deselected,
    and that run's outcome is the mutant's: a kill must come from a soundness test. (A kill by
    another test needs no second run: -x stops at the first failure, and deselecting tests
    that passed before it changes nothing.)"""
    code, failures, out = run_rules(mutant, tmp_path, files)
    if failures and failures[0].get("tier_count"):
        code, failures, out = run_rules(mutant, tmp_path, files, without_tier_counts=True)
        out = "(rerun without the tier_count tests)\n" + out
    return code, failures, out


def killed(outcome: tuple[int, list[dict], str]) -> bool:
    """Killed by a soundness test: an AssertionError in a test's call, not a tier count."""
    code, failures, _ = outcome
    if code != 1 or not failures:
        return False
    first = failures[0]
    return (
        first["when"] == "call"
        and first["message"].startswith(("AssertionError", "assert "))
        and not first.get("tier_count")
    )


def test_every_mutant_edit_applies() -> None:
    """Each mutant's source occurs exactly once where it says, and each constant it scales
    exists in its module (else the suite would test a mutant that no longer exists; a module
    that moved raises ModuleNotFoundError here)."""
    for m in mutants.MUTANTS:
        for module, old, new in m.edits:
            assert mutants.edit_source(module, old, new) != "", m.name
        for module, name, _ in m.constants:
            assert hasattr(importlib.import_module(module), name), m.name
    assert len(mutants.MUTANTS) >= 12


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, tuple]:
    """run_mutant for the unmutated code (key None) and every mutant, WORKERS at a time."""
    names: list[str | None] = [None, *(m.name for m in mutants.MUTANTS)]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {
            n: pool.submit(run_mutant, n, tmp_path_factory.mktemp(n or "unmutated")) for n in names
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
    assert not first.get("tier_count"), first  # never a count of which tier settled what
    assert killed(outcomes[name])


_COUNTING_ONLY = """
import os
import pytest


@pytest.mark.tier_count
def test_counts_the_tiers() -> None:
    assert os.environ.get("VERIFY_RADIUS_MUTANT") is None  # fails under any mutant


def test_soundness() -> None:
    pass
"""


def test_a_kill_by_a_tier_count_alone_is_no_kill(tmp_path: Path) -> None:
    """A mutant that only a ``tier_count`` test fails is rerun without it and survives; the same
    failure in an unmarked test kills it."""
    mutant = mutants.MUTANTS[0].name
    files = []
    for marked in (True, False):
        body = _COUNTING_ONLY if marked else _COUNTING_ONLY.replace("@pytest.mark.tier_count", "")
        path = TESTS / f"_tmp_tier_count_{os.getpid()}_{int(marked)}.py"  # must be under tests/
        path.write_text(body, encoding="utf-8")
        files.append(path)
    try:
        counted = run_mutant(mutant, tmp_path, (files[0].name,))
        plain = run_mutant(mutant, tmp_path, (files[1].name,))
    finally:
        for path in files:
            path.unlink()
    assert "rerun without the tier_count tests" in counted[2] and not killed(counted), counted
    assert killed(plain), plain
