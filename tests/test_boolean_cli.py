"""The ``profile`` command: output, JSON, plot and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest

from verify.cli import main


def test_profile_table(capsys):
    assert main(["profile", "--family", "majority", "-N", "7"]) == 0
    out = capsys.readouterr().out
    assert "K_0 (zero-sensitivity strings): 58" in out  # 2^7 - 2 C(7, 3)
    assert "min 0" in out and "max 4" in out and "closed form agrees: True" in out


def test_profile_json_and_plot(capsys, tmp_path):
    png = tmp_path / "profile.png"
    argv = ["profile", "--family", "sparse_parity", "-N", "6", "--subset", "1,4", "--json"]
    assert main([*argv, "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == [0, 0, 64, 0, 0, 0, 0]
    assert data["K_0"] == 0 and data["min_sensitivity"] == data["max_sensitivity"] == 2
    assert data["average_sensitivity"] == 2.0 and data["closed_form_agrees"] is True
    assert png.stat().st_size > 1000


def test_profile_family_parameters(capsys):
    assert main(["profile", "--family", "dictator", "-N", "5", "--i", "5", "--negate"]) == 0
    assert "K_0 (zero-sensitivity strings): 0" in capsys.readouterr().out
    assert main(["profile", "--family", "threshold", "-N", "5", "--param", "k=5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["profile"] == [26, 5, 0, 0, 0, 1]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-N", "0"], "-N/--n-bits: expected an integer >= 1"),
        (["-N", "31"], "estimate_profile"),
        (["--family", "nope"], "family: expected one of"),
        (["--family", "sparse_parity", "-N", "4", "--m", "5"], "m: expected"),
        (["--family", "dictator", "-N", "4", "--i", "7"], "i: expected"),
        (["--family", "majority", "--tie", "coin"], "tie: expected"),
        (["--param", "oops"], "--param"),
        (["--family", "sparse_parity", "--subset", "1,x"], "--subset"),
    ],
)
def test_profile_errors_are_one_line_exit_2(capsys, argv, needle):
    try:
        code = main(["profile", *argv])
    except SystemExit as exc:  # argparse's own checks (types, ranges) exit the same way
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err
