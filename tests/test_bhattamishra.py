"""Issue 44: a model built from Bhattamishra et al.'s classes (``tests/_bhattamishra.py``,
written from the description in the engineering notes), trained on a sparse parity, certified
through ``check-model --module`` on all 2^N strings for both layer-norm forms, equal to the
module's own argmax; the naive conversion refused or its formula named; the exact conversion's
radii (w_1 - w_0, sqrt(D) E) against exact arithmetic; refusals in one short line."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import _bhattamishra as B  # noqa: E402
from _cli import run_cli  # noqa: E402

from verify.boolean.function import all_bit_strings  # noqa: E402
from verify.model import truth_table  # noqa: E402
from verify.model.arithmetic.rounding import U  # noqa: E402
from verify.torch.annotated import Choice, convert, recognise  # noqa: E402

N = 6
SUBSET = [1, 3, 5]
HELPER = str(Path(__file__).with_name("_bhattamishra.py"))
FACTORY = {"annotated": "annotated_model", "torch": "torch_form_model"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, Path]]:
    """Both forms trained on 3-sparse parity at N = 6 (seeded), state_dicts saved."""
    out = {}
    root = tmp_path_factory.mktemp("bhattamishra")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for form in ("annotated", "torch"):
            torch.manual_seed(0)
            model = B.train(B.TransformerCLF(form), N, SUBSET, steps=400)
            path = root / f"{form}.pt"
            torch.save(model.state_dict(), path)
            out[form] = (model, path)
    finally:
        torch.set_num_threads(threads)
    return out


def _argmax(model, bits: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(*B.source(torch.from_numpy(bits.astype(np.int64)))).argmax(1).numpy()


def _unpack(hex_text: str, size: int) -> np.ndarray:
    raw = np.frombuffer(bytes.fromhex(hex_text), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:size].astype(bool)


@pytest.mark.parametrize("form", ["annotated", "torch"])
def test_their_model_is_certified_equal_to_its_argmax(form, trained, capsys) -> None:
    model, path = trained[form]
    argv = [
        "check-model", str(path), "-N", str(N), "--module", f"{HELPER}:{FACTORY[form]}",
        "--token-ids", "2,3,0", "--family", "sparse_parity", "--param", "subset=1,3,5",
        "--json", "--table",
    ]  # fmt: skip
    code, err, out = run_cli(argv, capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["layer_norm"]["form"] == form and res["config"].get("ln_form", "torch") == form
    assert "std_unbiased" in res["layer_norm"]["formula"] or form == "torch"
    assert res["truth_table"]["uncertain"] == 0
    ones = _unpack(res["table"]["ones"], 1 << N)
    certified = _unpack(res["table"]["certified"], 1 << N)
    assert certified.all()
    bits = all_bit_strings(N)
    assert np.array_equal(ones.astype(int), _argmax(model, bits))  # the module's own argmax
    assert res["family"]["agree"] == 1 << N  # trained to 100% on 3-sparse parity
    assert res["profile"] == [0, 0, 0, 64, 0, 0, 0]
    pred = res["module_predictions"]
    assert (pred["agree"], pred["of"]) == (64, 64)
    assert "parameter_radius" in res  # sqrt(8) E and w_1 - w_0 carried with their radii
    given = " ".join(res["loading"]["given"])
    assert f"layer norm {form}" in given and "probing" in given


def test_a_wrapper_with_prefix_and_module(trained, tmp_path, capsys) -> None:
    model, _ = trained["annotated"]
    wrapper = B.Wrapper()
    wrapper.model.load_state_dict(model.state_dict())
    path = tmp_path / "wrapped.pt"
    torch.save(wrapper.state_dict(), path)
    argv = ["check-model", str(path), "-N", str(N), "--module", f"{HELPER}:Wrapper",
            "--prefix", "model.", "--token-ids", "2,3,0", "--json"]  # fmt: skip
    code, err, out = run_cli(argv, capsys)
    assert code == 0, err
    pred = json.loads(out)["module_predictions"]
    assert (pred["agree"], pred["of"]) == (64, 64)


def _naive_state(model) -> dict[str, torch.Tensor]:
    """Their arrays renamed to the spec's names, nothing else (no sqrt(D), their eps outside)."""
    sd = {k: v.detach().double() for k, v in model.state_dict().items()}
    out = {"token_embedding": sd["encoder.lut.weight"][[2, 3, 0]],
           "pos_embedding": sd["pos_encoder.pe"][: N + 1, 0]}  # fmt: skip
    for i in range(B.N_LAYERS):
        p, q = f"transformer_encoder.layers.{i}.", f"layers.{i}."
        lin = [f"{p}self_attn.linears.{j}." for j in range(4)]
        out[q + "self_attn.in_proj_weight"] = torch.cat([sd[x + "weight"] for x in lin[:3]])
        out[q + "self_attn.in_proj_bias"] = torch.cat([sd[x + "bias"] for x in lin[:3]])
        out[q + "self_attn.out_proj.weight"] = sd[lin[3] + "weight"]
        out[q + "self_attn.out_proj.bias"] = sd[lin[3] + "bias"]
        for a, b in (("feed_forward.w_1", "linear1"), ("feed_forward.w_2", "linear2")):
            out[f"{q}{b}.weight"], out[f"{q}{b}.bias"] = sd[f"{p}{a}.weight"], sd[f"{p}{a}.bias"]
        for j in (0, 1):
            out[f"{q}norm{j + 1}.weight"] = sd[f"{p}sublayer.{j}.norm.a_2"]
            out[f"{q}norm{j + 1}.bias"] = sd[f"{p}sublayer.{j}.norm.b_2"]
    out["final_norm.weight"] = sd["transformer_encoder.norm.a_2"]
    out["final_norm.bias"] = sd["transformer_encoder.norm.b_2"]
    out["readout.weight"] = (sd["decoder.weight"][1] - sd["decoder.weight"][0])[None]
    out["readout.bias"] = (sd["decoder.bias"][1] - sd["decoder.bias"][0])[None]
    return out


