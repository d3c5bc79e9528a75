"""An on-disk cache of trained parameters (verify.experiments.train.check_models), so that a
warm `report` neither imports torch (~5 s) nor trains again (~5 s per grid).

A file holds the float64 parameters of one trained model (``Params.save``: exact), named by a
digest of everything the training depends on: the target function, N, every training setting,
the seed, the source of the whole ``verify`` package (any code change misses), the versions of
torch, numpy and Python, and the machine (CPU architecture and its feature flags: torch picks
its kernels by them). A hit loads the very arrays a miss trained, so the numbers computed from
them are the same. The cache folder is ``$VERIFY_CACHE_DIR/trained`` (``VERIFY_CACHE_DIR=off``
disables it), else ``$XDG_CACHE_HOME/verify/trained`` or ``~/.cache/verify/trained``. Writing
is best effort (an unwritable folder just means no cache) and atomic (a temporary file
renamed), so parallel workers never read half a file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.model import Params

CACHE_VARIABLE = "VERIFY_CACHE_DIR"
# the ``shares`` tag of the statement checks that read train.check_models: one worker runs them
TRAINED_MODELS = "trained models (verify.experiments.train.check_models)"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the verify package


def cache_dir() -> Path | None:
    """The folder of the trained-model cache, or None when ``VERIFY_CACHE_DIR`` is off."""
    raw = os.environ.get(CACHE_VARIABLE)
    if raw is not None:
        if raw.strip().lower() in ("", "off", "0", "none", "false"):
            return None
        return Path(raw).expanduser() / "trained"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "verify" / "trained"


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of every ``.py`` file of the verify package (relative path and bytes)."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        h.update(path.relative_to(PACKAGE_ROOT).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _machine() -> str:
    flags = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags = " ".join(sorted(line.split(":", 1)[1].split()))
                break
    except OSError:  # not Linux: the architecture and the processor string only
        pass
    return f"{platform.system()} {platform.machine()} {platform.processor()} {flags}"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "none"


def cached(key: str, train: Callable[[], Any]) -> Params:
    """The parameters cached under ``key``, else ``train().params`` (a TrainResult's), stored
    there (a hit needs no torch: nothing is trained)."""
    params = load_params(key)
    if params is None:
        params = train().params
        save_params(key, params)
    return params


def all_cached(keys: Iterable[str]) -> bool:
    """Whether the cache holds the parameters of every key of ``keys``."""
    folder = cache_dir()
    return folder is not None and all((folder / f"{k}.npz").is_file() for k in keys)


def model_key(function: str, n_bits: int, settings: Any, seed: int) -> str:
    """The cache key of one trained model: a digest of everything its parameters depend on."""
    parts = {
        "function": function,
        "N": int(n_bits),
        "settings": asdict(settings),
        "seed": int(seed),
        "code": code_digest(),
        "torch": _version("torch"),
        "numpy": np.__version__,
        "python": sys.version,
        "machine": _machine(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def load_params(key: str) -> Params | None:
    """The cached parameters of ``key``, or None (no cache, no file, or an unreadable one)."""
    folder = cache_dir()
    path = folder / f"{key}.npz" if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return Params.load(path)
    except ValidationError:  # a damaged file: trained again (and rewritten)
        return None


def save_params(key: str, params: Params) -> None:
    """Store ``params`` under ``key`` (best effort: nothing happens when it cannot be written)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}-", suffix=".npz", dir=folder)
        os.close(fd)
        try:
            params.save(tmp)
            os.replace(tmp, folder / f"{key}.npz")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return
