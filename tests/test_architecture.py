"""The package's import graph: no cycle, and no arrow from a lower layer to a higher one.

Every ``import`` counts, also those inside functions (a lazy import hides a cycle, it does not
remove it). Layers, from the bottom: validation, the kernel policy and strict-JSON values;
Boolean functions; the model; the kernel cache's warm-up; Hypothesis strategies and the torch
bridge; the registry; the theory (explicit bounds); shared check code; experiments; the
statements; the proof obligations; sweeps; the report (which runs its checks on the sweeps'
executors, so a sweep never imports the report); the command line.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "verify"

LAYERS: list[tuple[str, ...]] = [
    (
        "verify.errors",
        "verify.environment",
        "verify.validation",
        "verify._numba",
        "verify._threads",
        "verify._forkserver",
        "verify._numba_target",
        "verify.plugins",
        "verify.outputs",
        "verify.interrupts",
        "verify.sizes",
        "verify.json_values",
        "verify",
    ),
    ("verify.boolean",),
    ("verify.model",),
    ("verify.kernel_cache",),
    ("verify.strategies", "verify.torch"),
    ("verify.registry",),
    ("verify.theory",),
    ("verify.checks",),
    ("verify.experiments",),
    ("verify.statements",),
    ("verify.proofs",),
    ("verify.sweep",),
    ("verify.report",),
    ("verify.commands", "verify.cli", "verify.__main__"),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """verify.* modules imported anywhere in the file (absolute names)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("verify"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("verify"):
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def graph() -> dict[str, set[str]]:
    """module -> the verify modules it imports (names that are not modules are dropped)."""
    return {m: {i for i in imports_of(p) if i in MODULES and i != m} for m, p in MODULES.items()}


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (prefix != "verify" and module.startswith(prefix + "."))
            if inside and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


def test_no_upward_import() -> None:
    upward = [
        f"{m} (layer {layer_of(m)}) imports {i} (layer {layer_of(i)})"
        for m, targets in graph().items()
        for i in sorted(targets)
        if layer_of(i) > layer_of(m) and m != "verify"
    ]
    assert upward == []


def _package_of(module: str) -> str:
    return module if (MODULES[module].name == "__init__.py") else module.rsplit(".", 1)[0]


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle() -> None:
    """Modules, with each package's __init__ re-exports left out (a package importing its own
    submodules is not a cycle)."""
    g = {
        m: {t for t in ts if not (MODULES[t].name == "__init__.py" and m.startswith(t + "."))}
        for m, ts in graph().items()
        if MODULES[m].name != "__init__.py"
    }
    assert _cycles(g) == []


def _face_names(path: Path) -> set[str]:
    """Packages whose face (``__init__``) the file takes a name from that is not a submodule:
    ``from verify.torch import x`` with no module ``verify.torch.x``."""
    faces: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            face = MODULES.get(node.module)
            if face is not None and face.name == "__init__.py":
                if any(f"{node.module}.{a.name}" not in MODULES for a in node.names):
                    faces.add(node.module)
        elif isinstance(node, ast.Import):
            faces.update(a.name for a in node.names if a.name in MODULES)
    return faces


def test_no_cycle_through_a_package_face() -> None:
    """The cycle test above leaves the faces out; here they are in: a submodule that takes a
    name from its own package's face, whose __init__ imports that submodule (directly or
    through others), is a cycle (the one verify/torch/mapping.py had)."""
    g: dict[str, set[str]] = {}
    for m, path in MODULES.items():
        submodules = {i for i in imports_of(path) if i in MODULES and i != m}
        submodules = {i for i in submodules if MODULES[i].name != "__init__.py"}
        g[m] = submodules | (_face_names(path) - {m})
    assert _cycles(g) == []


@pytest.mark.parametrize("package", ["verify.model", "verify.boolean"])
def test_no_command_code_in_the_bottom_layers(package: str) -> None:
    offenders = [
        m
        for m, p in MODULES.items()
        if m.startswith(package)
        and ("argparse" in p.read_text() or "verify.commands" in p.read_text())
    ]
    assert offenders == []


def test_no_module_over_500_lines() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}


# verify/model/ by tier (issue 41): its packages from the bottom. The spec; the plain float64
# pass; the shared arithmetic; the Numba stages the float64 tiers share; the spec's pass in any
# context (and the arb tier); the tiers; the orchestration over them. A package imports only
# from its own row or below (the exhaustive tier reuses the double-double tier's block norms).
MODEL_LAYERS: list[tuple[str, ...]] = [
    ("spec",),
    ("plain",),
    ("arithmetic",),
    ("stages",),
    ("generic",),
    ("per_string", "subcube"),
    ("double_double",),
    ("exhaustive",),
    ("certified",),
]
MODEL = ROOT / "model"


def _model_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["verify", "model"] else None


def test_every_model_package_has_a_layer() -> None:
    packages = {p.parent.name for p in MODEL.glob("*/__init__.py")}
    assert packages == {name for row in MODEL_LAYERS for name in row}
    assert sorted(p.name for p in MODEL.glob("*.py")) == ["__init__.py"]  # no loose modules


def test_no_upward_import_inside_the_model() -> None:
    row = {name: i for i, names in enumerate(MODEL_LAYERS) for name in names}
    upward = [
        f"{m} imports {t}"
        for m, targets in graph().items()
        if (a := _model_package(m))
        for t in sorted(targets)
        if (b := _model_package(t)) and row[b] > row[a]
    ]
    assert upward == []


def test_no_two_model_modules_share_a_name() -> None:
    """A reader finds a module by its name: no two files of verify/model/ are called alike."""
    names = Counter(p.name for p in MODEL.rglob("*.py") if p.name != "__init__.py")
    assert sorted(n for n, c in names.items() if c > 1) == []


@pytest.mark.parametrize("package", sorted(name for row in MODEL_LAYERS for name in row))
def test_each_model_package_is_documented(package: str) -> None:
    """Its __init__ says what it holds; docs/model.md has a section listing its files, and
    docs/architecture.md's map names it."""
    doc = ast.get_docstring(ast.parse((MODEL / package / "__init__.py").read_text()))
    assert doc and len(doc.split()) >= 8, package
    model_md = (ROOT.parent / "docs" / "model.md").read_text()
    heading = next((ln for ln in model_md.splitlines() if f"(`{package}/`" in ln), "")
    assert heading.startswith("### "), f"docs/model.md: no section for {package}/"
    section = model_md.split(heading, 1)[1].split("\n###", 1)[0]
    missing = [
        p.name
        for p in sorted((MODEL / package).glob("*.py"))
        if p.name != "__init__.py" and f"`{p.name}`" not in section
    ]
    assert missing == [], f"docs/model.md, {package}/: no row for {missing}"
    assert f"`{package}/" in (ROOT.parent / "docs" / "architecture.md").read_text()
