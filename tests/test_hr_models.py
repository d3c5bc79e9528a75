"""Issue 40: a model trained in Hahn & Rofin's conventions (tests/_hr_model.py: MSE on 0/1
targets, AdamW, exactly N position rows, no eos, D/2-wide tables concatenated, post-LN encoder
with d_ff = D, a class with constructor arguments; label 1 iff output > 0.5) is certified as the
model it is through a state_dict with flags, a pickle and ``--module`` with ``--module-kwargs``:
the certified table equals the model's own predictions at its threshold on every string. The
same without ``--threshold`` or ``-N`` exits 2 in one line; a wrong ``-H`` or ``--norm`` on a
bare state_dict is named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import _hr_model as hr  # noqa: E402

from verify.cli import main  # noqa: E402
from verify.model import Params, truth_table  # noqa: E402

pytestmark = pytest.mark.torch

N, D = 6, 16
HELPER = Path(hr.__file__)
KWARGS = json.dumps({"hidden_dim": D, "num_attn_heads": 2, "num_layers": 2, "max_len": N})
FLAGS = ["-H", "2", "--eps", "1e-5", "--norm", "post", "--final-norm", "no", "--activation",
         "relu", "--eos", "no"]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """MAJORITY at N = 6 trained H&R's way (a few seconds); its files and own predictions."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = hr.train("majority", N, D, steps=200, seed=0)
    finally:
        torch.set_num_threads(threads)
    where = tmp_path_factory.mktemp("hr")
    torch.save(model.state_dict(), where / "sd.pt")
    torch.save(model, where / "whole.pt")
    own = hr.predictions(model, N)
    assert 0 < own.sum() < own.size, "the fixture should compute a non-constant function"
    return model, where, own


