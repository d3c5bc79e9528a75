"""A fork server for the radius mutation suite (``tests/test_radius_mutations.py``): it imports
once what every mutant process imports (numpy, numba with the JIT disabled, python-flint,
mpmath, pytest, the ``verify.model`` modules), then runs each request in a forked child, a
fresh ``pytest.main`` with the request's environment and arguments, its output to a file. The
mutant is applied in the child (the plugin ``-p _radius_mutants`` reads
$VERIFY_RADIUS_MUTANT in ``pytest_configure``, before the test files are imported), so children
share nothing but the imports: ~5 s of imports per mutant saved (2 cores, load 9).

Protocol: one JSON request per line on stdin, {"env": {...}, "unset": [...], "args": [...],
"cwd": ..., "out": path}; one JSON reply per line on stdout, {"code": exit
code}. Run as ``python _radius_forkserver.py`` with NUMBA_DISABLE_JIT=1 and tests/ on the path.
"""

from __future__ import annotations

import json
import os
import sys


def _warm() -> None:
    """Import what the soundness tests import (their module state is not touched: a mutant is
    applied in the child by re-executing the edited module there). With PYTHONDONTWRITEBYTECODE
    every process compiles what it imports from source, and pytest rewrites hypothesis (a
    plugin's package, imported by the root conftest): ~10 s of each run at load 9."""
    import _pytest.assertion.rewrite
    import _pytest.python  # noqa: F401
    import flint  # noqa: F401
    import hypothesis
    import hypothesis.strategies  # noqa: F401
    import mpmath  # noqa: F401
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import scipy.special  # noqa: F401

    import verify.model.double_double.dd_pass
    import verify.model.exhaustive.exhaustive_pass
    import verify.model.generic.enclosure
    import verify.model.generic.reference
    import verify.model.per_string.per_string_pass
    import verify.model.subcube.affine
    import verify.strategies  # noqa: F401


def _child(req: dict) -> None:
    """Run one request in this (forked) process and exit with pytest's code."""
    code = 70
    try:
        fd = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        for key in req.get("unset", []):
            os.environ.pop(key, None)
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        import pytest

        code = int(pytest.main(req["args"]))
    except BaseException as exc:
        print(f"fork server child: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    _warm()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
