"""The environment a report was produced in: Python, platform, library versions, git commit."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

# distribution name -> import name (the report lists these, in this order)
LIBRARIES: tuple[tuple[str, str], ...] = (
    ("numpy", "numpy"),
    ("numba", "numba"),
    ("scipy", "scipy"),
    ("sympy", "sympy"),
    ("mpmath", "mpmath"),
    ("python-flint", "flint"),
    ("matplotlib", "matplotlib"),
    ("tqdm", "tqdm"),
)


def library_version(distribution: str) -> str | None:
    """Installed version of ``distribution`` (from its metadata), or None if not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_commit(path: str | os.PathLike[str] | None = None) -> str | None:
    """The commit checked out at ``path`` (default: the package's repository), with a "+dirty"
    suffix when tracked files differ from it; None outside a git checkout."""
    where = Path(path) if path is not None else Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def environment() -> dict[str, Any]:
    """Python, platform, CPU count, the versions of the numerical libraries and of ``verify``."""
    from verify import __version__

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "executable": sys.executable,
        "verify": __version__,
        "git_commit": git_commit(),
        "libraries": {dist: library_version(dist) for dist, _ in LIBRARIES},
    }
