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


def _cli(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own checks
        return int(exc.code or 0)


def test_profile_model_errors(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """Errors name the flags the user typed (not ModelConfig's field names), exit 2."""
    assert _cli(["profile", "--model", str(tmp_path / "absent.npz"), "-N", "4"]) == 2
    assert "--model: expected an existing .npz parameter file" in capsys.readouterr().err
    assert _cli(["profile", "--random", "-D", "15", "-H", "2", "-N", "4"]) == 2
    assert "-D/--d-model: expected multiples of -H/--n-heads=2" in capsys.readouterr().err
    assert _cli(["profile", "--random", "--eps", "-1", "-N", "4"]) == 2
    assert "argument --eps/--ln-eps: expected a real number >= 0" in capsys.readouterr().err


def test_profile_refuses_flags_it_would_ignore(tmp_path, capsys) -> None:
    path = tmp_path / "p.npz"
    assert _cli(["profile", "--random", "-D", "8", "-N", "3", "--save", str(path)]) == 0
    capsys.readouterr()
    for argv, needle in [
        (["--model", str(path), "-L", "3"], "-L/--n-layers: expected no architecture flag"),
        (["--model", str(path), "--eps", "0.1"], "--eps: expected no architecture flag"),
        (["--family", "majority", "-D", "8"], "-D/--d-model: expected --random"),
        (["--save", str(tmp_path / "q.npz")], "--save: expected --random"),
        (["--random", "--save", str(tmp_path / "q.txt")], "--save: expected a file name ending"),
        (["--random", "--save", "/proc/x/q.npz"], "--save: expected a file in a writable"),
        (["--random", "--model", str(path)], "--model: expected either --model or --random"),
        (["--plot", "/proc/x/p.png"], "--plot: expected a file in a writable directory"),
    ]:
        assert _cli(["profile", "-N", "3", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, (argv, err)
