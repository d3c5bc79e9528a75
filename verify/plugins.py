"""Families and statements from outside packages: entry points and ``--import MODULE``.

A package extends the toolkit by naming modules in its metadata; importing a module registers
what it defines (``@register_family``, ``define_statement``)::

    [project.entry-points."verify.families"]
    my_families = "my_package.families"

    [project.entry-points."verify.statements"]
    my_statement = "my_package.statements.example"

A module that is not installed is named with ``--import MODULE`` (any command) or the
environment variable ``VERIFY_IMPORT`` (comma-separated module names); the command line sets
the variable, so worker processes of a sweep import the same modules. The family registry
loads the families on first look-up, the statement registry loads the statements in
``load_all()``: nothing to call by hand.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterable
from importlib import metadata

from verify.errors import PluginError, ValidationError

FAMILY_GROUP = "verify.families"
STATEMENT_GROUP = "verify.statements"
IMPORT_VARIABLE = "VERIFY_IMPORT"

_loaded: set[str] = set()


def entry_point_modules(group: str) -> list[str]:
    """Module names that installed distributions register under ``group``, sorted."""
    return sorted({ep.value.split(":")[0] for ep in metadata.entry_points(group=group)})


def requested_modules() -> list[str]:
    """The modules named in ``VERIFY_IMPORT``, in order."""
    raw = os.environ.get(IMPORT_VARIABLE, "")
    return [name.strip() for name in raw.split(",") if name.strip()]


def import_modules(names: Iterable[str]) -> list[str]:
    """Import each module once: ValidationError when it cannot be found, PluginError (naming it
    and what it raised) when importing it fails, e.g. a family registered twice, or when it
    calls sys.exit. What a module prints while it is imported goes to stderr."""
    done = []
    for name in names:
        if name in _loaded:
            continue
        try:
            # what a plugin prints while it loads goes to stderr: stdout carries the command's
            # output (--json), which a stray line would corrupt
            with contextlib.redirect_stdout(sys.stderr):
                importlib.import_module(name)
        except SystemExit as exc:  # sys.exit() in a plugin: not the command's exit code
            raise PluginError(f"module {name} called sys.exit({exc.code!r}) on import") from exc
        except ImportError as exc:
            missing = getattr(exc, "name", None)
            if missing and not (name == missing or name.startswith(missing + ".")):
                # the module was found, but one of its own imports failed
                raise PluginError(f"module {name} failed to import: {exc}") from exc
            raise ValidationError(
                "--import", "an importable module (on sys.path or installed)", name, str(exc)
            ) from exc
        except Exception as exc:  # a plugin that breaks on import: one line naming it
            raise PluginError(
                f"module {name} failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        _loaded.add(name)
        done.append(name)
    return done


def request_imports(names: Iterable[str]) -> None:
    """Import ``names`` now and record them in ``VERIFY_IMPORT`` for child processes."""
    names = [n for n in names if n]
    import_modules(names)
    merged = list(dict.fromkeys([*requested_modules(), *names]))
    if merged:
        os.environ[IMPORT_VARIABLE] = ",".join(merged)


def load_plugins(group: str) -> None:
    """Import the entry-point modules of ``group`` and the requested modules."""
    import_modules([*entry_point_modules(group), *requested_modules()])
