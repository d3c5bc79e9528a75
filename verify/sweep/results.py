"""The results file: append-only JSON lines, locked against a second writer."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verify.errors import ValidationError
from verify.json_values import jsonable


# --------------------------------------------------------------------------------- results file
class ResultsFile:
    """An append-only JSON-lines file of cell records, locked against a second writer.

    Each :meth:`append` writes one line with a single ``write`` (a signal cannot cut it in
    two) and fsyncs it before returning. On opening, a trailing partial line (left by a kill
    during a write) is truncated away, but only after every complete line was read as a cell
    record: a file that is not a results file is refused, never cut.
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
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if is_new:  # make the new file's directory entry durable too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def append(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(jsonable(record), allow_nan=False, sort_keys=True) + "\n").encode()
        view = memoryview(line)
        while view:  # one write for a line of a few KB; a short write continues
            view = view[os.write(self._fd, view) :]
        os.fsync(self._fd)
        self.records.append(dict(record))

    def close(self) -> None:
        os.close(self._fd)
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
    if dropped and not data[end:].lstrip().startswith(b"{"):
        raise ValidationError(
            "results", "a JSON-lines results file (its last line is not a cell record)", str(path)
        )
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
    if dropped and repair:  # every complete line is a record: the torn tail is a cut record
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    return records, dropped


def load_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The latest record of each cell in a results file (a torn last line is ignored)."""
    records, _ = _read_records(Path(path))
    latest: dict[str, dict[str, Any]] = {}
    for rec in records:
        latest[rec["key"]] = rec
    return list(latest.values())