def test_the_naive_conversion_is_named_or_refused(trained, tmp_path, capsys) -> None:
    model, _ = trained["annotated"]
    path = tmp_path / "naive.pt"
    torch.save(_naive_state(model), path)
    flags = ["-N", str(N), "-H", "2", "--eps", "1e-6", "--norm", "pre", "--final-norm", "yes",
             "--activation", "relu", "--eos", "yes", "--threshold", "0"]  # fmt: skip
    code, err, out = run_cli(["check-model", str(path), *flags], capsys)
    assert code == 0, err  # a bare state_dict: nothing to compare with, but the formula is named
    assert "given: layer norm torch: LN(v) = gamma (v - mean) / sqrt(var_biased + eps)" in out
    code, err, out = run_cli(["check-model", str(path), *flags, "--json"], capsys)
    others = {o["flags"]: o for o in json.loads(out)["layout"]["other_layouts"]}
    assert others["--ln-form annotated"]["compared"] > 0  # the other formula, run and compared
    bits = all_bit_strings(N)
    with torch.no_grad():
        logits = model(*B.source(torch.from_numpy(bits.astype(np.int64))))
    ref = tmp_path / "logits.npz"
    np.savez(ref, bits=bits, logits=(logits[:, 1] - logits[:, 0]).numpy())
    code, err, _ = run_cli(["check-model", str(path), *flags, "--reference-logits", str(ref)],
                           capsys)  # fmt: skip
    assert code == 1 and "differ" in err and len(err.splitlines()) == 1, err


