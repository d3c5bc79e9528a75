"""The derivation suite, generated: ``theorems/test_derivation_<slug>.py`` holds one line,
``test_derivation_lemma_2_9 = derivation_test("Lemma 2.9")``: one test per obligation of the
statement, which discharges it and refutes its weakened twin (``python -m verify prove --only
"Lemma 2.9"`` does the same from the command line). Regenerate with
``python -m verify.proofs.testing`` (writes the missing modules; ``--overwrite`` all)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from verify.proofs.core import Obligation, discharge
from verify.proofs.runner import STATEMENTS, load, statement_slug
from verify.registry.testing import THEOREMS, generator_main, write_modules

__all__ = [
    "derivation_module_path",
    "derivation_module_text",
    "derivation_test",
    "write_derivation_modules",
]

PREFIX = "test_derivation_"


def derivation_test(statement: str) -> Callable[..., None]:
    """A pytest test parametrised over the obligations of ``statement``."""
    obs = [ob for ob in load() if ob.statement == statement]
    if not obs:
        raise ValueError(f"no obligations for {statement!r}")

    @pytest.mark.parametrize("ob", obs, ids=[ob.id.split(".", 1)[1] for ob in obs])
    def test(ob: Obligation) -> None:
        out = discharge(ob)
        print(
            f"{ob.id}: {out.verdict.status} ({out.verdict.detail}); twin {out.twin.status}"
            f" {out.twin.point or ''}"
        )
        assert out.verdict.status == "proved", (out.verdict.detail, out.verdict.point)
        assert out.twin.status == "refuted", out.twin.detail

    test.__doc__ = f"{statement}: every derivation step's obligation and its weakened twin."
    return test


def derivation_module_path(statement: str, directory: Path = THEOREMS) -> Path:
    return directory / f"{PREFIX}{statement_slug(statement)}.py"


def derivation_module_text(statement: str) -> str:
    """The generated module of ``statement``: a docstring and one line."""
    return (
        f'"""{statement}: the derivation steps as proof obligations (docs/proofs.md).\n\n'
        'Generated from verify.proofs; regenerate with `python -m verify.proofs.testing`."""\n\n'
        "from verify.proofs.testing import derivation_test\n\n"
        f'{PREFIX}{statement_slug(statement)} = derivation_test("{statement}")\n'
    )


def write_derivation_modules(directory: Path = THEOREMS, *, overwrite: bool = False) -> list[Path]:
    """Write the module of every statement with obligations that has none (all with
    ``overwrite``); return the paths written."""
    return write_modules(
        (
            (derivation_module_path(st, directory), functools.partial(derivation_module_text, st))
            for st in STATEMENTS
        ),
        overwrite=overwrite,
    )


if __name__ == "__main__":
    generator_main(write_derivation_modules)
