"""Running ``python -m verify prove`` on a source mutant of one ``verify/theory`` module (for
benchmarks/mutate_theory.py).

The mutated module is served by a meta-path finder: the first import of that module compiles
the mutated text (under the file's own name); nothing else changes, so this is a source edit.
Two ways to run it:

- :func:`run_fresh`: a fresh interpreter (``python -c``), exactly the referee's run;
- :class:`ForkPool`: forks of one process that has imported the command line and registered the
  obligations (:func:`verify.proofs.runner.load`), each child serving its mutant before the
  first import of the module: the same run without the interpreter's start-up and imports
  (1.8 s idle, ~10 s loaded). A module that registering the obligations imported already is
  run by the child exec-ing a fresh interpreter (:data:`_BOOT`) instead.

The trace (:func:`trace`): every obligation discharged on the original code under
``sys.setprofile``, recording which top-level functions and classes of ``verify/theory`` it
executes, so that a mutant runs only the obligations that execute its code.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from theory_mutants import Mutant

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "verify" / "theory"
_HERE = str(Path(__file__).resolve().parent)


def module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def theory_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in THEORY.glob("*.py") if p.name != "__init__.py")


def serve_mutated(name: str, path: str, source: str) -> None:
    """From now on, importing module ``name`` compiles ``source`` (as file ``path``)."""

    class Loader(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module) -> None:
            module.__file__ = path
            exec(compile(source, path, "exec"), module.__dict__)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, p, target=None):
            if fullname != name:
                return None
            return importlib.util.spec_from_loader(name, Loader(), origin=path, is_package=False)

    if name in sys.modules:
        raise RuntimeError(f"{name} is imported already: its mutant cannot be served")
    sys.meta_path.insert(0, Finder())


def _prove_args(only: list[str] | None) -> list[str]:
    return ["prove"] + [a for i in only or () for a in ("--only", i)]


def verdict(returncode: int, stdout: str, stderr: str) -> dict:
    """killed (exit != 0 naming a failed obligation), error (exit != 0 naming none: a crash),
    survived (exit 0)."""
    not_ok = [ln for ln in stdout.splitlines() if ln.startswith("NOT OK")]
    failed = [ln.split()[2].rstrip(":") for ln in not_ok]
    if returncode == 0:
        outcome = "survived"
    elif failed:
        outcome = "killed"
    else:
        outcome = "error"
    detail = not_ok[0] if not_ok else " ".join(stderr.strip().splitlines()[-1:])
    return {"outcome": outcome, "failed": failed, "detail": detail[:300]}


_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from _mutant_runs import serve_mutated;"
    " serve_mutated(sys.argv[2], sys.argv[3], open(sys.argv[4]).read());"
    " sys.argv = ['verify', *sys.argv[5:]]; from verify.cli import run; run()"
)


def run_fresh(m: Mutant, only: list[str] | None, timeout: float) -> dict:
    """``prove`` (``--only`` the ids; all of it for None) on the mutant, in a new interpreter."""
    source = (ROOT / m.path).read_text()
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(m.apply(source))
    cmd = [sys.executable, "-c", _BOOT, _HERE, module_name(m.path), str(ROOT / m.path), f.name]
    start = time.perf_counter()
    try:
        run = subprocess.run(
            [*cmd, *_prove_args(only)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "seconds": timeout}
    finally:
        os.unlink(f.name)
    return {"seconds": round(time.perf_counter() - start, 2)} | verdict(
        run.returncode, run.stdout, run.stderr
    )


class ForkPool:
    """Up to ``jobs`` forked children at a time, each running ``prove`` on one mutant."""

    def __init__(self, jobs: int) -> None:
        from verify.cli import main
        from verify.proofs.runner import load

        load()
        self.main = main
        self.jobs = jobs
        self.tmp = Path(tempfile.mkdtemp(prefix="mutants-"))

    def _child(self, m: Mutant, only: list[str] | None, out: Path) -> None:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = os.open(out.with_suffix(".err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(err, 2)
        code = 1
        try:
            name, source = module_name(m.path), (ROOT / m.path).read_text()
            if name in sys.modules:  # imported while registering: a fresh interpreter
                mutated = out.with_suffix(".mutant.py")
                mutated.write_text(m.apply(source))
                boot = [sys.executable, "-c", _BOOT, _HERE, name, str(ROOT / m.path)]
                os.execv(sys.executable, [*boot, str(mutated), *_prove_args(only)])
            serve_mutated(name, str(ROOT / m.path), m.apply(source))
            code = self.main(_prove_args(only))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # a crash of prove: exit 1 with its traceback
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def run(self, tasks: Iterator[tuple[Mutant, list[str] | None, float]]) -> Iterator[tuple]:
        """Yield (mutant, result) as the children finish (in finishing order)."""
        running: dict[int, tuple[Mutant, Path, float, float]] = {}
        tasks = iter(tasks)
        exhausted = False
        while running or not exhausted:
            while not exhausted and len(running) < self.jobs:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                m, only, timeout = task
                out = self.tmp / f"{len(running)}-{time.monotonic_ns()}.out"
                pid = os.fork()
                if pid == 0:
                    self._child(m, only, out)
                running[pid] = (m, out, time.perf_counter(), timeout)
            time.sleep(0.05)
            for pid, (m, out, start, timeout) in list(running.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                elapsed = time.perf_counter() - start
                if done == 0 and elapsed < timeout:
                    continue
                if done == 0:  # over time: it would hang prove
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    result = {"outcome": "timeout", "seconds": round(elapsed, 2)}
                else:
                    rc = os.waitstatus_to_exitcode(status)
                    result = {"seconds": round(elapsed, 2)} | verdict(
                        rc, out.read_text(), out.with_suffix(".err").read_text()
                    )
                for f in (out, out.with_suffix(".err"), out.with_suffix(".mutant.py")):
                    f.unlink(missing_ok=True)
                del running[pid]
                yield m, result


# ----------------------------------------------------------------------------- the trace
def _sources_hash() -> str:
    h = hashlib.sha256()
    for p in theory_files():
        h.update((ROOT / p).read_bytes())
    for p in sorted((ROOT / "verify" / "proofs").glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def trace() -> dict:
    """{"import": [scope keys run while registering], "obligations": {id: [scope keys]},
    "ok": [ids proved with twins refuted], "seconds": {id: s}} on the original code; a scope
    key is "verify/theory/<module>.py::<top-level name>" ("<module>" for module-level code)."""
    theory_dir = str(THEORY) + os.sep
    seen: set[str] = set()
    known: dict[object, str | None] = {}

    def key(code) -> str | None:
        if code not in known:
            f = code.co_filename
            known[code] = (
                f"{Path(f).relative_to(ROOT)}::{code.co_qualname.split('.')[0]}"
                if f.startswith(theory_dir)
                else None
            )
        return known[code]

    def hook(frame, event, arg) -> None:
        if event == "call":
            k = key(frame.f_code)
            if k is not None:
                seen.add(k)

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        from verify.proofs.core import discharge
        from verify.proofs.runner import load

        obs = load()
        imported = sorted(seen)
        per_ob: dict[str, list[str]] = {}
        ok, seconds = [], {}
        for ob in obs:
            seen.clear()
            t = time.perf_counter()
            o = discharge(ob)
            seconds[ob.id] = time.perf_counter() - t
            per_ob[ob.id] = sorted(seen)
            if o.ok:
                ok.append(ob.id)
            print(f"traced {ob.id}: {len(per_ob[ob.id])} scopes, ok={o.ok}", file=sys.stderr)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return {"import": imported, "obligations": per_ob, "ok": ok, "seconds": seconds}


def load_trace(out: Path) -> dict:
    """The trace, cached in ``out/trace.json`` under the hash of the theory and proof sources;
    taken in a fresh interpreter when missing or stale."""
    f = out / "trace.json"
    h = _sources_hash()
    if f.exists():
        doc = json.loads(f.read_text())
        if doc.get("hash") == h:
            return doc
    code = "import json, sys; sys.path.insert(0, sys.argv[1]); import _mutant_runs as m;"
    code += " json.dump(m.trace(), sys.stdout)"
    run = subprocess.run(
        [sys.executable, "-c", code, _HERE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    doc = {"hash": h, **json.loads(run.stdout)}
    f.write_text(json.dumps(doc, indent=1))
    return doc


def relevant(m: Mutant, tr: dict) -> tuple[list[str], str]:
    """(obligation ids to run, why): those that executed the mutant's scope; every one that
    executed its module for module-level code, defaults, decorators and registration-time
    scopes."""
    scope_key = f"{m.path}::{m.scope}"
    whole_module = m.scope == "<module>" or m.context in ("default", "decorator")
    if scope_key in tr["import"] or whole_module:
        ids = [i for i, ks in tr["obligations"].items() if any(k.startswith(m.path) for k in ks)]
        return ids, "module"
    return [i for i, ks in tr["obligations"].items() if scope_key in ks], "scope"
