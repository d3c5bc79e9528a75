"""``python -m verify new-family NAME``: write a family module and its test, ready to extend.

The module registers NAME with ``@register_family`` and declares what it knows (a closed-form
profile, the minimum sensitivity); the test checks the declarations against exhaustive
profiles. The toolkit sees the family with ``--import NAME`` (module on sys.path), or through
an entry point once it lives in an installed package (docs/extending.md, "A family from your
own package").
"""

from __future__ import annotations

import argparse
import keyword
import sys
from pathlib import Path

MODULE = '''"""The Boolean family {name!r} (written by `python -m verify new-family {name}`).

Replace the truth function and the declarations with your own: every declaration is checked
against the exhaustive profile by test_{name}.py and by the statement "Sec 5 declared families"
(`python -m verify report --import {name} --only "Sec 5 declared families"`).
"""

from __future__ import annotations

import sympy as sp

from verify.boolean import BooleanFunction, register_family
from verify.boolean.closed_forms import N, n


def closed_form(n_bits: int) -> sp.Expr:
    """K_n(N) of x_1 AND x_2: the 2^(N-2) strings with x_1 = x_2 = 0 have s = 0, the 2^(N-2)
    with x_1 = x_2 = 1 have s = 2, and the 2^(N-1) others s = 1."""
    half = 2 ** (N - 2)
    levels = ((half, sp.Eq(n, 0)), (2 * half, sp.Eq(n, 1)), (half, sp.Eq(n, 2)))
    return sp.Piecewise(*levels, (0, True))


def min_sensitivity(n_bits: int) -> int:
    """min_x s(x) = 0 (at x_1 = x_2 = 0)."""
    return 0


def validate(n_bits: int) -> None:
    """The function reads two bits."""
    from verify.errors import ValidationError

    if n_bits < 2:
        raise ValidationError("N", "at least 2 bits for {name}", n_bits)


@register_family(
    "{name}", closed_form=closed_form, min_sensitivity=min_sensitivity, validate=validate
)
def {name}(n_bits: int) -> BooleanFunction:
    """x_1 AND x_2 (a placeholder: replace with your function)."""
    return BooleanFunction.from_callable(n_bits, lambda bits: bits[:, 0] & bits[:, 1])
'''

TEST = '''"""Checks the declarations of the family {name!r} against exhaustive profiles."""

import numpy as np
import pytest

import {name}  # noqa: F401  (registers the family)
from verify.boolean import closed_form_profile, get_family, make_family, sensitivity_profile


@pytest.mark.parametrize("n_bits", range(2, 13))
def test_declarations_match_the_exhaustive_profile(n_bits: int) -> None:
    profile = sensitivity_profile(make_family("{name}", n_bits))
    np.testing.assert_array_equal(closed_form_profile("{name}", n_bits), profile)
    declared = get_family("{name}").min_sensitivity(n_bits)
    assert declared == int(np.flatnonzero(profile)[0])
'''


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "new-family",
        help="write a Boolean family module and its test (a template to extend)",
        description=__doc__.splitlines()[0].split(": ", 1)[1],
    )
    p.add_argument("name", metavar="NAME", help="the family (and module) name: a Python name")
    p.add_argument(
        "--dir", default=".", metavar="DIR", help="where to write NAME.py and test_NAME.py (.)"
    )
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=run)


def check_name_free(name: str, directory: Path) -> None:
    """Refuse (exit 2) a family name already registered (built in, or from a plugin) and a module
    name that is already importable from elsewhere (NAME.py would shadow it, or be shadowed)."""
    import importlib.util

    from verify.boolean import family_names
    from verify.errors import ValidationError

    if name in family_names():
        raise ValidationError("NAME", "a family name not yet registered", name, "it is taken")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    origin = getattr(spec, "origin", None)
    if spec is not None and (
        origin is None or Path(origin).parent.resolve() != directory.resolve()
    ):
        where = origin or "a built-in module"
        raise ValidationError(
            "NAME", "a module name not yet importable", name, f"it would shadow {where}"
        )


def run(args: argparse.Namespace) -> int:
    from verify.errors import ValidationError

    name = args.name
    if not name.isidentifier() or name.startswith("_") or keyword.iskeyword(name):
        raise ValidationError("NAME", "a Python identifier not starting with _", name)
    directory = Path(args.dir)
    if not directory.is_dir():
        raise ValidationError("--dir", "an existing directory", str(directory))
    check_name_free(name, directory)
    targets = {directory / f"{name}.py": MODULE, directory / f"test_{name}.py": TEST}
    existing = [str(p) for p in targets if p.exists()]
    if existing and not args.force:
        raise ValidationError("NAME", "files that do not exist yet (or --force)", existing)
    for path, template in targets.items():
        path.write_text(template.format(name=name))
        print(f"wrote {path}")
    print(
        f"next: python -m verify profile --import {name} --family {name} -N 8"
        f"  (with {directory} on PYTHONPATH); pytest {directory / f'test_{name}.py'}",
        file=sys.stderr,
    )
    return 0
