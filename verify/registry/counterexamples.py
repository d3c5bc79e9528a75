"""Where counterexamples live and the one function that writes them.

A violated bound leaves ``theorems/counterexamples/<stem>.json`` (statement, check, seed, the
setting that rebuilds the case, the failing rows) and, when the check handed over
parameters, ``<stem>.npz`` in the model-spec format (``verify.model.Params.load`` reads it).
The files are deterministic (no timestamps, no budget: the setting alone rebuilds the case), so a
reproduced finding leaves the tree unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.registry.results import Counterexample, Row, _json_default


def repository_root() -> Path:
    """The checkout's root (the folder holding ``verify/`` and ``theorems/``)."""
    return Path(__file__).resolve().parents[2]


COUNTEREXAMPLES = repository_root() / "theorems" / "counterexamples"


def save_counterexample(
    case: Counterexample,
    *,
    statement_id: str,
    check_name: str,
    default_stem: str,
    seed: int,
    failing: Sequence[Row],
    directory: Path | None = None,
) -> str:
    """Write ``case`` as ``<stem>.json`` (+ ``<stem>.npz``); return the main file's path from the
    repository root (the .npz when there are parameters, else the .json)."""
    root = directory if directory is not None else COUNTEREXAMPLES
    root.mkdir(parents=True, exist_ok=True)
    stem = case.stem or default_stem
    record: dict[str, Any] = {
        "statement": statement_id,
        "check": check_name,
        "seed": seed,
        "setting": case.setting,
        "failing_rows": [
            {"label": r.label, "measured": r.measured, "bound": r.bound, "relation": r.relation}
            for r in failing
        ],
    }
    main = root / f"{stem}.json"
    if case.params is not None:
        main = root / f"{stem}.npz"
        case.params.save(main)
        record["params"] = main.name
    text = json.dumps(record, indent=1, sort_keys=True, default=_json_default) + "\n"
    (root / f"{stem}.json").write_text(text)
    try:
        return str(main.relative_to(repository_root()))
    except ValueError:
        return str(main)
