"""The order a parallel report hands its checks to the workers: longest first.

With W workers taking tasks in submission order, submitting the longest first (LPT) bounds the
wall time by 4/3 of the best schedule's, where the report's serial order can leave one worker
with Thm 4.5's 15 s check at the end while the other idles. The costs are the checks'
``runtime_s`` recorded in earlier reports of the same budget (the previous report in the
output folder, then the committed example report); a check with no record costs the mean of
the recorded ones. Checks that share an in-process result (``Check.shares``, e.g. the trained
models of H&R Cor 5 and Thm 6) form one task, run in one worker one after another, so the
result is computed once. The order changes no number: each check runs in a fresh context with
the report's seed, and the outcomes are kept in the serial order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# the key of the Derivation section's recorded cost (report.json's derivations.task_s: the
# whole task with the obligations' loading and the blueprint figure; else .seconds, the
# obligations alone, in reports written before it was recorded)
DERIVATIONS = ("", "derivations")


def recorded_costs(reports: Iterable[str | Path], budget: str) -> dict[tuple[str, str], float]:
    """``runtime_s`` of each (statement id, check name), and of the Derivation section under
    :data:`DERIVATIONS`, from the report.json files ``reports`` run at ``budget`` (files that
    are missing, unreadable or of another budget are skipped; an earlier file wins)."""
    costs: dict[tuple[str, str], float] = {}
    for path in reports:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            if doc["run"]["budget"] != budget:
                continue
            found = {
                (st["id"], c["name"]): float(c["runtime_s"])
                for st in doc["statements"]
                for c in st["checks"]
            }
            derived = doc.get("derivations") or {}
            seconds = derived.get("task_s", derived.get("seconds"))
            if seconds is not None:
                found[DERIVATIONS] = float(seconds)
        except (OSError, ValueError, KeyError, TypeError):  # no usable record: no costs from it
            continue
        for key, value in found.items():
            costs.setdefault(key, value)
    return costs


def plan_tasks(
    keys: Sequence[tuple[str, str]],
    shares: Sequence[str],
    costs: Mapping[tuple[str, str], float],
) -> list[tuple[float, list[int]]]:
    """Tasks (estimated cost, indices into ``keys``) for the checks ``keys`` ((statement id,
    check name), in serial order) whose ``shares`` tags are given alongside: the checks with
    one non-empty tag form one task (in serial order), every other check a task of its own;
    sorted by decreasing cost (a task's is the sum of its checks'), ties in serial order."""
    known = [float(v) for k, v in costs.items() if k != DERIVATIONS]
    default = sum(known) / len(known) if known else 1.0
    groups: dict[str, list[int]] = {}
    tasks: list[list[int]] = []
    for i, tag in enumerate(shares):
        if tag and tag in groups:
            groups[tag].append(i)
            continue
        tasks.append([i])
        if tag:
            groups[tag] = tasks[-1]
    costed = [(sum(float(costs.get(keys[i], default)) for i in t), t) for t in tasks]
    return sorted(costed, key=lambda ct: (-ct[0], ct[1][0]))
