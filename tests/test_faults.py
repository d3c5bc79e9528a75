"""Fault injection: SIGINT, SIGTERM and SIGKILL at seeded random moments of `sweep` and `report`
(subprocesses), asserting that nothing is lost:

- sweep: every cell finished before the signal is in the results file exactly once, the file
  reads back (a torn last line at most), a rerun completes the grid without redoing a finished
  cell, and no worker process outlives the parent;
- report: the folder holds either the complete previous report, byte for byte, or a complete new
  one (finished or marked interrupted, exit code 130) whose every linked figure exists and which
  holds every check that had finished; no staging folder is left behind by a signal the process
  could handle, and one left by SIGKILL is removed by the next run;
- the first SIGINT or SIGTERM is acknowledged on stderr within a second, saying what happens
  next.

The default run (about a minute on 2 busy cores) injects SIGTERM and SIGKILL into a sweep and
SIGINT into a report at one seeded moment each, and two Ctrl-C into a report; ``--runslow``
injects every signal into both at the moments of ``FAULT_SEEDS``.
"""

from __future__ import annotations

import filecmp
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from _patience import patience

from verify.report.document import validate_document

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
FAST_SEEDS = (0,)  # the default run: sweep SIGTERM and SIGKILL, report SIGINT, two Ctrl-C
FAULT_SEEDS = (0, 1, 2, 3)  # --runslow: every signal at these moments
SWEEP_CELLS = 80
SWEEP = ["--kind", "random_function", "-N", "24", "--seeds", f"0:{SWEEP_CELLS}", "-j", "2"]
REPORT = ["--import", "_fault_statements", "--only", "Fault 1"]
ACK = re.compile(r"^(Ctrl-C|SIGTERM): ")
# the stderr lines after which the work runs; the seeded moments count from them (sweep: 80
# cells of about 0.08 s on 2 workers, 3-4 s in all, measured 2026-12-06; report: 8 checks of
# 0.25 s, then 8 figures)
SWEEP_MARK, SWEEP_HORIZON = "cells on local", 2.0
REPORT_MARK, REPORT_HORIZON = "loading the statements", 5.0


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


class Run:
    """A `python -m verify ...` subprocess in its own process group, its stderr lines timed."""

    def __init__(self, argv: list[str], cwd: Path, *, bar: bool = True, **env: str) -> None:
        """``bar``: the command has a progress bar (it gets --no-progress)."""
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "verify", *argv, *(["--no-progress"] if bar else [])],
            cwd=cwd,
            env=_env(**env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def signal_after(self, delay: float, sig: int, mark: str) -> float | None:
        """Send ``sig`` ``delay`` s after the stderr line containing ``mark`` (the work has
        begun: the moment does not depend on the machine's start-up time), if still running;
        when it was sent, else None."""
        while not any(mark in line for _, line in self.lines):  # no time limit (_patience)
            if self.proc.poll() is not None:
                return None
            time.sleep(0.01)
        try:
            self.proc.wait(delay)
            return None
        except subprocess.TimeoutExpired:
            sent = time.monotonic()
            self.proc.send_signal(sig)
            return sent

    def wait(self) -> int:
        code = self.proc.wait()  # no time limit: a hang shows as a hang, not as a busy machine
        self._reader.join(patience(5))
        return code

    @property
    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)


