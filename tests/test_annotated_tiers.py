"""Issue 44, end to end: models in the annotated layer-norm form certified by the Numba tiers
(the exhaustive and per-string float64 kernels, then the double-double kernel) give the table
the MidRad + arb route gives, on all 2^N strings; ``check-model --executor`` certifies them in
sub-cubes; parameter balls still run the tiers that take them.

The models: Bhattamishra et al.'s classifier (``tests/_bhattamishra.py``) converted exactly
(``verify.torch.annotated.convert``), untrained and trained on a 3-sparse parity, and spec
models with ``ln_form="annotated"`` (pre-LN and post-LN).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verify.model import ModelConfig, Params, init_params, truth_table
from verify.model.exhaustive.exhaustive_pass import exhaustive_T
from verify.model.per_string.per_string_pass import fast_T

torch = pytest.importorskip("torch")

import _bhattamishra as B  # noqa: E402
from _cli import run_cli  # noqa: E402

from verify.torch.annotated import Choice, convert, recognise  # noqa: E402


def _bhattamishra(n: int, trained: bool) -> tuple[Params, dict, np.ndarray]:
    """Their annotated-form classifier (D = 8, pre-LN, eps 1e-6), untrained (seed 4) or trained
    on 3-sparse parity as tests/test_bhattamishra.py trains it, converted for N = n: (params,
    parameter radii, the module's own argmax on all 2^n strings)."""
    torch.manual_seed(0 if trained else 4)
    model = B.TransformerCLF("annotated")
    if trained:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            model = B.train(model, n, [1, 3, 5], steps=400)
        finally:
            torch.set_num_threads(threads)
    st = recognise(model.state_dict())
    heads = B.N_HEADS
    params, radius, _ = convert(st, Choice((2, 3, 0), "sqrt_d", "annotated", True, 1e-6, heads), n)
    bits = torch.from_numpy(((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int64))
    with torch.no_grad():
        argmax = model.eval()(*B.source(bits)).argmax(1).numpy()
    return params, radius, argmax


def _spec(norm_first: bool, eps: float) -> Params:
    cfg = ModelConfig(
        d_model=8, n_layers=2, n_heads=2, d_ff=16, ln_eps=eps, norm_first=norm_first,
        pos_encoding="learned", max_len=8, ln_form="annotated",
    )  # fmt: skip
    return init_params(cfg, "gaussian", seed=11)


def _same_table(params: Params, n: int) -> Any:
    """The kernels' table (``truth_table``'s default route) equals the MidRad + arb route's on
    all 2^n strings, every string certified; the exhaustive and per-string kernels by
    themselves settle >= 90% of the strings, with those labels; returns the kernels' table."""
    kern = truth_table(params, n)
    ref = truth_table(params, n, engine="numpy", double_double=False)
    assert kern.certified.all() and ref.certified.all()
    assert np.array_equal(kern.label, ref.label)
    bits = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.uint8)
    settled_any = np.zeros(1 << n, dtype=bool)
    for name, (t, r) in (
        ("exhaustive", exhaustive_T(params, n)),
        ("per-string", fast_T(params, bits)),
    ):
        settled = np.abs(t) > r
        print(f"N {n}: the {name} kernel settles {settled.mean():.3f} of the strings")
        assert np.array_equal((t > 0)[settled], ref.label[settled] == 1)
        settled_any |= settled
    assert settled_any.mean() >= 0.9  # the float64 kernels, not the MidRad pass, settle them
    return kern


@pytest.mark.parametrize("trained", [False, True])
def test_their_model_on_the_kernels_is_the_arb_route_table(trained: bool) -> None:
    n = 6
    params, radius, argmax = _bhattamishra(n, trained)
    kern = _same_table(params, n)
    assert np.array_equal(kern.label, argmax)  # the module's own predictions
    # the parameter balls of the exact conversion (w_1 - w_0, sqrt(D) E) hold the same labels
    with_balls = truth_table(params, n, radius=radius)
    assert with_balls.certified.all() and np.array_equal(with_balls.label, kern.label)
    if trained:  # 3-sparse parity on bits 1, 3, 5
        bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
        assert np.array_equal(kern.label, bits[:, [0, 2, 4]].sum(1) % 2)


@pytest.mark.parametrize(("norm_first", "eps"), [(True, 1e-6), (False, 0.0), (True, 0.0)])
def test_spec_models_on_the_kernels_are_the_arb_route_table(norm_first: bool, eps: float) -> None:
    _same_table(_spec(norm_first, eps), 8)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, err, out = run_cli(argv, capsys)
    assert code == 0, err
    return json.loads(out)


def test_check_model_executor_runs_annotated_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--executor local`` on an annotated model: the local table, in 8 sub-cubes."""
    path = tmp_path / "annotated.npz"
    _spec(True, 1e-6).save(str(path))
    base = ["check-model", str(path), "-N", "8", "--family", "majority", "--json", "--table"]
    local = _json(base, capsys)
    split = _json([*base, "--executor", "local", "-j", "2"], capsys)
    assert split["layer_norm"]["form"] == "annotated"
    for key in ("truth_table", "profile", "table", "config"):
        assert split[key] == local[key], key
    assert split["executor"]["subcubes"] >= 2 and split["truth_table"]["uncertain"] == 0
