"""check-model's passes over the cube (verify.model.certified.cube): the diagnostics chunk by chunk
give the numbers of the whole-batch pass bit for bit; a table certified range by range, or in
sub-cubes on an executor (threads, a local pool, a dask LocalCluster), is the local table; a
failed or wrong sub-cube is computed again, never skipped; and the command's N limits."""

from __future__ import annotations

import concurrent.futures as cf
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests._cli import run_cli
from verify.boolean.function import all_bit_strings
from verify.model import ModelConfig, forward, init_params, truth_table
from verify.model.certified.cube import (
    SubcubeLost,
    certify_on_executor,
    certify_subcube,
    choose_prefix_bits,
    diagnostics_pass,
    subcube_range,
    truth_table_range,
)


def _model(
    d: int = 16, layers: int = 2, eps: float = 1e-5, seed: int = 3, n: int = 10, **kw: Any
) -> Any:
    """A random model whose readout bias splits the outputs at length ``n`` in half (random
    inits are mostly constant functions: a balanced one shows both labels)."""
    cfg = ModelConfig(d_model=d, n_layers=layers, n_heads=2, ln_eps=eps, **kw)
    params = init_params(cfg, "xavier_normal", seed=seed)
    n = min(n, cfg.max_len)
    t = np.sort(forward(params, all_bit_strings(n)).T - float(params["readout.bias"]))
    middle = 0.5 * (t[t.size // 2 - 1] + t[t.size // 2])
    return params.with_arrays({"readout.bias": np.array(-middle)})


# a mix: the spec's layouts, Hahn & Rofin's (concat, learned, no eos, d_ff = D) at D = 128,
# eps = 0 (the blowup unbounded where a variance is small)
MODELS = {
    "post-L2": lambda: _model(),
    "pre-L1": lambda: _model(layers=1, norm_first=True),
    "pre-L2-final": lambda: _model(norm_first=True, final_norm=True, eos=False),
    "eps0-L2": lambda: _model(eps=0.0),
    "hr-128": lambda: _model(
        d=128, d_ff=128, eos=False, pos_encoding="learned", embedding="concat", max_len=6
    ),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_diagnostics_pass_is_the_whole_batch_pass(name: str) -> None:
    params = MODELS[name]()
    n = 6 if name == "hr-128" else 8
    whole = forward(params, all_bit_strings(n), diagnostics=True, engine="numba")
    for chunk in (32, 96, 1 << 15):
        part = diagnostics_pass(params, n, chunk=chunk)
        for key in ("T", "y_readout", "beta", "beta_hr"):
            np.testing.assert_array_equal(getattr(part, key), getattr(whole, key), err_msg=key)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_layer0_table_changes_no_number(name: str) -> None:
    """The diagnostics kernel's layer-0 projections from the (token, position) table give
    the numbers of the projections computed in every block, bit for bit."""
    from verify.model.plain.forward_numba import forward_numba

    params = MODELS[name]()
    bits = all_bit_strings(6 if name == "hr-128" else 8)
    with_table = forward_numba(params, bits)
    without = forward_numba(params, bits, layer0_table=False)
    for a, b in zip(with_table, without, strict=True):
        np.testing.assert_array_equal(a, b)


def test_analysis_numbers_as_with_whole_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """check-model's Lemma 2.9 measurement, chunk by chunk over the flips, prints what the one
    computed on whole arrays of its diagnostics (the one pass's, ``verify.model.certified.onepass``)
    prints; the blowups' max and mean are those of the whole arrays exactly, and those of the
    plain whole-batch pass to rounding (tests/test_onepass.py's tolerance)."""
    import verify.commands.check_model as cm
    from verify.model.certified.onepass import table_and_diagnostics
    from verify.theory.bounds import c_infl, lemma_2_9_bound

    params, n = MODELS["post-L2"](), 8
    monkeypatch.setattr(cm, "_FLIP_CHUNK", 16)
    out = cm.analyse(params, n)
    res = table_and_diagnostics(params, n)[1]
    plain = forward(params, all_bit_strings(n), diagnostics=True, engine="numba")
    assert out["beta_max"] == pytest.approx(float(np.max(plain.beta)), rel=1e-12)
    ci, idx, worst = c_infl(params), np.arange(2**n), 0.0
    for bit in range(n):
        fl = idx ^ (1 << bit)
        i_n = np.linalg.norm(res.y_readout - res.y_readout[fl], axis=1)
        b = lemma_2_9_bound(ci, res.beta, res.beta[fl], n, False)
        worst = max(worst, float(np.nanmax(np.where(np.isfinite(b) & (b > 0), i_n / b, 0.0))))
    lemma = next(s for s in out["statements"] if s["statement"] == "Lemma 2.9")
    assert lemma["measured"] == f"worst I_n / bound over all {n * 2**n} flips: {worst:.4g}"
    assert out["beta_max"] == float(np.max(res.beta))
    assert out["beta_hr_mean"] == float(np.mean(res.beta_hr))


def test_diagnostics_pass_chunk_checked() -> None:
    with pytest.raises(Exception, match="multiple of 32"):
        diagnostics_pass(MODELS["post-L2"](), 6, chunk=48)


@pytest.mark.parametrize("name", ["post-L2", "eps0-L2"])
def test_ranges_give_the_whole_table(name: str) -> None:
    params = MODELS[name]()
    n = 10
    whole = truth_table(params, n)
    for k in (1, 3):
        for p in range(1 << k):
            lo, hi = subcube_range(n, k, p)
            part = truth_table_range(params, n, lo, hi)
            np.testing.assert_array_equal(part.label, whole.label[lo:hi])
            np.testing.assert_array_equal(part.method, whole.method[lo:hi])
            np.testing.assert_array_equal(part.T, whole.T[lo:hi])


def _same(gathered: Any, whole: Any) -> None:
    np.testing.assert_array_equal(gathered.label, whole.label)
    np.testing.assert_array_equal(gathered.certified, whole.certified)
    assert (gathered.n_float64, gathered.n_high_precision, gathered.n_uncertain) == (
        whole.n_float64,
        whole.n_high_precision,
        whole.n_uncertain,
    )


def test_gathered_on_threads_is_the_local_table() -> None:
    params = MODELS["post-L2"]()
    whole = truth_table(params, 10)
    with cf.ThreadPoolExecutor(2) as ex:
        for k in (0, 2, 4):
            g = certify_on_executor(params, 10, ex, 2, prefix_bits=k)
            assert g.prefix_bits == k and g.resubmitted == 0
            _same(g, whole)
    assert 0 < int(np.sum(whole.label == 1)) < 1 << 10  # both labels: the packing is seen


class FaultyExecutor(cf.Executor):
    """Runs tasks on threads, but the first submission of each prefix in ``lose`` fails as a
    lost worker would, and those in ``wrong`` answer for another sub-cube once."""

    def __init__(self, lose: set[int], wrong: set[int] = frozenset(), always: bool = False):
        self.pool = cf.ThreadPoolExecutor(2)
        self.lose, self.wrong, self.always = set(lose), set(wrong), always
        self.submitted: list[int] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future:
        prefix = args[3]
        self.submitted.append(prefix)
        if prefix in self.lose:
            if not self.always:
                self.lose.discard(prefix)
            fut: cf.Future = cf.Future()
            fut.set_exception(RuntimeError(f"worker lost while computing {prefix}"))
            return fut
        if prefix in self.wrong:
            self.wrong.discard(prefix)
            args = (*args[:3], (prefix + 1) % (1 << args[2]), *args[4:])
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def test_a_lost_subcube_is_computed_again() -> None:
    params = MODELS["post-L2"]()
    whole = truth_table(params, 10)
    ex = FaultyExecutor(lose={0, 5}, wrong={3})
    try:
        g = certify_on_executor(params, 10, ex, 2, prefix_bits=3)
    finally:
        ex.shutdown()
    _same(g, whole)
    assert g.resubmitted == 3
    assert sorted(ex.submitted) == sorted([*range(8), 0, 5, 3])


def test_a_subcube_that_always_fails_stops_the_run() -> None:
    params = MODELS["post-L2"]()
    ex = FaultyExecutor(lose={6}, always=True)
    try:
        with pytest.raises(SubcubeLost, match="sub-cube 6 of 8 .* failed 3 times"):
            certify_on_executor(params, 10, ex, 2, prefix_bits=3)
    finally:
        ex.shutdown()
    assert ex.submitted.count(6) == 3


def _always_lost(*args: Any) -> None:
    raise RuntimeError("worker lost")


def test_command_stops_on_a_lost_subcube(
    model_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sub-cube that fails on every attempt ends check-model with exit 1 and one line naming
    it, nothing certified printed."""
    import verify.model.certified.cube as cube

    real = cube.certify_on_executor
    monkeypatch.setattr(
        cube, "certify_on_executor", lambda *a, **k: real(*a, **{**k, "task": _always_lost})
    )
    argv = ["check-model", str(model_file), "-N", "9", "--executor", "local", "-j", "1"]
    code, err, out = run_cli(argv, capsys)
    assert code == 1 and "certified truth table" not in out
    assert err.strip().splitlines()[-1].startswith("python -m verify check-model: error: sub-cube")
    assert "failed 3 times, last: RuntimeError: worker lost" in err


def test_prefix_bits_choice() -> None:
    assert choose_prefix_bits(4, 8) == 0  # a tiny cube stays whole
    assert choose_prefix_bits(20, 2) == 3  # 4 sub-cubes per slot
    assert choose_prefix_bits(30, 2) == 10  # at most 2^20 strings each
    assert choose_prefix_bits(30, 4096) == 14
    part = certify_subcube(MODELS["post-L2"](), 8, 2, 1)
    assert (part.n, part.prefix_bits, part.prefix) == (8, 2, 1)
    assert part.ones.shape == (8,) and sum(part.counts.values()) == 64


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    params = _model(d=8, layers=2, seed=5, n=9)
    path = tmp_path_factory.mktemp("cube") / "m.npz"
    params.save(str(path))
    return path


def test_command_limits(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err, _ = run_cli(["check-model", str(model_file), "-N", "21"], capsys)
    assert code == 2 and "--executor" in err and len(err.strip().splitlines()) == 1
    code, err, _ = run_cli(["check-model", str(model_file), "-N", "6", "-j", "2"], capsys)
    assert code == 2 and "-j only with --executor" in err
    code, err, _ = run_cli(
        ["check-model", str(model_file), "-N", "6", "--executor", "slurm"], capsys
    )
    assert code == 2 and "--executor" in err
    code, err, _ = run_cli(
        ["check-model", str(model_file), "-N", "31", "--executor", "local"], capsys
    )
    assert code == 2 and "N <= 30" in err


def _json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, err, out = run_cli(argv, capsys)
    assert code == 0, err
    return json.loads(out)


TABLE_KEYS = (
    "truth_table",
    "profile",
    "K0",
    "avg_sensitivity",
    "family",
    "config",
    "N",
    "threshold",
)


def test_command_on_a_local_pool(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["check-model", str(model_file), "-N", "9", "--family", "majority", "--json"]
    local = _json_run([*base, "--table"], capsys)
    split = _json_run([*base, "--table", "--executor", "local", "-j", "2"], capsys)
    for key in (*TABLE_KEYS, "table"):
        assert split[key] == local[key], key
    assert split["executor"]["subcubes"] == 8 and split["executor"]["resubmitted"] == 0
    assert "beta_max" not in split and split["statements"][0]["applies"] is False
    code, _, out = run_cli([*base[:-1], "--executor", "local", "-j", "2"], capsys)
    assert code == 0 and out.startswith("estimate: 2^9 strings")
    assert "sub-cubes: 8 (3 high bits fixed) on local, 2 process(es)" in out


@pytest.mark.cluster
def test_command_on_a_dask_local_cluster(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("dask.distributed")
    base = ["check-model", str(model_file), "-N", "9", "--family", "parity", "--json"]
    local = _json_run(base, capsys)
    split = _json_run([*base, "--executor", "dask", "-j", "2"], capsys)
    for key in TABLE_KEYS:
        assert split[key] == local[key], key
    assert split["executor"]["where"].startswith("dask LocalCluster, 2 worker(s)")


def _dies_once(marker: str, victim: int, params: Any, n: int, k: int, prefix: int, xi: float):
    """certify_subcube, except that the first worker to compute sub-cube ``victim`` dies
    (the process exits at once, as a killed or crashed worker would)."""
    import os

    if prefix == victim and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return certify_subcube(params, n, k, prefix, xi)


@pytest.mark.cluster
def test_a_worker_dying_on_dask_loses_no_subcube(tmp_path: Path) -> None:
    """A dask worker process that dies in the middle of a sub-cube: the sub-cube is computed
    again (by dask on a restarted worker, or by the resubmission) and the table is whole."""
    pytest.importorskip("dask.distributed")
    import functools
    import sys

    import cloudpickle

    from verify.sweep.executors import open_executor

    params = MODELS["post-L2"]()
    whole = truth_table(params, 10)
    marker = tmp_path / "died"
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with open_executor("dask", jobs=2) as handle:
            task = functools.partial(_dies_once, str(marker), 5)
            g = certify_on_executor(params, 10, handle.executor, 2, prefix_bits=3, task=task)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert marker.exists()  # a worker did die
    _same(g, whole)
