"""The results file: append-only JSON lines, locked against a second writer."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.report.document import jsonable


# --------------------------------------------------------------------------------- results file
class ResultsFile:
    """An append-only JSON-lines file of cell records, locked against a second writer.

    Each :meth:`append` writes one line and flushes and fsyncs it before returning. On opening,
    a trailing partial line (left by a kill during a write) is truncated away.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path.with_name(self.path.name + ".lock"), "a")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise ValidationError(
                "results", "a results file no other running sweep is writing", str(self.path)
            ) from None
        self.records, self.dropped = _read_records(self.path, repair=True)
        is_new = not self.path.exists()
        self._fh = open(self.path, "a", encoding="utf-8")
        if is_new:  # make the new file's directory entry durable too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def append(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(jsonable(record), allow_nan=False, sort_keys=True)
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records.append(dict(record))

    def close(self) -> None:
        self._fh.close()
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_records(path: Path, *, repair: bool = False) -> tuple[list[dict[str, Any]], int]:
    """The complete records of ``path``, and how many bytes of a torn last line were dropped
    (truncated from the file when ``repair``). A malformed complete line is an error."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    dropped = len(data) - end
    if dropped and repair:
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    records = []
    for i, line in enumerate(data[:end].splitlines()):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                "results", f"a JSON-lines results file (line {i + 1} is not JSON)", str(path)
            ) from exc
        if not isinstance(rec, dict) or "key" not in rec:
            raise ValidationError("results", f"cell records (line {i + 1} has no key)", str(path))
        records.append(rec)
    return records, dropped


def load_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The latest record of each cell in a results file (a torn last line is ignored)."""
    records, _ = _read_records(Path(path))
    latest: dict[str, dict[str, Any]] = {}
    for rec in records:
        latest[rec["key"]] = rec
    return list(latest.values())
