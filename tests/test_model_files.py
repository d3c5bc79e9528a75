"""A model file says everything that changes the function, or it is refused (issue 43, items 1,
7 and 8): a config lacking a contract field or repeating one, a number float64 turns into
another (1e-400 -> 0), a layer left out of a state_dict, and every damaged file (empty, a plain
.npy renamed, a header claiming terabytes, text that is not UTF-8, complex or sparse or meta
arrays, a FIFO) is one line with exit 2, naming what was wrong, before any work. Flags get the
same: ``--eps 1e-400``, ``--eps -1e-5``, ``--eps 0 -0.0``, ``-N 6 6``."""

from __future__ import annotations

import io
import json
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _cli import assert_one_line, run_cli

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.spec.config import CONTRACT_FIELDS

CONFIG = ModelConfig(d_model=8, n_layers=1, n_heads=4, ln_eps=1e-5)


@pytest.fixture(scope="module")
def params() -> Params:
    return init_params(CONFIG, "uniform", seed=0)


def _write(path: Path, params: Params, config_text: str | bytes, **extra: np.ndarray) -> Path:
    arrays = {"config": np.array(config_text), **params, **extra}
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _check(path: Path, capsys, *more: str) -> tuple[int, str, str]:
    return run_cli(["check-model", str(path), "-N", "4", *more], capsys)


# ------------------------------------------------------------------ every field, once
def test_a_written_file_carries_every_contract_field(tmp_path, params) -> None:
    params.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as data:
        stored = json.loads(str(data["config"]))
    assert set(CONTRACT_FIELDS) <= set(stored)
    assert Params.load(tmp_path / "m.npz").config == CONFIG


@pytest.mark.parametrize("field", CONTRACT_FIELDS)
def test_a_file_lacking_a_contract_field_is_refused(tmp_path, params, field, capsys) -> None:
    """n_heads missing was read as H = 2 (the model has 4), ln_eps missing as eps = 0."""
    data = CONFIG.to_dict()
    del data[field]
    path = _write(tmp_path / "m.npz", params, json.dumps(data))
    with pytest.raises(ValidationError, match=f"config.{field}:.*missing"):
        Params.load(path)
    code, err, out = _check(path, capsys)
    assert code == 2 and not out
    assert_one_line(err, field, "missing")


def test_an_absent_extension_field_means_the_contract(tmp_path, params) -> None:
    """final_norm is this project's extension: absent, it is the contract's layout."""
    data = CONFIG.to_dict()
    assert "final_norm" not in data
    assert Params.load(_write(tmp_path / "m.npz", params, json.dumps(data))).config == CONFIG


def test_a_field_given_twice_is_refused(tmp_path, params, capsys) -> None:
    """json keeps the last of two keys: {"n_heads": 4, ..., "n_heads": 2} ran with H = 2."""
    text = json.dumps(CONFIG.to_dict())[:-1] + ', "n_heads": 2}'
    assert json.loads(text)["n_heads"] == 2
    path = _write(tmp_path / "m.npz", params, text)
    code, err, _ = _check(path, capsys)
    assert code == 2
    assert_one_line(err, "n_heads", "once")


@pytest.mark.parametrize("literal", ["1e-400", "-1e-400", "1e400"])
def test_a_number_float64_cannot_hold_is_refused(tmp_path, params, literal, capsys) -> None:
    """ln_eps 1e-400 parsed as 0.0: eps > 0 silently became the eps = 0 regime."""
    text = json.dumps({**CONFIG.to_dict(), "ln_eps": 12345.0}).replace("12345.0", literal)
    code, err, _ = _check(_write(tmp_path / "m.npz", params, text), capsys)
    assert code == 2
    assert_one_line(err, literal)


def test_negative_zero_eps_is_zero(tmp_path, params) -> None:
    text = json.dumps({**CONFIG.to_dict(), "ln_eps": 12345.0}).replace("12345.0", "-0.0")
    cfg = Params.load(_write(tmp_path / "m.npz", params, text)).config
    assert cfg.ln_eps == 0.0 and np.copysign(1.0, cfg.ln_eps) == 1.0


# ------------------------------------------------------------------ damaged files
def _npz_with_member(path: Path, name: str, payload: bytes) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, payload)
    path.write_bytes(buf.getvalue())
    return path


def _huge_header(shape: tuple[int, ...]) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": "<f8", "fortran_order": False, "shape": shape}
    )
    return out.getvalue() + b"\0" * 64


def test_damaged_files_are_one_line(tmp_path, params, capsys) -> None:
    cases: dict[str, tuple[Path, str]] = {}
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    cases["empty"] = (empty, "empty")
    plain = tmp_path / "plain.npz"
    with open(plain, "wb") as fh:
        np.save(fh, np.zeros(3))
    cases["renamed .npy"] = (plain, ".npy")
    text = tmp_path / "text.npz"
    text.write_text("d_model = 16\n")
    cases["not a zip"] = (text, "zip")
    huge = _npz_with_member(tmp_path / "huge.npz", "config.npy", _huge_header((10**12,)))
    cases["a header claiming 7.28 TiB"] = (huge, "header claims 8000000000000 bytes")
    bad = tmp_path / "latin1.npz"
    _write(
        bad, params, json.dumps(CONFIG.to_dict()).replace("}", ', "x": "\xe9"}').encode("latin-1")
    )
    cases["non-UTF-8 config"] = (bad, "UTF-8")
    cplx = {"readout.weight": params["readout.weight"] + 1j}
    cases["complex array"] = (
        _write(tmp_path / "c.npz", params, CONFIG.to_json(), **cplx),
        "readout.weight",
    )
    for what, (path, needle) in cases.items():
        code, err, out = _check(path, capsys)
        assert code == 2 and not out, (what, code, err)
        assert_one_line(err, needle)


