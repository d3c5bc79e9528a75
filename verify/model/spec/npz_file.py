"""Reading an ``.npz`` archive that a user hands in, with every fault one ValidationError.

``np.load`` trusts what it is given: a plain ``.npy`` renamed ``.npz`` comes back as an array
(not an archive), an empty file raises EOFError, an array header claiming terabytes is
allocated before the data runs out, a FIFO blocks forever, and an archive may hold two members
of one name (the last one wins). Here each is refused, naming the file and what was wrong,
before any array is read: the headers are checked against the sizes the archive records.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import numpy as np

from verify.errors import ValidationError

ZIP_MAGIC = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"


def regular_file(argument: str, path: str | os.PathLike[str], expected: str) -> Path:
    """``path`` as a Path if it names a regular file (a FIFO or a device would block or never
    end: refused, like a missing file)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        raise ValidationError(argument, expected, str(path), exc.strerror or "missing") from exc
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else None
        raise ValidationError(argument, expected, str(path), f"it is {kind or 'not a file'}")
    return p


def _header(fh: object) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header bytes) of the ``.npy`` stream ``fh`` (read up to its data)."""
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = fmt.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, _, dtype = fmt.read_array_header_2_0(fh)
    else:
        shape, _, dtype = fmt._read_array_header(fh, version)
    return tuple(shape), np.dtype(dtype), fh.tell()


def read_npz(argument: str, path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` archive at ``path`` (no pickles), by name; ValidationError
    naming ``argument`` and the fault otherwise."""
    expected = "an .npz archive (numpy.savez)"
    p = regular_file(argument, path, "an existing .npz file")
    name = p.name
    with open(p, "rb") as fh:
        head = fh.read(len(NPY_MAGIC))
    if not head:
        raise ValidationError(argument, expected, name, "the file is empty")
    if head.startswith(NPY_MAGIC):
        raise ValidationError(
            argument, expected, name, "it is a single .npy array (numpy.save), not an archive"
        )
    if not head.startswith(ZIP_MAGIC):
        raise ValidationError(argument, expected, name, "it is not a zip archive")
    try:
        with zipfile.ZipFile(p) as zf:
            infos = zf.infolist()
            names = [info.filename for info in infos]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValidationError(
                    argument, "each array once", name, f"{repeated[0]} is in the archive twice"
                )
            for info in infos:
                with zf.open(info) as member:
                    shape, dtype, header = _header(member)
                key = info.filename.removesuffix(".npy")
                if dtype.hasobject:
                    raise ValidationError(key, "an array of numbers (no pickled objects)", name)
                claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
                held = info.file_size - header
                if claimed != held:
                    raise ValidationError(
                        key,
                        "an array whose header matches its data",
                        name,
                        f"the header claims {claimed} bytes of {dtype} {shape}, the archive"
                        f" holds {held}",
                    )
        with np.load(p, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except ValidationError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, MemoryError) as exc:
        raise ValidationError(
            argument, expected, name, f"{type(exc).__name__}: {exc}"[:200]
        ) from exc