def _run(argv, capsys):
    code = main(["check-model", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("form", ["state_dict", "pickle", "module"])
def test_certified_table_is_the_models_own_predictions(form, trained, capsys, monkeypatch):
    model, where, own = trained
    monkeypatch.syspath_prepend(str(HELPER.parent))  # the pickle's class is importable
    saved = where / f"{form}.npz"
    argv = {
        "state_dict": [str(where / "sd.pt"), *FLAGS],
        "pickle": [str(where / "whole.pt"), "--trust-pickle"],
        "module": [
            str(where / "sd.pt"),
            "--module",
            f"{HELPER}:HRTransformer",
            "--module-kwargs",
            KWARGS,
        ],  # fmt: skip
    }[form]
    code, out, err = _run([*argv, "-N", str(N), "--threshold", "0.5", "--save", str(saved)], capsys)
    assert code == 0, err
    params = Params.load(saved)
    assert params.config.threshold == 0.5 and not params.config.eos
    assert params["pos_embedding"].shape[0] == N + 1  # N rows + the never-read one
    table = truth_table(params, N)
    assert table.n_uncertain == 0
    assert np.array_equal(table.label, own), "certified table != the model's own predictions"
    assert "label 1 iff T(x) > 0.5" in out
    assert f"{int(own.sum())} ones" in out
    if form == "state_dict":
        assert "layout: stated by the flags" in out
    else:
        assert "predictions (output > 0.5) agree with the certified labels on 64 of 64" in out
        assert "layout: confirmed against the user's module (64 strings)" in out
    code, out, err = _run([*argv, "-N", str(N), "--threshold", "0.5", "--json"], capsys)
    report = json.loads(out)
    assert report["threshold"] == 0.5 and report["config"]["threshold"] == 0.5
    assert report["truth_table"]["ones"] == int(own.sum())
    assert report["layout"]["status"] == ("stated" if form == "state_dict" else "confirmed")
    assert report["beta_hr_mean"] <= report["beta_hr_max"]


def test_the_contract_threshold_would_certify_another_function(trained, capsys):
    """Why the flag has no default: at the contract's 0 the same file is another function."""
    _, where, own = trained
    code, out, _ = _run([str(where / "sd.pt"), *FLAGS, "-N", str(N), "--threshold", "0",
                         "--json"], capsys)  # fmt: skip
    assert code == 0
    assert json.loads(out)["truth_table"]["ones"] != int(own.sum())


@pytest.mark.parametrize("drop", ["--threshold", "-N"])
def test_missing_threshold_or_n_exits_2_in_one_line(drop, trained, capsys):
    _, where, _ = trained
    for argv in (
        [str(where / "sd.pt"), *FLAGS],
        [str(where / "sd.pt"), "--module", f"{HELPER}:HRTransformer", "--module-kwargs", KWARGS],
    ):
        full = [*argv, "-N", str(N), "--threshold", "0.5"]
        i = full.index(drop)
        code, out, err = _run(full[:i] + full[i + 2 :], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert drop in err and "certified" not in out


def test_wrong_heads_or_norm_on_a_bare_state_dict_is_named(trained, capsys):
    """-H 1 and --norm pre are stated for a post-LN 2-head model: the output names the true
    layout among those computing a different function (or the stated one differs from it)."""
    _, where, _ = trained
    for wrong, true_flag in ((["-H", "1"], "-H 2"), (["--norm", "pre"], "--norm post")):
        flags = list(FLAGS)
        k = flags.index(wrong[0])
        flags[k + 1] = wrong[1]
        code, out, err = _run([str(where / "sd.pt"), *flags, "-N", str(N), "--threshold", "0.5",
                               "--json"], capsys)  # fmt: skip
        assert code == 0, err
        others = {o["flags"]: o for o in json.loads(out)["layout"]["other_layouts"]}
        assert true_flag in others
        if true_flag == "-H 2":  # measured on this fixture: 1 and 2 heads differ
            assert others[true_flag]["differ"] > 0
        code, out, _ = _run([str(where / "sd.pt"), *flags, "-N", str(N), "--threshold", "0.5"],
                            capsys)  # fmt: skip
        assert "layout: stated by the flags" in out and true_flag in out  # named either way
        if others[true_flag]["differ"]:
            assert f"WARNING: with {true_flag} the same file computes a different function" in out
        else:  # the same labels on every string: listed as such
            assert "the same certified labels on 64 strings with:" in out


def test_module_kwargs_errors(trained, capsys):
    _, where, _ = trained
    base = [str(where / "sd.pt"), "-N", str(N), "--threshold", "0.5"]
    for extra, words in (
        (["--module", f"{HELPER}:HRTransformer"], "constructor arguments go in --module-kwargs"),
        (["--module", f"{HELPER}:HRTransformer", "--module-kwargs", "{bad"], "a JSON object"),
        (["--module", f"{HELPER}:HRTransformer", "--module-kwargs", "[1]"], "a JSON object"),
        (["--module-kwargs", KWARGS, *FLAGS], "--module FILE_OR_MODULE:NAME"),
        (["--module", f"{HELPER}:HRTransformer", "--module-kwargs", '{"hidden_dim": 8}'],
         "missing 3 required"),
    ):  # fmt: skip
        code, _, err = _run([*base, *extra], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, (extra, err)


def test_reference_logits_written_the_docs_way_confirm_the_layout(trained, capsys, monkeypatch):
    """docs/torch.md's short way to write --reference-logits, run as written next to the model:
    the stated layout becomes confirmed; with -H 1 the same logits refuse it (exit 1)."""
    import re
    import textwrap

    model, where, _ = trained
    doc = (Path(__file__).resolve().parents[1] / "docs" / "torch.md").read_text()
    (snippet,) = re.findall(r"\n  ```\n(  bits = .*?)  ```\n", doc, flags=re.S)
    monkeypatch.chdir(where)
    torch.manual_seed(0)
    exec(textwrap.dedent(snippet), {"torch": torch, "np": np, "model": model, "N": N})
    base = [str(where / "sd.pt"), "-N", str(N), "--threshold", "0.5", "--reference-logits",
            str(where / "ref.npz")]  # fmt: skip
    code, out, err = _run([*base, *FLAGS], capsys)
    assert code == 0, err
    assert "layout: confirmed against --reference-logits (512 strings)" in out
    wrong = list(FLAGS)
    wrong[1] = "1"
    code, out, err = _run([*base, *wrong], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "first at string" in err


def test_docs_commands_for_hr_models_parse_and_run(trained, capsys, monkeypatch) -> None:
    """docs/torch.md's three commands for H&R's conventions, run on this fixture's files (the
    page's names replaced by them): each exits 0."""
    import re
    import shlex

    _, where, _ = trained
    monkeypatch.syspath_prepend(str(HELPER.parent))
    doc = (Path(__file__).resolve().parents[1] / "docs" / "torch.md").read_text()
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", doc, flags=re.S) if "-kwargs" in b]
    lines = [ln for ln in block.splitlines() if ln.startswith("python -m verify check-model")]
    assert len(lines) == 3
    swap = {"parity.pt": str(where / "sd.pt"), "parity_pickle.pt": str(where / "whole.pt"),
            "train.py:HRTransformer": f"{HELPER}:HRTransformer", "8": str(N)}  # fmt: skip
    for line in lines:
        argv = [swap.get(a, a) for a in shlex.split(line)[4:]]
        argv = [a.replace('"max_len": 8', f'"max_len": {N}') for a in argv]
        code, out, err = _run(argv, capsys)
        assert code == 0, (line, err)
        assert "label 1 iff T(x) > 0.5" in out