def test_a_fifo_is_refused_not_read(tmp_path, capsys) -> None:
    """check-model on a FIFO blocked forever in open(). A writer thread stands by: if the
    command opened the FIFO, the writer closes it at once (the test then fails on the message
    instead of hanging)."""
    fifo = tmp_path / "model.pt"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until a reader opens
        opened.set()
        os.close(fd)

    threading.Thread(target=writer, daemon=True).start()
    code, err, _ = _check(fifo, capsys)
    read = opened.is_set()
    if not read:  # release the writer thread
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert code == 2 and not read, err
    assert_one_line(err, "FIFO")


# ------------------------------------------------------------------ flags
@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["profile", "--random", "-N", "4", "--eps", "1e-400"], ["--eps", "underflows"]),
        (["profile", "--random", "-N", "4", "--eps", "-1e-5"], ["--eps", ">= 0"]),
        (["check-model", "x.pt", "-N", "4", "--eps", "-1e-5"], ["--eps", ">= 0"]),
        (["check-model", "x.pt", "-N", "4", "--eps", "1e-400"], ["--eps", "underflows"]),
    ],
)
def test_eps_flags_say_what_is_wrong(argv, needles, capsys) -> None:
    code, err, _ = run_cli(argv, capsys)
    assert code == 2
    assert_one_line(err, *needles)
    assert "expected one argument" not in err


@pytest.mark.parametrize(
    ("axis", "needle"),
    [
        (["-N", "6", "6"], "-N/--n-bits"),
        (["--eps", "0", "-0.0"], "--eps"),
        (["-D", "8", "8"], "-D"),
    ],
)
def test_sweep_refuses_a_value_given_twice(tmp_path, axis, needle, capsys) -> None:
    """`sweep -N 6 6` ran every cell twice and wrote duplicate records; `--eps 0 -0.0` two
    identical settings."""
    argv = ["sweep", "--out", str(tmp_path / "s.jsonl"), "--seeds", "0:2", "-j", "1", *axis]
    code, err, _ = run_cli([*argv, "--no-progress"], capsys)
    assert code == 2
    assert_one_line(err, needle, "once")
    assert not (tmp_path / "s.jsonl").exists()


# ------------------------------------------------------------------ torch state_dicts
LAYOUT = ["-H", "4", "--eps", "1e-5", "--norm", "post", "--final-norm", "no"]
LAYOUT += ["--activation", "relu", "--eos", "yes", "--pos", "sinusoidal", "--threshold", "0"]


def _torch_state(n_layers: int, prefix: str = "encoder.layers.") -> dict:
    """A state_dict of a ``n_layers`` model, its layers under ``prefix`` as in an
    nn.TransformerEncoder."""
    torch = pytest.importorskip("torch")
    cfg = ModelConfig(d_model=8, n_layers=n_layers, n_heads=4, ln_eps=1e-5)
    p = init_params(cfg, "uniform", seed=1)
    out = {}
    for name, arr in p.items():
        key = prefix + name[len("layers.") :] if name.startswith("layers.") else name
        out[key] = torch.tensor(arr)
    return out


@pytest.mark.parametrize("prefix", ["encoder.layers.", "layers."])
def test_a_state_dict_with_a_layer_left_out_is_refused(tmp_path, prefix, capsys) -> None:
    """Layers 0 and 2 without 1 ran as a 2-layer model, and the output did not say so."""
    torch = pytest.importorskip("torch")
    state = {k: v for k, v in _torch_state(3, prefix).items() if f"{prefix}1." not in k}
    path = tmp_path / "gap.pt"
    torch.save(state, path)
    code, err, _ = _check(path, capsys, *LAYOUT)
    assert code == 2
    assert_one_line(err, "0..L-1", "[0, 2]")
    torch.save(_torch_state(2, prefix), path)  # the control: 0..L-1 loads
    code, err, _ = _check(path, capsys, *LAYOUT)
    assert code == 0, err


@pytest.mark.parametrize("kind", ["sparse", "meta"])
def test_sparse_and_meta_tensors_are_refused(tmp_path, kind, capsys) -> None:
    torch = pytest.importorskip("torch")
    state = _torch_state(1)
    name = "encoder.layers.0.linear1.weight"
    if kind == "sparse":
        state[name] = state[name].to_sparse()
    else:
        state[name] = torch.empty(state[name].shape, device="meta")
    path = tmp_path / f"{kind}.pt"
    torch.save(state, path)
    code, err, _ = _check(path, capsys, *LAYOUT)
    assert code == 2
    assert_one_line(err, name, kind)
