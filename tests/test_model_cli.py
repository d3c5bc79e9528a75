"""``python -m verify profile --random/--model``: the transformer as a function source."""

from __future__ import annotations

import json

import pytest

from verify.cli import main
from verify.model import Params


def test_profile_random_save_and_reload(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.npz"
    argv = ["profile", "--random", "--scheme", "gaussian", "--seed", "3", "-D", "8", "-L", "1"]
    assert main([*argv, "-H", "2", "-N", "6", "--eps", "1e-5", "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert "bits certified at float64:" in out and "uncertain: 0" in out
    params = Params.load(path)
    assert params.config.d_model == 8 and params.config.ln_eps == 1e-5
    assert main(["profile", "--model", str(path), "-N", "6", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    info = summary["params"]["transformer"]
    assert info["profile_certified"] is True
    assert info["certified_float64"] + info["certified_high_precision"] == 64
    assert sum(summary["profile"]) == 64


def test_profile_model_errors(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "--model", str(tmp_path / "absent.npz"), "-N", "4"]) == 2
    assert "path" in capsys.readouterr().err
    assert main(["profile", "--random", "-D", "15", "-H", "2", "-N", "4"]) == 2
    assert "n_heads" in capsys.readouterr().err
    assert main(["profile", "--random", "--eps", "-1", "-N", "4"]) == 2
    assert "ln_eps" in capsys.readouterr().err