def _group_alive(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are alive (zombies do not count)."""
    alive = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(d.name))
    return alive


def _assert_group_ends(pgid: int, promised: float = 5.0) -> None:
    within = patience(promised)
    deadline = time.monotonic() + within
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _group_alive(pgid)
    if left:
        for pid in left:  # clean up before failing
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert not left, f"processes outlived their parent by {within} s: {left}"


def _assert_acknowledged(run: Run, sent: float, code: int, started_line: str) -> None:
    """A handled SIGINT/SIGTERM is acknowledged within a second (scaled by the machine's load,
    tests/_patience.py), once the handler is set."""
    if not any(started_line in line for _, line in run.lines):
        return  # signalled before the guard was installed (startup): the default applies
    acks = [(t, line) for t, line in run.lines if ACK.match(line)]
    assert acks, f"no acknowledgement on stderr (exit {code}):\n{run.stderr}"
    t, line = acks[0]
    assert t - sent < patience(1.0), f"acknowledged after {t - sent:.2f} s: {line}"
    assert "stop" in line or "writing" in line or "written" in line, line


def _report_moment(sig_name: str, delay: float, code: int, run: Run) -> None:
    """Say (pytest -s) when the signal came and what the command answered."""
    ack = next((line for _, line in run.lines if ACK.match(line)), "no acknowledgement")
    print(f"\n{sig_name} at {delay:.2f} s: exit {code}; {ack[:110]}")


def _records(path: Path) -> list[dict]:
    data = path.read_bytes() if path.exists() else b""
    complete = data[: data.rfind(b"\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def _moments(seeds: tuple[int, ...], horizon: float) -> list[tuple[int, float]]:
    return [(s, random.Random(s).uniform(0.0, horizon)) for s in seeds]


def _sweep_case(tmp_path: Path, sig_name: str, seed: int, delay: float) -> None:
    out = tmp_path / "s.jsonl"
    run = Run(["sweep", "--out", str(out), *SWEEP], tmp_path)
    sent = run.signal_after(delay, SIGNALS[sig_name], SWEEP_MARK)
    code = run.wait()
    _report_moment(sig_name, delay, code, run)
    pgid = run.proc.pid
    _assert_group_ends(pgid)
    # (SIGTERM during start-up, before the handler is set, ends the process: -15)
    expected = {"SIGINT": (130,), "SIGTERM": (143, -15), "SIGKILL": (-9,)}
    if sent is None:
        assert code == 0, run.stderr
    else:
        assert code in expected[sig_name], (code, run.stderr)
        if sig_name != "SIGKILL":
            _assert_acknowledged(run, sent, code, SWEEP_MARK)
    before = _records(out)
    keys = [r["key"] for r in before if r["status"] == "ok"]
    assert len(keys) == len(set(keys)), "a finished cell was written twice"
    finished = set(keys)
    # the rerun completes the grid and redoes no finished cell
    again = Run(["sweep", "--out", str(out), *SWEEP], tmp_path)
    assert again.wait() == 0, again.stderr
    _assert_group_ends(again.proc.pid)
    after = _records(out)
    ok = [r["key"] for r in after if r["status"] == "ok"]
    assert len(ok) == len(set(ok)) == SWEEP_CELLS, (
        f"seed {seed}: {len(ok)} ok, {len(set(ok))} distinct"
    )
    assert finished <= set(ok)
    assert [r["key"] for r in after[: len(before)]] == [r["key"] for r in before]


@pytest.fixture(scope="module")
def old_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete report of "Fault 1", the previous report each fault case starts from."""
    where = tmp_path_factory.mktemp("old")
    run = Run(["report", *REPORT, "--out", "r"], where, FAULT_CHECK_SECONDS="0")
    assert run.wait() == 0, run.stderr
    return where / "r"


def _assert_complete(folder: Path) -> dict:
    doc = json.loads((folder / "report.json").read_text())
    assert validate_document(doc) == []
    md = (folder / "report.md").read_text()
    for link in re.findall(r"\]\((figures/[^)]+)\)", md):
        assert (folder / link).is_file(), f"report.md links a missing {link}"
    for st in doc["statements"]:
        for c in st["checks"]:
            for f in c["figures"]:
                for name in f["files"]:
                    assert (folder / name).is_file(), name
    assert (folder / "rows.csv").is_file()
    return doc


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def _report_case(tmp_path: Path, old: Path, sig_name: str, seed: int, delay: float) -> None:
    target = tmp_path / "r"
    shutil.copytree(old, target)
    log = tmp_path / "finished.log"
    run = Run(["report", *REPORT, "--out", "r"], tmp_path, FAULT_LOG=str(log))
    sent = run.signal_after(delay, SIGNALS[sig_name], REPORT_MARK)
    code = run.wait()
    _report_moment(sig_name, delay, code, run)
    _assert_group_ends(run.proc.pid)
    assert target.is_dir(), "the report folder disappeared"
    if _same_tree(old, target):  # the previous report, untouched
        assert sent is not None and code != 0, "a finished run left the old report"
    else:
        doc = _assert_complete(target)
        reported = {c["name"] for st in doc["statements"] for c in st["checks"]}
        finished = log.read_text().split("\n")[:-1] if log.exists() else []
        # a check that finished just as the signal came may be listed as interrupted
        assert set(finished[:-1]) <= reported, (finished, reported)
        interrupted = bool(doc["summary"].get("interrupted_in"))
        assert doc["summary"]["exit_code"] == (130 if interrupted else 0)
        if interrupted:
            assert code in (130, 143), (code, run.stderr)
    if sent is not None and sig_name != "SIGKILL" and code in (130, 143):
        _assert_acknowledged(run, sent, code, REPORT_MARK)
    leftovers = [p.name for p in tmp_path.glob(".r.partial-*")]
    if sig_name != "SIGKILL":
        assert not leftovers, leftovers
    elif leftovers:  # the next run removes what a killed one left
        again = Run(["report", *REPORT, "--out", "r"], tmp_path, FAULT_CHECK_SECONDS="0")
        assert again.wait() == 0, again.stderr
        assert not list(tmp_path.glob(".r.partial-*"))
        _assert_complete(target)


def _cases(seeds: tuple[int, ...], horizon: float, signals=tuple(SIGNALS)) -> list:
    return [
        pytest.param(sig, seed, delay, id=f"{sig}-seed{seed}")
        for sig in signals
        for seed, delay in _moments(seeds, horizon)
    ]


@pytest.mark.parametrize(
    ("sig_name", "seed", "delay"), _cases(FAST_SEEDS, SWEEP_HORIZON, ("SIGTERM", "SIGKILL"))
)
def test_sweep_fault(tmp_path: Path, sig_name: str, seed: int, delay: float) -> None:
    _sweep_case(tmp_path, sig_name, seed, delay)


@pytest.mark.parametrize(
    ("sig_name", "seed", "delay"), _cases(FAST_SEEDS, REPORT_HORIZON, ("SIGINT",))
)
def test_report_fault(tmp_path: Path, old_report: Path, sig_name: str, seed: int, delay: float):
    _report_case(tmp_path, old_report, sig_name, seed, delay)


@pytest.mark.slow
@pytest.mark.parametrize(("sig_name", "seed", "delay"), _cases(FAULT_SEEDS, SWEEP_HORIZON))
def test_sweep_fault_more_moments(tmp_path: Path, sig_name: str, seed: int, delay: float) -> None:
    _sweep_case(tmp_path, sig_name, seed, delay)


@pytest.mark.slow
@pytest.mark.parametrize(("sig_name", "seed", "delay"), _cases(FAULT_SEEDS, REPORT_HORIZON))
def test_report_fault_more_moments(
    tmp_path: Path, old_report: Path, sig_name: str, seed: int, delay: float
) -> None:
    _report_case(tmp_path, old_report, sig_name, seed, delay)


def test_second_ctrl_c_abandons_and_keeps_the_old_report(tmp_path: Path, old_report: Path):
    """Two Ctrl-C: the first is acknowledged (the finished checks' figures are being drawn),
    the second abandons the new report; the old report stays, byte for byte."""
    target = tmp_path / "r"
    shutil.copytree(old_report, target)
    log = tmp_path / "finished.log"
    run = Run(["report", *REPORT, "--out", "r"], tmp_path, FAULT_LOG=str(log))
    while not (log.exists() and len(log.read_text().split()) >= 8):  # 4 checks finished
        assert run.proc.poll() is None, run.stderr
        time.sleep(0.02)
    run.proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + patience(5)
    while not any(ACK.match(line) for _, line in run.lines):
        assert time.monotonic() < deadline, run.stderr
        time.sleep(0.01)
    run.proc.send_signal(signal.SIGINT)
    assert run.wait() == 130, run.stderr
    assert "second interrupt" in run.stderr
    assert _same_tree(old_report, target), "the old report changed"
    assert not list(tmp_path.glob(".r.partial-*"))


def test_check_model_acts_on_ctrl_c_at_once(tmp_path: Path) -> None:
    """Issue 43: check-model took 14 s to act on Ctrl-C (the certified table is a compiled
    kernel, which holds the main thread until it returns). The work runs in a worker thread
    now: Ctrl-C during the table ends the command with 130 and one line, within a second on
    an idle machine (scaled by the load, tests/_patience.py)."""
    from verify.model import ModelConfig, init_params

    model = tmp_path / "m.npz"
    init_params(ModelConfig(d_model=16, n_layers=2, n_heads=2, ln_eps=1e-5), "uniform", 0).save(
        model
    )
    run = Run(["check-model", str(model), "-N", "20"], tmp_path, bar=False)
    mark = "certifying the 2^20 strings"
    while not any(mark in line for _, line in run.lines):  # the table has begun
        assert run.proc.poll() is None, run.stderr
        time.sleep(0.01)
    time.sleep(0.5)  # inside the compiled table (it runs for many seconds)
    assert run.proc.poll() is None, "the table finished before the signal"
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    code = run.proc.wait()
    took = time.monotonic() - sent
    run._reader.join(patience(5))
    assert code == 130, run.stderr
    assert run.stderr.splitlines()[-1].endswith("interrupted"), run.stderr
    assert took < patience(1.0), f"acted on Ctrl-C after {took:.2f} s"
