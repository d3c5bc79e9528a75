"""check-model's certified table: what is read off it (:func:`table_results`, whichever way it
was computed), and ``--executor``: the table in sub-cubes on workers (verify.model.certified.cube),
its size and time estimate printed before any work, and the N limits of the two ways."""

from __future__ import annotations

import argparse
from typing import Any

from verify.commands._user_model import prediction_agreement
from verify.errors import ValidationError

MAX_LOCAL_N = 20  # in this process: every string's diagnostics are kept (about 1.5 KB each)
MAX_CUBE_N = 30  # with --executor: the gathered table (a few bytes a string) stays here
NOT_ON_EXECUTOR = {
    "statement": "all",
    "applies": False,
    "says": "not evaluated with --executor: the blowup and the statements' measurements need"
    " every string's forward pass at every position and pair strings of different"
    " sub-cubes; run without --executor (N <= 20) for them",
}


def executor_spec(args: argparse.Namespace) -> str | None:
    """--executor as given (None: everything in this process), checked with -j."""
    from verify.sweep.executors import check_executor_spec

    if args.executor is None:
        if args.jobs is not None:
            raise ValidationError("-j/--jobs", "-j only with --executor", args.jobs)
        return None
    spec, remote = check_executor_spec("--executor", args.executor)
    if remote and args.jobs is not None:
        raise ValidationError(
            "-j/--jobs", "no -j with a running cluster (its workers are fixed)", args.jobs
        )
    return spec


def _remote(spec: str) -> bool:
    return spec.startswith(("dask://", "tcp://", "ray://", "ray:"))


def cube_estimate(
    args: argparse.Namespace, params: Any, n_bits: int, executor: str | None, module: Any = None
) -> Any:
    """With --executor: the size and time of the split table (``verify.sizes``), printed before
    any work (to stderr with --json) and refused beyond the machine (exit 2) without
    --allow-large. A running cluster's workers are not known before it answers: its estimate
    is for one worker. Above N = 20 the user's ``module`` is refused: its comparison runs the
    spec pass on every string in this process."""
    import os
    import sys

    from verify.model.certified.cube import choose_prefix_bits
    from verify.sizes import check_model_estimate, check_size

    if executor is None:
        return None
    if module is not None and n_bits > MAX_LOCAL_N:
        raise ValidationError(
            "-N",
            f"N <= {MAX_LOCAL_N} with --module or --trust-pickle (the module is compared with"
            " the spec pass on every string in this process)",
            n_bits,
            "give the module's own outputs on strings of your choice with --reference-logits",
        )
    cfg = params.config
    workers = 1 if _remote(executor) else (args.jobs or os.cpu_count() or 1)
    k = choose_prefix_bits(n_bits, workers)
    est = check_model_estimate(
        n_bits, cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_layers, cfg.seq_len(n_bits),
        workers, 1 << (n_bits - k),
    )  # fmt: skip
    text = est.text() + ("; divide the time by the cluster's workers" if _remote(executor) else "")
    print(f"estimate: {text}", file=sys.stderr if args.json else sys.stdout, flush=True)
    return check_size("-N", est, args.allow_large)


def table_on_executor(
    args: argparse.Namespace,
    params: Any,
    n_bits: int,
    executor: str,
    estimate: Any,
    out: dict[str, Any],
) -> Any:
    """The certified table of all 2^N strings computed in sub-cubes on ``executor``
    (``verify.model.certified.cube.certify_on_executor``); how it ran goes to ``out["executor"]``.
    The per-string diagnostics (blowup, the statements' measurements) are not computed
    (:data:`NOT_ON_EXECUTOR`)."""
    import concurrent.futures as cf
    import sys
    import time

    from verify.model.certified.cube import SubcubeLost, certify_on_executor
    from verify.sweep.executors import open_executor

    start = time.perf_counter()
    with open_executor(executor, jobs=args.jobs) as handle:
        setup = time.perf_counter() - start
        try:
            table = certify_on_executor(params, n_bits, handle.executor, handle.slots)
        except (SubcubeLost, cf.BrokenExecutor) as exc:  # nothing certified: one line, exit 1
            why = str(exc) or type(exc).__name__
            if isinstance(exc, cf.BrokenExecutor):
                why = f"the executor broke ({why}): a worker process died; run the command again"
            print(f"python -m verify check-model: error: {why}", file=sys.stderr)
            raise SystemExit(1) from exc
        where = handle.description
    out["executor"] = {
        "where": where,
        "subcubes": 1 << table.prefix_bits,
        "prefix_bits": table.prefix_bits,
        "resubmitted": table.resubmitted,
        "wall_s": round(time.perf_counter() - start, 3),
        "setup_s": round(setup, 3),
        "worker_s": round(table.worker_seconds, 3),
        "worker_cpu_s": round(table.worker_cpu_seconds, 3),
        "estimate_s": round(estimate.seconds, 1),
        "tiers": table.tiers,
    }
    return table


def table_results(
    table: Any, n_bits: int, family: Any = None, signs: Any = None, threshold: float = 0.0
) -> dict[str, Any]:
    """What check-model reads off the certified table alone: the counts, the profile, K_0 and
    the average sensitivity (every bit certified), the agreement with ``family`` and with the
    user's module's predictions at ``threshold``. ``table``: a ``CertifiedTruthTable`` or a
    gathered one (``verify.model.certified.cube.GatheredTable``)."""
    import numpy as np

    from verify.boolean import sensitivity_profile
    from verify.boolean.analysis import average_sensitivity

    label = table.label
    out: dict[str, Any] = {
        "truth_table": {
            "strings": int(2**n_bits),
            "float64": int(table.n_float64),
            "high_precision": int(table.n_high_precision),
            "uncertain": int(table.n_uncertain),
            "ones": int(np.count_nonzero(label == 1)),
            "zeros": int(np.count_nonzero(label == 0)),
        }
    }
    f = table.function() if table.n_uncertain == 0 else None
    if f is not None:
        prof = sensitivity_profile(f)
        out["profile"] = [int(v) for v in prof]
        out["K0"] = int(prof[0])
        out["avg_sensitivity"] = float(average_sensitivity(f))
    if family is not None:
        agree = (label == family.table) & table.certified
        out["family"] = {
            "name": family.name,
            "agree": int(np.sum(agree)),
            "of": int(2**n_bits),
            "first_disagreements": [_string(i, n_bits) for i in np.flatnonzero(~agree)[:5]],
            "avg_sensitivity": float(average_sensitivity(family)),
            "K0": int(sensitivity_profile(family)[0]),
        }
    if signs is not None:
        out["module_predictions"] = prediction_agreement(signs, table, threshold)
    return out


def _string(index: int, n_bits: int) -> str:
    """The string of ``index``, x_1 first (bit n of the index is x_{n+1})."""
    return "".join(str((int(index) >> n) & 1) for n in range(n_bits))
