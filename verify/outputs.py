"""Where a command's outputs go: named, checked against each other and the inputs, before work.

Every file a command will write is listed in an :class:`OutputPlan` before anything is computed.
:meth:`OutputPlan.check` refuses (``ValidationError``, the CLI's exit 2) when two outputs are one
file, when an output is one of the inputs, or when an output path cannot be written at all (a
folder where a file is wanted, a name too long for the file system, an unwritable folder). A
figure written to ``FILE.png`` has its data in ``FILE.data.csv`` (:func:`figure_data_path`), a
name no other output of the toolkit uses.

Only the standard library is imported here: usage errors answer at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.errors import ValidationError

DATA_SUFFIX = ".data.csv"


#: zlib level of the PNGs: the same pixels as the default level 6, written in about two thirds
#: of the time (the 31 figures of the quick report: 1.1 s against 1.7 s of encoding) for files
#: 8% larger (measured 2026-12-06)
PNG_COMPRESSION = 1


def save_options(path: str | Path) -> dict[str, Any]:
    """The keyword arguments of ``savefig`` for a file of the report at ``path`` (by its
    suffix): no dates in PDFs and SVGs, the zlib level of PNGs."""
    suffix = Path(path).suffix.lower()
    if suffix == ".png":
        return {"pil_kwargs": {"compress_level": PNG_COMPRESSION}}
    if suffix == ".pdf":  # reproducible files: no creation date
        return {"metadata": {"CreationDate": None}}
    if suffix == ".svg":
        return {"metadata": {"Date": None}}
    return {}


def figure_data_path(path: str | os.PathLike[str]) -> Path:
    """The CSV of a figure's data beside it: ``FILE.png`` -> ``FILE.data.csv``."""
    p = Path(path)
    return p.with_name(p.stem + DATA_SUFFIX)


def figure_paths(path: str | os.PathLike[str], *, also: Iterable[str] = (), data: bool = True):
    """Every file a figure drawn to ``path`` writes: ``path``, the same drawing with each suffix
    of ``also``, and (with ``data``) :func:`figure_data_path`."""
    p = Path(path)
    out = [p] + [p.with_suffix(x) for x in also if x.lower() != p.suffix.lower()]
    if data:
        out.append(figure_data_path(p))
    return out


def _identity(path: Path) -> str:
    """A path's identity for collision checks: absolute, symlinks and '..' resolved."""
    return os.path.normcase(os.path.realpath(path))


def _os_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a file name here (too long, ...), or None."""
    max_name = 255
    for part in path.parts:
        if len(os.fsencode(part)) > max_name:
            return f"a file or folder name longer than {max_name} bytes ({len(part)} characters)"
    try:
        path.exists()
        path.parent.exists()
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_path_name(flag: str, path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, or ValidationError when the file system cannot hold such a name."""
    p = Path(path)
    if not str(path):
        raise ValidationError(flag, "a path", str(path))
    why = _os_problem(p)
    if why:
        shown = str(path) if len(str(path)) <= 80 else str(path)[:60] + "..." + str(path)[-15:]
        raise ValidationError(flag, "a path the file system can hold", shown, why)
    return p


@dataclass
class OutputPlan:
    """The files (``add``) and folders (``add_dir``) a command writes, by flag, and the files it
    reads (``add_input``). :meth:`check` compares them all before any work."""

    outputs: list[tuple[str, Path]] = field(default_factory=list)
    dirs: list[tuple[str, Path]] = field(default_factory=list)
    inputs: list[tuple[str, Path]] = field(default_factory=list)

    def add(self, flag: str, *paths: str | os.PathLike[str]) -> None:
        self.outputs += [(flag, check_path_name(flag, p)) for p in paths]

    def add_dir(self, flag: str, path: str | os.PathLike[str]) -> None:
        self.dirs.append((flag, check_path_name(flag, path)))

    def add_input(self, flag: str, path: str | os.PathLike[str]) -> None:
        self.inputs.append((flag, Path(path)))

    def check(self) -> None:
        """ValidationError (naming the flag) on: an output that is a folder, two outputs that
        are one file, an output that is an input, an output inside another output folder."""
        seen: dict[str, tuple[str, Path]] = {}
        for flag, p in self.outputs:
            if p.is_dir() or str(p).endswith(os.sep):
                raise ValidationError(flag, "a file path, not a directory", str(p))
            key = _identity(p)
            if key in seen:
                other, first = seen[key]
                what = "the same flag twice" if other == flag else f"{other}'s file"
                raise ValidationError(
                    flag, f"a file no other output writes (it is {what} {first})", str(p)
                )
            seen[key] = (flag, p)
        for flag, p in self.inputs:
            key = _identity(p)
            if key in seen:
                out_flag, out = seen[key]
                raise ValidationError(
                    out_flag, f"a file that is not an input (it is {flag}'s {p})", str(out)
                )
        for flag, d in self.dirs:
            root = _identity(d)
            for key, (other, p) in seen.items():
                if key == root or key.startswith(root + os.sep):
                    raise ValidationError(
                        other, f"a file outside {flag}'s folder {d} (it is replaced whole)", str(p)
                    )
            for in_flag, p in self.inputs:
                key = _identity(p)
                if key == root or key.startswith(root + os.sep):
                    raise ValidationError(
                        flag, f"a folder that holds no input (it holds {in_flag}'s {p})", str(d)
                    )


