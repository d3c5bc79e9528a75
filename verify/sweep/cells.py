"""Cell runners (plain top-level functions, so they pickle) and the record of one run."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from typing import Any

from verify.sweep.grid import cell_key
from verify.validation import check_int

CellRunner = Callable[[dict[str, Any]], dict[str, Any]]


# --------------------------------------------------------------------------------- cell runners
def _profile_summary(table: Any) -> dict[str, Any]:
    import numpy as np

    from verify.boolean import sensitivity_profile
    from verify.boolean.analysis import average_sensitivity_of_profile

    profile = [int(k) for k in sensitivity_profile(table)]  # one pass for both summaries
    return {
        "profile": profile,
        "K0": profile[0],
        "avg_sensitivity": float(average_sensitivity_of_profile(profile)),
        "ones": int(np.count_nonzero(table)),
    }


def random_function_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Baseline: a uniformly random Boolean function on N bits (``default_rng(seed)``), its
    sensitivity profile [K_0..K_N]. E[K_0] = 1 and P[K_0 >= 1] -> 1 - 1/e as N grows."""
    import numpy as np

    n = check_int("n_bits", cell.get("n_bits"), minimum=1, maximum=24)
    rng = np.random.default_rng(check_int("seed", cell.get("seed"), minimum=0))
    table = rng.integers(0, 2, size=1 << n, dtype=np.uint8)
    return {"decided": True, **_profile_summary(table)}


def transformer_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """A random transformer (``init_params(config, scheme, seed, scale)``) on all 2^N strings:
    its certified truth table (``verify.model.certified.truth_table``; float64 with a certified
    error bound, undecided strings redone at high precision) and, when every bit is decided, its
    sensitivity profile [K_0..K_N], K_0 and average sensitivity (total influence, in [0, N]).
    With undecided bits the profile is not computed (``decided: False``)."""
    from verify.model import ModelConfig, init_params
    from verify.model import truth_table as certified_truth_table

    config = ModelConfig(
        d_model=cell["d_model"],
        n_layers=cell["n_layers"],
        n_heads=cell.get("n_heads", 2),
        ln_eps=cell["ln_eps"],
        **cell.get("model", {}),
    )
    params = init_params(config, cell["scheme"], cell["seed"], cell.get("scale", 1.0))
    # "subcube": the sub-cube pass first (verify.model.subcube.subcube_pass; the same labels and
    # counts unless it settles a string the per-string tiers leave open). By default it runs where
    # it can pay (subcube_pays: a quarter of the table's cost buys a bound); true/false force
    subcube = cell.get("subcube")
    if subcube is None:
        from verify.model.subcube.subcube_pass import subcube_pays

        subcube = subcube_pays(params, cell["n_bits"])
    tt = certified_truth_table(params, cell["n_bits"], subcube=bool(subcube))
    counts = tt.counts  # float64 / high_precision / uncertain / undecided
    out: dict[str, Any] = {f"n_{k}": int(v) for k, v in counts.items()}
    out["decided"] = counts["uncertain"] == 0 and counts["undecided"] == 0
    if out["decided"]:
        out.update(_profile_summary(tt.function().table))
    if cell.get("family"):
        out.update(_agreement(tt, cell["family"], cell["n_bits"]))
    return out


def _agreement(tt: Any, family: str, n_bits: int) -> dict[str, Any]:
    """How far the certified labels agree with ``family`` at N: the fraction of strings whose
    label is certified equal to the family's value, and whether the model recognises it (every
    label certified and equal)."""
    import numpy as np

    from verify.boolean import make_family

    target = make_family(family, n_bits).table.astype(np.int8)
    agree = tt.certified & (tt.label == target)
    return {
        "agreement": float(np.count_nonzero(agree)) / target.size,
        "recognises": bool(np.all(agree)),
    }


def family_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """A registered family's default member on N bits: its profile, and whether its declared
    minimum sensitivity (if any) matches."""
    from verify.boolean import get_family, make_family

    n = check_int("n_bits", cell.get("n_bits"), minimum=1, maximum=24)
    fam = get_family(cell["family"])
    out: dict[str, Any] = {"decided": True, **_profile_summary(make_family(fam.name, n).table)}
    if fam.min_sensitivity is not None:
        declared = int(fam.min_sensitivity(n, **fam.defaults))
        measured = next(k for k, c in enumerate(out["profile"]) if c)
        out["declared_min_sensitivity"] = declared
        out["declared_min_sensitivity_holds"] = declared == measured
    return out


RUNNERS: dict[str, CellRunner] = {
    "transformer": transformer_cell,
    "random_function": random_function_cell,
    "family": family_cell,
}


def limit_numba_threads(n: int) -> int:
    """Let Numba's parallel kernels use ``n`` threads in the calling thread (before Numba is
    imported: in the whole process); the number now in force."""
    import sys

    if "numba" not in sys.modules:
        os.environ["NUMBA_NUM_THREADS"] = str(n)
        os.environ.setdefault("OMP_NUM_THREADS", str(n))
    import numba

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    return int(numba.get_num_threads())


def execute_cell(
    runner: CellRunner, cell: dict[str, Any], numba_threads: int | None = None
) -> dict[str, Any]:
    """Run ``runner(cell)`` and wrap it as a results-file record; an exception becomes an
    ``error`` record with its traceback (it is retried when the sweep is restarted).
    ``numba_threads``: the Numba threads the cell may use (recorded in the record)."""
    start = time.perf_counter()
    record: dict[str, Any] = {"key": cell_key(cell), "cell": dict(cell)}
    if numba_threads is not None:
        record["numba_threads"] = limit_numba_threads(numba_threads)
    try:
        if cell.get("imports"):  # --import modules, also on workers of other machines
            from verify.plugins import import_modules

            import_modules(cell["imports"])
        record["result"] = runner(cell)
        record["status"] = "ok"
        record["error"] = None
    except Exception as exc:
        record["result"] = None
        record["status"] = "error"
        record["error"] = {
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(),
        }
    record["runtime_s"] = time.perf_counter() - start
    record["pid"] = os.getpid()
    return record