def test_an_unmappable_state_dict_gets_one_short_line(trained, tmp_path, capsys) -> None:
    model, _ = trained["annotated"]
    state = dict(model.state_dict())
    state["transformer_encoder.layers.0.self_attn.rotary.weight"] = torch.zeros(4)
    path = tmp_path / "odd.pt"
    torch.save(state, path)
    code, err, _ = run_cli(["check-model", str(path), "-N", str(N)], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and len(err) < 400, err
    assert "not recognised: transformer_encoder.layers.0.self_attn.rotary.weight" in err
    code, err, _ = run_cli(["check-model", str(path), "-N", str(N), "--show-keys"], capsys)
    assert code == 2 and err.count("  key ") == len(state)


def test_a_bare_annotated_state_dict_lists_the_flags_it_needs(trained, capsys) -> None:
    _, path = trained["annotated"]
    code, err, _ = run_cli(["check-model", str(path), "-N", str(N)], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    for flag in ("--token-ids", "--eps", "--n-heads", "--embed-scale", "--ln-form", "--norm"):
        assert flag in err, err
    flags = [
        "-N",
        str(N),
        "--token-ids",
        "2,3,0",
        "--eps",
        "1e-6",
        "-H",
        "2",
        "--embed-scale",
        "sqrt-d",
        "--ln-form",
        "annotated",
        "--norm",
        "pre",
        "--json",
    ]
    code, err, out = run_cli(["check-model", str(path), *flags], capsys)  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    assert res["truth_table"]["uncertain"] == 0 and res["profile"] == [0, 0, 0, 64, 0, 0, 0]


def _structure(d: int, seed: int):
    torch.manual_seed(seed)
    return recognise(B.TransformerCLF("annotated", d_model=d).state_dict())


def test_head_difference_radius_is_its_exact_rounding_error() -> None:
    st = _structure(8, 1)
    w = st.head["weight"][1]
    rng = np.random.default_rng(0)  # float64 weights of full precision and different scales:
    w[0], w[1] = rng.normal(size=8), 1e-3 * rng.normal(size=8)  # w_1 - w_0 rounds
    # (float32 weights' difference is exact in float64 whenever it fits in 53 bits)
    params, radius, _ = convert(st, Choice((2, 3, 0), "sqrt_d", "annotated", True, 1e-6, 2), N)
    stored = params["readout.weight"]
    for k in range(8):
        exact = Fraction(float(w[1, k])) - Fraction(float(w[0, k]))
        assert Fraction(float(radius["readout.weight"][k])) == abs(exact - Fraction(stored[k]))
    assert np.any(radius["readout.weight"] > 0)


@pytest.mark.parametrize("d", [8, 6, 16])
def test_embedding_scale_radius_contains_sqrt_d_times_the_table(d: int) -> None:
    st = _structure(d, 2)
    params, radius, _ = convert(st, Choice((2, 3, 0), "sqrt_d", "torch", True, 1e-6, 2), N)
    table = params["token_embedding"]
    if d == 16:  # sqrt(16) = 4 is a power of two: the product is exact, no radius
        assert "token_embedding" not in radius
        assert np.array_equal(table, 4.0 * st.token[1][[2, 3, 0]])
        return
    r = radius["token_embedding"]
    with mpmath.workdps(40):
        s = mpmath.sqrt(d)
        for (i, j), v in np.ndenumerate(table):
            exact = s * mpmath.mpf(float(st.token[1][[2, 3, 0]][i, j]))
            assert abs(exact - mpmath.mpf(float(v))) <= mpmath.mpf(float(r[i, j]))
    assert np.all(r <= 4 * U * np.abs(table) + 1e-299)  # not vacuous: a few ulps


def test_parameter_balls_route_to_the_tiers_that_take_them() -> None:
    st = _structure(8, 3)
    choice = Choice((2, 3, 0), "sqrt_d", "torch", True, 1e-6, 2)
    params, radius, _ = convert(st, choice, 4)
    with_balls = truth_table(params, 4, radius=radius)
    without = truth_table(params, 4)  # the stored float64 parameters, the kernels
    assert with_balls.certified.all() and without.certified.all()
    assert np.array_equal(with_balls.label, without.label)
    huge = {"readout.bias": np.array(1e6)}  # a ball holding both signs of every T
    assert truth_table(params, 4, radius=huge).n_uncertain == 16
    assert math.isfinite(float(params["readout.bias"]))


def test_the_docs_command_runs_as_written(trained, capsys) -> None:
    """docs/torch.md's command for this model, its names replaced by this fixture's."""
    import re
    import shlex

    doc = (Path(__file__).resolve().parents[1] / "docs" / "torch.md").read_text()
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", doc, flags=re.S) if "token-ids" in b]
    (line,) = [ln for ln in block.splitlines() if ln.startswith("python -m verify check-model")]
    swap = {"clf.pt": str(trained["annotated"][1]),
            "train.py:TransformerCLF": f"{HELPER}:annotated_model"}  # fmt: skip
    code, err, out = run_cli([swap.get(a, a) for a in shlex.split(line)[3:]], capsys)
    assert code == 0, err
    assert "agrees on 64 of 64" in out and "layer norm annotated" in out


def test_module_input_seq_first_is_for_annotated_models_only(tmp_path, capsys) -> None:
    from _torch_layouts import UserModel

    path = tmp_path / "user.pt"
    torch.save(UserModel().state_dict(), path)
    helper = Path(__file__).with_name("_torch_layouts.py")
    code, err, _ = run_cli(["check-model", str(path), "-N", "6", "--threshold", "0",
                            "--module", f"{helper}:UserModel",
                            "--module-input", "seq-first"], capsys)  # fmt: skip
    assert code == 2 and "--module-input" in err and len(err.splitlines()) == 1, err


def test_table_without_json_is_refused(trained, capsys) -> None:
    _, path = trained["annotated"]
    code, err, _ = run_cli(["check-model", str(path), "-N", str(N), "--table"], capsys)
    assert code == 2 and "--table: expected --json as well" in err, err