# ------------------------------------------------------------------------ folders written whole
STAGING = ".partial-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _real(target: str | os.PathLike[str]) -> Path:
    """``target``, or where it points when it is a symbolic link."""
    t = Path(target)
    return Path(os.path.realpath(t)) if t.is_symlink() else t


def staging_dir(target: str | os.PathLike[str]) -> Path:
    """A new empty folder beside ``target`` (``.<name>.partial-<pid>``) to build it in; the
    leftovers of runs that were killed (their process gone) are removed first."""
    t = _real(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{t.name}{STAGING}"
    for old in t.parent.glob(prefix + "*"):
        pid = old.name[len(prefix) :].split("-")[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    stage = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=t.parent))
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp's 0700 would stay the report folder's mode
    return stage


def _umask() -> int:
    """This process's umask, read without changing it (Linux: /proc), else by setting it back."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def folder_lock(flag: str, target: str | os.PathLike[str], command: str) -> Iterator[None]:
    """Hold an exclusive lock on ``.<name>.lock`` beside the folder ``target`` (it is replaced
    whole, so the lock cannot live inside it) while the block runs: a second run writing the
    same folder is refused at once (ValidationError naming ``flag``) instead of replacing the
    first one's output with its own while both say "wrote". Released when the block ends or the
    process dies (an flock, like sweep's results file)."""
    import fcntl

    t = _real(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    lock = open(t.parent / f".{t.name}.lock", "a")  # held for the block
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise ValidationError(
            flag,
            f"a folder no other running `{command}` is writing",
            str(target),
            "wait for it to finish, or choose another folder",
        ) from None
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def replace_dir(stage: Path, target: str | os.PathLike[str]) -> Path:
    """Move the complete folder ``stage`` to ``target``, replacing what was there: in one
    atomic exchange where the system has one (Linux), else by two renames (the old folder
    moved aside, then the new one in), so ``target`` never holds a mix of old and new files.
    The old folder is deleted afterwards. A symbolic link as ``target`` stays a link: the
    folder it points to is the one replaced."""
    t = _real(target)
    if not t.exists():
        os.rename(stage, t)
        return t
    if _exchange(stage, t):
        shutil.rmtree(stage, ignore_errors=True)  # stage now holds the old folder
        return t
    aside = Path(tempfile.mkdtemp(prefix=f".{t.name}.old-", dir=t.parent))
    os.rmdir(aside)
    os.rename(t, aside)
    os.rename(stage, t)
    shutil.rmtree(aside, ignore_errors=True)
    return t


def check_replaceable(flag: str, target: str | os.PathLike[str], own: Iterable[str]) -> None:
    """``target`` will be replaced whole: refuse (before any work) a folder that holds anything
    but the files named in ``own`` (a previous output of the same kind), so no other file is
    ever deleted."""
    t = Path(target)
    if not t.is_dir():
        return
    others = sorted(p.name for p in t.iterdir() if p.name not in set(own))
    if others:
        listed = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
        raise ValidationError(
            flag,
            "a new or empty folder, or one holding only a previous report ("
            + ", ".join(sorted(own))
            + ")",
            str(t),
            f"it also holds {listed}, which replacing it would delete",
        )


__all__ = [
    "DATA_SUFFIX",
    "OutputPlan",
    "check_path_name",
    "check_replaceable",
    "figure_data_path",
    "figure_paths",
    "folder_lock",
    "replace_dir",
    "staging_dir",
]
