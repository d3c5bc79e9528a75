"""Training experiment (Hahn & Rofin, arXiv 2402.09963, Sec. 5-6 in spirit): train the spec's
transformer on PARITY, sparse PARITY, MAJORITY, FIRST and DICTATOR at several N, then measure
what their theory speaks about.

Training (optional extra ``torch``; CPU; seeded): :class:`verify.torch.SpecTransformer` in
float32 (the weights are then read exactly into float64 spec parameters), post-LN, eps 1e-5,
learned positions, eos readout; AdamW on the MSE loss with targets +-1 (threshold 0; H&R train on
0/1 targets with threshold 0.5: ``targets="01"``), on fresh
uniform random strings every step (for 2^N beyond a batch this is a sampled training set; for
small N every string is seen many times). Torch's RNG is seeded for the initialisation and a
``torch.Generator`` for the batches.

Each trained model gives one record (a JSON line, see :func:`evaluate`): the certified truth
table (``verify.model.certified.truth_table``) over all 2^N strings when N <= ``exhaustive_max``,
else a sampled table with a Clopper-Pearson interval; accuracy against the target; average
sensitivity, profile and K_0 of the computed function; beta and beta_hr
(``verify.model.plain.forward`` diagnostics); the parameter norm; H&R's sharpness (mean MSE increase
under N(0, 0.02^2) noise on every parameter but the positions); the H&R Cor 5 comparison (2 xi
as_N(f) against
||w|| C_infl E[beta^2], exhaustive N only). :func:`figures` draws blowup, sharpness, accuracy
and sensitivity against N per function.

Targets: ``sparse_parity`` is the xor of x_1..x_3 (the family's default m = 3), ``dictator`` is
x_i with i = N // 2 + 1 (a middle bit; ``first`` is x_1), ``majority`` is [sum x >= N//2 + 1].
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from verify.boolean import make_family, sensitivity_profile
from verify.boolean.analysis import average_sensitivity
from verify.boolean.function import all_bit_strings
from verify.boolean.sampling import clopper_pearson, estimate_profile
from verify.checks.hahn_rofin import gaussian_sharpness, measure_tradeoff, parameter_norm_sq
from verify.errors import ValidationError
from verify.experiments import train_cache
from verify.experiments.train_tables import (  # noqa: F401 - the public names, as before
    TABLE_COLUMNS,
    figures,
    summary_line,
    summary_table,
)
from verify.model import ModelConfig, Params, forward, truth_table
from verify.validation import check_choice, check_int, check_real

__all__ = [
    "FUNCTIONS",
    "TrainSettings",
    "evaluate",
    "family_params",
    "figures",
    "read_records",
    "run_experiment",
    "summary_line",
    "summary_table",
    "target_labels",
    "train_model",
]

FUNCTIONS = ("parity", "sparse_parity", "majority", "first", "dictator")
TARGETS = ("pm1", "01")  # MSE target conventions (TrainSettings.targets)


def family_params(function: str, n_bits: int) -> dict[str, Any]:
    """The ``make_family`` parameters of the experiment's target (module doc)."""
    check_choice("function", function, FUNCTIONS)
    if function == "sparse_parity":
        return {"m": min(n_bits, 3)}
    if function == "dictator":
        return {"i": n_bits // 2 + 1}
    if function == "majority":
        return {"tie": "zero"}
    return {}


def target_labels(function: str, bits: np.ndarray) -> np.ndarray:
    """The target's 0/1 labels of the rows of ``bits`` (any N; equals the family's table)."""
    check_choice("function", function, FUNCTIONS)
    b = np.asarray(bits, dtype=np.int64)
    n = b.shape[1]
    if function == "parity":
        out = b.sum(axis=1) % 2
    elif function == "sparse_parity":
        out = b[:, : min(n, 3)].sum(axis=1) % 2
    elif function == "majority":
        out = b.sum(axis=1) >= n // 2 + 1
    elif function == "first":
        out = b[:, 0]
    else:
        out = b[:, n // 2]
    return np.asarray(out, dtype=np.uint8)


@dataclass(frozen=True)
class TrainSettings:
    """Architecture, optimisation and measurement settings of one training run."""

    d_model: int = 16
    n_layers: int = 2
    n_heads: int = 2
    d_ff: int = 32
    ln_eps: float = 1e-5
    norm_first: bool = False
    steps: int = 1500
    batch: int = 256
    lr: float = 3e-3
    weight_decay: float = 0.0
    targets: str = "pm1"  # MSE targets: "pm1" (-1/+1, threshold 0) or "01" (H&R's, threshold 0.5)
    max_len: int = 32
    exhaustive_max: int = 16  # certified truth table over all 2^N strings up to this N
    tradeoff_max: int = 12  # the exhaustive H&R Cor 5 comparison up to this N
    eval_samples: int = 4096  # sampled table beyond exhaustive_max
    sigma: float = 0.02  # H&R's sharpness noise
    sharpness_repeats: int = 10
    sharpness_strings: int = 1024  # strings of the sharpness loss (all when 2^N is fewer)
    threads: int = 1  # torch intra-op threads while training (small models: 1 is fastest)

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layers", "n_heads", "d_ff", "steps", "batch", "max_len"):
            check_int(name, getattr(self, name), minimum=1)
        check_real("ln_eps", self.ln_eps, minimum=0.0)
        check_real("lr", self.lr, strictly_positive=True)
        check_real("sigma", self.sigma, strictly_positive=True)
        check_choice("targets", self.targets, TARGETS)

    def model_config(self) -> ModelConfig:
        return ModelConfig(
            d_model=self.d_model,
            n_layers=self.n_layers,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            ln_eps=self.ln_eps,
            norm_first=self.norm_first,
            eos=True,
            pos_encoding="learned",
            embedding="add",
            max_len=self.max_len,
            threshold=0.5 if self.targets == "01" else 0.0,
        )


@dataclass
class TrainResult:
    params: Params
    final_loss: float
    seconds: float
    losses: list[float] = field(default_factory=list)


def train_model(
    function: str, n_bits: int, settings: TrainSettings = TrainSettings(), seed: int = 0
) -> TrainResult:
    """Train the spec's transformer on ``function`` at length N (module doc); seeded."""
    from verify.torch import _require_torch

    _require_torch()
    import torch

    check_choice("function", function, FUNCTIONS)
    n = check_int("N", n_bits, minimum=1, maximum=settings.max_len)
    seed = check_int("seed", seed, minimum=0)
    cfg = settings.model_config()
    before = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        return _train(function, n, settings, seed, cfg)
    finally:
        torch.set_num_threads(before)


def _train(function: str, n: int, settings: TrainSettings, seed: int, cfg: ModelConfig):
    import torch

    from verify.torch import SpecTransformer, from_torch

    torch.manual_seed(seed)
    module = SpecTransformer(cfg).float()
    with torch.no_grad():  # nn.Embedding's N(0, 1) for the tables, nn.Linear's for the head
        module.token_embedding.normal_(0.0, 1.0)
        module.pos_embedding.normal_(0.0, 1.0)
        bound = 1.0 / math.sqrt(cfg.d_model)
        module.readout.weight.uniform_(-bound, bound)
        module.readout.bias.uniform_(-bound, bound)
    module.train()
    opt = torch.optim.AdamW(module.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    gen = torch.Generator().manual_seed(seed + 1)
    eos = torch.full((settings.batch, 1), 2, dtype=torch.int64)
    start = time.perf_counter()
    losses = []
    for _ in range(settings.steps):
        x = torch.randint(0, 2, (settings.batch, n), generator=gen)
        y = torch.from_numpy(target_labels(function, x.numpy())).float()
        if settings.targets == "pm1":
            y = y * 2.0 - 1.0
        tokens = torch.cat([x, eos], dim=1)
        out = module.readout(_final_vector(module, tokens))
        loss = torch.mean((out - y) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    module.eval()
    params = from_torch(module.double())
    tail = losses[-max(1, len(losses) // 20) :]
    return TrainResult(params, float(np.mean(tail)), time.perf_counter() - start, losses)


def _final_vector(module: Any, tokens: Any) -> Any:
    """SpecTransformer.final_vector from ready tokens (skips the per-call validation)."""
    tok = module.token_embedding[tokens]
    y = tok + module.pos_embedding[: tokens.shape[1]]
    for layer in module.layers:
        y = layer(y)
    yr = y[:, -1]
    return module.final_norm(yr) if module.config.final_norm else yr


# ----------------------------------------------------------------------------- evaluation
# the H&R Cor 5 measurements (verify.checks.hahn_rofin.measure_tradeoff) a record keeps
TRADEOFF_KEYS = ("xi", "avg_sensitivity", "mean_beta_sq", "w_norm", "log10_c_infl", "lhs",
                 "log10_bound", "sensitive_dT", "factor")  # fmt: skip


def evaluate(
    params: Params,
    function: str,
    n_bits: int,
    settings: TrainSettings = TrainSettings(),
    seed: int = 0,
) -> dict[str, Any]:
    """One record of measurements of a trained model (module doc); keys are documented in
    docs/torch.md ("Training experiment")."""
    n = check_int("N", n_bits, minimum=1)
    rec: dict[str, Any] = {"function": function, "N": n, "seed": seed}
    rec["family_params"] = family_params(function, n)
    exhaustive = n <= settings.exhaustive_max
    rec["exhaustive"] = exhaustive
    if exhaustive:
        target = make_family(function, n, **family_params(function, n))
        rec["as_target"] = float(average_sensitivity(target))
        table = truth_table(params, n)
        rec["certified"] = {
            "float64": int(table.n_float64),
            "high_precision": int(table.n_high_precision),
            "uncertain": int(table.n_uncertain),
        }
        label = np.where(table.label == 1, 1, 0)  # uncertain strings counted as wrong below
        ok = (label == target.table) & table.certified
        rec["accuracy"] = float(np.mean(ok))
        rec["accuracy_ci"] = [rec["accuracy"], rec["accuracy"]]
        if table.n_uncertain == 0:
            f = table.function()
            prof = sensitivity_profile(f)
            rec["as_model"] = float(average_sensitivity(f))
            rec["profile"] = [int(v) for v in prof]
            rec["K0"] = int(prof[0])
        else:
            rec["as_model"] = None
            rec["profile"] = None
            rec["K0"] = None
        bits = all_bit_strings(n)
    else:
        rng = np.random.default_rng(seed + 7)
        bits = rng.integers(0, 2, (settings.eval_samples, n), dtype=np.uint8)
        t = forward(params, bits).T
        thr = params.config.threshold
        hits = int(np.sum((t > thr) == target_labels(function, bits).astype(bool)))
        rec["accuracy"] = hits / bits.shape[0]
        rec["accuracy_ci"] = list(clopper_pearson(hits, bits.shape[0], 0.99))
        rec["certified"] = None

        def model_fn(b: np.ndarray) -> np.ndarray:
            return (forward(params, b).T > thr).astype(np.uint8)

        sp = estimate_profile(model_fn, n, samples=min(settings.eval_samples, 1024), seed=seed)
        rec["as_model"] = float(sp.average_sensitivity)
        rec["as_model_ci"] = [float(v) for v in sp.average_sensitivity_ci]
        rec["profile"] = None
        rec["K0"] = None
        rec["K0_fraction"] = float(sp.fraction[0])
        tp = estimate_profile(
            lambda b: target_labels(function, b),
            n,
            samples=min(settings.eval_samples, 1024),
            seed=seed,
        )
        rec["as_target"] = float(tp.average_sensitivity)
    diag_bits = bits if bits.shape[0] <= 4096 else bits[:4096]
    res = forward(params, diag_bits, diagnostics=True)
    rec["beta_mean"] = float(np.mean(res.beta))
    rec["beta_max"] = float(np.max(res.beta))
    rec["beta_hr_mean"] = float(np.mean(res.beta_hr))
    rec["beta_hr_max"] = float(np.max(res.beta_hr))
    rec["param_norm_sq"] = parameter_norm_sq(params)
    rec["margin"] = float(np.min(np.abs(res.T - params.config.threshold)))
    rng = np.random.default_rng(seed + 11)
    if bits.shape[0] > settings.sharpness_strings:
        sbits = bits[rng.choice(bits.shape[0], settings.sharpness_strings, replace=False)]
    else:
        sbits = bits
    sharp, se, base = gaussian_sharpness(
        params,
        sbits,
        target_labels(function, sbits),
        sigma=settings.sigma,
        repeats=settings.sharpness_repeats,
        seed=seed + 13,
    )
    rec["sharpness"], rec["sharpness_se"], rec["loss"] = sharp, se, base
    rec["sigma"] = settings.sigma
    rec["tradeoff"] = None
    if n <= settings.tradeoff_max:
        m = measure_tradeoff(params, n)
        if m is not None:
            rec["tradeoff"] = {k: v for k, v in m.to_dict().items() if k in TRADEOFF_KEYS}
    return rec


def run_experiment(
    functions: Sequence[str] = FUNCTIONS,
    ns: Sequence[int] = (6, 10, 14),
    seeds: Sequence[int] = (0,),
    settings: TrainSettings = TrainSettings(),
    out: str | Path | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Train and evaluate every (function, N, seed); append each record to ``out`` (JSON lines)
    as soon as it is done; records already in ``out`` (same function, N, seed and settings)
    are read back instead of retrained, so a killed run resumes."""
    for f in functions:
        check_choice("function", f, FUNCTIONS)
    done: dict[tuple, dict[str, Any]] = {}
    key_settings = asdict(settings)
    if out is not None and Path(out).exists():
        for rec in read_records(out):
            # a record from before ``targets`` existed trained on +-1 targets
            if {"targets": "pm1", **(rec.get("settings") or {})} == key_settings:
                done[(rec["function"], rec["N"], rec["seed"])] = rec
    records = []
    for seed in seeds:
        for n in ns:
            for f in functions:
                key = (f, int(n), int(seed))
                if key in done:
                    records.append(done[key])
                    continue
                result = train_model(f, int(n), settings, int(seed))
                rec = evaluate(result.params, f, int(n), settings, int(seed))
                rec.update(
                    final_train_loss=result.final_loss,
                    train_seconds=result.seconds,
                    settings=key_settings,
                )
                records.append(rec)
                if out is not None:
                    Path(out).parent.mkdir(parents=True, exist_ok=True)
                    with open(out, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                if progress:
                    print(summary_line(rec), flush=True)
    return records


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file written by :func:`run_experiment`."""
    p = Path(path)
    if not p.exists():
        raise ValidationError("path", "an existing JSON-lines file", str(path))
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


# ----------------------------------------------------------------------------- for the checks
# (functions, N values, settings) of the statement checks, by budget: the quick and default
# versions take seconds (one layer, D = 8, a few hundred steps); "full" is the experiment of
# docs/torch.md (python -m verify train with its defaults)
CHECK_GRIDS: dict[str, tuple[tuple[str, ...], tuple[int, ...], TrainSettings]] = {
    "quick": (
        ("parity", "majority", "first"),
        (4,),
        TrainSettings(d_model=8, n_layers=1, d_ff=16, steps=200, batch=64, max_len=8,
                      sharpness_repeats=4, sharpness_strings=64),
    ),
    "default": (
        FUNCTIONS,
        (4, 6),
        TrainSettings(d_model=8, n_layers=1, d_ff=16, steps=300, batch=64, max_len=8,
                      sharpness_repeats=6, sharpness_strings=64),
    ),
    "full": (FUNCTIONS, (6, 10, 14, 18), TrainSettings(exhaustive_max=20)),
}  # fmt: skip


def check_experiment(budget: str, seed: int) -> list[dict[str, Any]]:
    """The records of the training experiment of the statement checks at ``budget``
    (CHECK_GRIDS); trained once per process and (budget, seed): H&R Cor 5 and Thm 6 share it."""
    return [rec for rec, _ in check_models(budget, seed)]


def check_models(budget: str, seed: int) -> list[tuple[dict[str, Any], Params]]:
    """(record, trained params) of every model of the grid of ``budget`` (CHECK_GRIDS), trained
    once per process and (budget, seed), and kept on disk between runs (train_cache)."""
    key = ("params:" + budget, int(seed))
    if key not in _PARAMS:
        functions, ns, settings = CHECK_GRIDS[budget]
        out = []
        for n in ns:
            for f in functions:
                key = train_cache.model_key(f, n, settings, int(seed))
                params = train_cache.cached(key, partial(train_model, f, n, settings, int(seed)))
                out.append((evaluate(params, f, n, settings, int(seed)), params))
        _PARAMS[key] = out
    return _PARAMS[key]


def check_models_available(budget: str, seed: int) -> bool:
    """Whether :func:`check_models` can answer: its models in memory or all in train_cache (no
    torch needed), or torch importable to train them."""
    functions, ns, settings = CHECK_GRIDS[budget]
    keys = [train_cache.model_key(f, n, settings, int(seed)) for n in ns for f in functions]
    if ("params:" + budget, int(seed)) in _PARAMS or train_cache.all_cached(keys):
        return True
    from verify.torch import torch_available

    return torch_available()


_PARAMS: dict[tuple[str, int], list[tuple[dict[str, Any], Params]]] = {}
