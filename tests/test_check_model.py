"""docs/torch.md's worked example, run as written: a model built from plain torch modules is
trained, saved as a state_dict and checked by ``python -m verify check-model`` in one command
(no hand renaming); and the command's other checkpoint forms and errors."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from verify.boolean.function import all_bit_strings  # noqa: E402
from verify.cli import main  # noqa: E402
from verify.model import truth_table  # noqa: E402
from verify.torch import from_torch  # noqa: E402

pytestmark = pytest.mark.torch

DOC = Path(__file__).resolve().parents[1] / "docs" / "torch.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def worked_example(tmp_path_factory):
    """Run the page's first Python block in a scratch folder; return its namespace."""
    where = tmp_path_factory.mktemp("torch_doc")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    import os

    cwd = os.getcwd()
    os.chdir(where)
    try:
        namespace: dict = {"__name__": "torch_doc"}
        exec(compile(_blocks("python")[0], str(DOC), "exec"), namespace)
    finally:
        os.chdir(cwd)
        torch.set_num_threads(threads)
    namespace["folder"] = where
    return namespace


def _command(block: str) -> list[str]:
    line = next(x for x in block.splitlines() if x.startswith("python -m verify check-model"))
    return shlex.split(line)[3:]


def test_worked_example_one_command(worked_example, capsys, monkeypatch) -> None:
    """The page's command, as written, on the saved state_dict: exit 0, the renames printed,
    and the certified table it reports equals the torch model's own signs."""
    monkeypatch.chdir(worked_example["folder"])
    argv = _command(_blocks("bash")[0])
    assert main(argv) == 0
    out = capsys.readouterr().out
    for text in ("tok.weight -> token_embedding", "head.weight -> readout.weight",
                 "reshaped (1, 16) -> (16,)", "certified truth table, N=6",
                 "K_0 =", "target majority(N=6, tie=zero): agrees on", "H&R Cor 5 (",
                 "Lemma 3.2 (applies)"):  # fmt: skip
        assert text in out, text
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    marked = [s for s in report["statements"] if "vacuous" in s]
    assert {s["statement"] for s in marked} >= {"Lemma 2.9", "Cor 3.3", "H&R Cor 5"}
    for s in marked:  # vacuous exactly when the bound is no better than the trivial one
        assert s["vacuous"] == (s["bound"] >= s["trivial_bound"])
        mark = "(vacuous: " if s["vacuous"] else "(applies)"
        assert f"{s['statement']} {mark}" in out
    model = worked_example["model"].eval()
    bits = all_bit_strings(6)
    with torch.no_grad():
        signs = (model(torch.from_numpy(bits.astype(np.int64))) > 0).numpy()
    params = from_torch(model)
    table = truth_table(params, 6)
    assert table.n_uncertain == 0
    assert int(np.sum(table.label == signs)) == 64  # the spec model computes the torch model's f
    assert report["truth_table"]["ones"] == int(signs.sum())
    assert report["family"]["agree"] == int(np.sum(table.label == report_target(6)))
    assert report["family"]["agree"] >= 60, "the page says the model learned MAJORITY"


def report_target(n: int) -> np.ndarray:
    from verify.boolean import make_family

    return make_family("majority", n).table


def test_checkpoint_forms_and_errors(worked_example, tmp_path, capsys) -> None:
    """A nested checkpoint with a prefix, a bare state_dict without eps (refused, keys listed),
    a pickled module (only with --trust-pickle; its own outputs compared), a spec .npz file."""
    model = worked_example["model"]
    state = model.state_dict()
    nested = tmp_path / "ckpt.pt"
    torch.save({"model_state_dict": {f"net.{k}": v for k, v in state.items()}, "step": 3}, nested)
    layout = ["--norm", "post", "--final-norm", "no", "--activation", "relu", "--eos", "yes"]
    argv = ["check-model", str(nested), "-N", "4", "-H", "2", "--eps", "1e-5", "--prefix", "net.",
            *layout, "--threshold", "0"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["loading"]["format"] == "torch state_dict"
    bare = tmp_path / "bare.pt"
    torch.save(state, bare)
    assert main(["check-model", str(bare), "-N", "4", "-H", "2", "--norm", "post"]) == 2
    err = capsys.readouterr().err  # every missing flag listed on one line, no default taken
    assert len(err.strip().splitlines()) == 1
    for flag in ("--eps", "--final-norm {yes,no}", "--activation {relu,gelu}", "--eos {yes,no}",
                 "--threshold T"):  # fmt: skip
        assert flag in err, flag
    assert "-H" not in err and "--norm " not in err
    npz = tmp_path / "spec.npz"
    params = from_torch(model)
    params.save(npz)
    from verify.torch import to_torch

    whole = tmp_path / "whole.pt"
    torch.save(to_torch(params), whole)  # a pickled module (an importable class)
    assert main(["check-model", str(whole), "-N", "4"]) == 2  # pickles need --trust-pickle
    assert "--trust-pickle" in capsys.readouterr().err
    assert main(["check-model", str(whole), "-N", "4", "--trust-pickle"]) == 2  # no threshold
    assert "--threshold: expected T, the label rule" in capsys.readouterr().err
    assert main(["check-model", str(whole), "-N", "4", "--trust-pickle", "--threshold", "0"]) == 0
    out = capsys.readouterr().out
    assert "the torch module's outputs agree with the spec pass on all 16 strings" in out
    assert "own predictions (output > 0.0) agree with the certified labels on 16 of 16" in out
    assert main(["check-model", str(npz), "-N", "5", "--family", "majority"]) == 0
    assert "target majority" in capsys.readouterr().out


def test_check_model_on_an_npz_file_does_not_import_torch(tmp_path: Path) -> None:
    """A spec .npz needs no PyTorch: check-model must not pay its import (3 s here) for one.
    Run in a fresh interpreter (this one has torch loaded); fails if anything on the .npz path
    imports verify.torch (e.g. to catch ModelMismatchError, which lives in verify.errors)."""
    import subprocess
    import sys

    from verify.model import ModelConfig, init_params

    path = tmp_path / "m.npz"
    init_params(ModelConfig(d_model=8, n_layers=1, n_heads=2), "xavier_normal", 0).save(path)
    code = (
        "import sys; from verify.cli import main; "
        f"rc = main(['check-model', {str(path)!r}, '-N', '4', '--json']); "
        "assert rc == 0, rc; "
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)"
    )
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.strip().endswith("NO-TORCH"), proc.stderr[-2000:]
