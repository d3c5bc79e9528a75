"""Families and statements from outside packages (issue: extending from the user's own code).

A small package is "installed" by putting it and its ``.dist-info`` (with entry points) on
PYTHONPATH; the command line, a sweep's worker processes and the report then see its family
with no edit to verify/. ``--import MODULE`` does the same for a module that is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verify import plugins
from verify.boolean import families, get_family
from verify.errors import ValidationError
from verify.registry import CheckContext, Status, core, run_check, slugify

STATEMENT = "Sec 5 declared families"
CHECK = "declared facts against exhaustive profiles"

FAMILY_MODULE = '''
"""An outside package's family: x_1 AND x_2, with its declarations."""
import sympy as sp

from verify.boolean import BooleanFunction, register_family
from verify.boolean.closed_forms import N, n
from verify.errors import ValidationError

DECLARED_MIN = {declared_min}


def closed_form(n_bits):
    half = 2 ** (N - 2)
    levels = ((half, sp.Eq(n, 0)), (2 * half, sp.Eq(n, 1)), (half, sp.Eq(n, 2)))
    return sp.Piecewise(*levels, (0, True))


def validate(n_bits):
    if n_bits < 2:
        raise ValidationError("N", "at least 2 bits", n_bits)


@register_family(
    "ext_and_two",
    closed_form=closed_form,
    min_sensitivity=lambda n_bits: DECLARED_MIN,
    validate=validate,
)
def ext_and_two(n_bits):
    """x_1 AND x_2."""
    return BooleanFunction.from_callable(n_bits, lambda b: b[:, 0] & b[:, 1])
'''


def make_site(root: Path, declared_min: int = 0) -> Path:
    """A folder holding package ``extfams`` and its installed metadata (entry points)."""
    site = root / "site"
    (site / "extfams").mkdir(parents=True)
    (site / "extfams" / "__init__.py").write_text(FAMILY_MODULE.format(declared_min=declared_min))
    meta = site / "extfams-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: extfams\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[verify.families]\nextfams = extfams\n")
    return site


def run_verify(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path.cwd())])}
    env.pop(plugins.IMPORT_VARIABLE, None)
    return subprocess.run(
        [sys.executable, "-m", "verify", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_site(tmp_path_factory.mktemp("outside"))


def test_profile_sees_an_installed_family(site: Path, tmp_path: Path) -> None:
    out = run_verify(site, "profile", "--family", "ext_and_two", "-N", "6", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["K_0"] == 2 ** (6 - 2)
    assert summary["closed_form_agrees"] and summary["declared_min_sensitivity_agrees"]


def test_sweep_workers_see_an_installed_family(site: Path, tmp_path: Path) -> None:
    results = tmp_path / "s.jsonl"
    out = run_verify(
        site,
        "sweep",
        "--kind",
        "family",
        "--family",
        "ext_and_two",
        "-N",
        "3",
        "5",
        "--out",
        str(results),
        "-j",
        "2",
        "--no-progress",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert {r["cell"]["n_bits"]: r["result"]["K0"] for r in records} == {3: 2, 5: 8}
    assert all(r["result"]["declared_min_sensitivity_holds"] for r in records)


def test_report_checks_an_installed_familys_declarations(site: Path, tmp_path: Path) -> None:
    out = run_verify(
        site,
        "report",
        "--quick",
        "--only",
        "Sec 5 declared families",
        "--out",
        str(tmp_path / "r"),
        "--no-progress",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (stmt,) = json.loads((tmp_path / "r" / "report.json").read_text())["statements"]
    (check,) = stmt["checks"]
    assert "ext_and_two" in check["parameters"]["families"]
    assert stmt["status"] == "holds"
    assert any(r["label"].startswith("ext_and_two(N=") for r in check["rows"])


def test_a_wrong_declaration_is_a_violation(tmp_path: Path) -> None:
    """The declared-facts check can fail: a family declaring min sensitivity 1 for x_1 AND x_2
    (whose true minimum is 0) is reported as violated by the registered check."""
    site = make_site(tmp_path, declared_min=1)
    code = textwrap.dedent(
        """
        import pathlib
        from verify.registry import CheckContext, counterexamples, run_check
        counterexamples.COUNTEREXAMPLES = pathlib.Path("cex")  # not the repository's folder
        r = run_check("Sec 5 declared families", "declared facts against exhaustive profiles",
                      CheckContext(budget="quick"))
        print(r.status.value, [row.label for row in r.rows if not row.ok][:1])
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path.cwd())])}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("violated ['ext_and_two(N=2): min_x s(x)"), out.stdout
    saved_file = tmp_path / "cex" / f"{slugify(STATEMENT)}_{slugify(CHECK)}.json"
    saved = json.loads(saved_file.read_text())
    assert saved["failing_rows"][0]["label"].startswith("ext_and_two(N=2)")


def test_import_option_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_local_fams.py").write_text(FAMILY_MODULE.format(declared_min=0))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.IMPORT_VARIABLE, "")  # restored (removed) after the test
    monkeypatch.setattr(families, "_FAMILIES", dict(families._FAMILIES))
    plugins.request_imports(["my_local_fams"])
    assert get_family("ext_and_two").declared == ["closed_form", "min_sensitivity", "validate"]
    assert os.environ[plugins.IMPORT_VARIABLE] == "my_local_fams"  # seen by child processes
    with pytest.raises(ValidationError, match="--import"):
        plugins.request_imports(["no_such_module_here"])


def test_statement_registry_isolated_from_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """An emptied STATEMENT_PACKAGES loads nothing (the tests' isolated registries)."""
    monkeypatch.setattr(core, "_STATEMENTS", {})
    monkeypatch.setattr(core, "STATEMENT_PACKAGES", [])
    assert core.all_statements() == []


def test_declared_families_check_holds_on_the_built_ins() -> None:
    result = run_check(
        "Sec 5 declared families",
        "declared facts against exhaustive profiles",
        CheckContext(budget="quick"),
    )
    assert result.status is Status.HOLDS
    assert {"parity", "sparse_parity", "dictator", "first"} <= set(
        result.parameters["flagged_by_cor_4_6"]
    )
