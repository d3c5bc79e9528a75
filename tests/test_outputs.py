"""No output overwrites another output or an input; sizes are checked first; every bad input or
failure is one line (exit 2 usage, 1 failure). The cases of issue 27 and further ones; the
signal faults are in tests/test_faults.py."""

from __future__ import annotations

import csv
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import run_cli

from verify.errors import ValidationError

LONG = "a" * 300


_cli = run_cli


def _one_line(err: str, needle: str) -> None:
    lines = err.strip().splitlines()
    assert lines and needle in lines[-1], err
    assert "Traceback" not in err, err


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any work (a sweep run, a report, a profile) fails the test: errors must come first."""

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("work started before the inputs were checked")

    monkeypatch.setattr("verify.sweep.run_sweep", boom)
    monkeypatch.setattr("verify.report.generate_report", boom)
    monkeypatch.setattr("verify.commands.profile.function_from_args", boom)


RF = ["--kind", "random_function", "-N", "4", "--seeds", "0:6", "-j", "1", "--no-progress"]


# ------------------------------------------------------------------ the silent losses
def test_readme_sweep_keeps_the_cell_csv_and_the_figure_data(tmp_path, capsys) -> None:
    """`--plot k0.png --csv k0.csv`: the cells' CSV (one row per cell) and the figure's data
    (k0.data.csv) are two files; neither overwrites the other."""
    png, table = tmp_path / "k0.png", tmp_path / "k0.csv"
    argv = ["sweep", "--out", str(tmp_path / "k0.jsonl"), *RF, "--plot", str(png)]
    code, err, _ = _cli([*argv, "--csv", str(table)], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 6 and {r["seed"] for r in rows} == {str(s) for s in range(6)}
    data = list(csv.DictReader((tmp_path / "k0.data.csv").open()))
    columns = {"series", "label", "x", "y", "y_low", "y_high", "n", "y_err_below", "y_err_above"}
    assert data and set(data[0]) == columns
    assert err.count(f"wrote {table}") == 1 and f"wrote {tmp_path / 'k0.data.csv'}" in err


def test_results_named_like_the_plot_data_survive(tmp_path, capsys) -> None:
    """`--out out/col.csv --plot out/col.png`: the results stay results (a rerun resumes)."""
    out = tmp_path / "col.csv"
    argv = ["sweep", "--out", str(out), *RF, "--plot", str(tmp_path / "col.png")]
    assert _cli(argv, capsys)[0] == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 6 and all("key" in r for r in records)
    code, err, _ = _cli(argv, capsys)
    assert code == 0 and "6 already done, 0 run now" in err, err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--csv", "{d}/s.jsonl"], "--csv: expected a file name ending in .csv"),
        (["--csv", "{d}/p.data.csv", "--plot", "{d}/p.png"], "it is --plot's file"),
        (["--plot", "{d}/s.png", "--csv", "{d}/s.data.csv"], "it is --plot's file"),
        (["--csv", "{d}/x/../c.csv", "--plot", "{d}/c.svg"], None),  # no clash: c.data.csv
    ],
)
def test_outputs_never_collide(tmp_path, capsys, no_work, extra, needle) -> None:
    argv = ["sweep", "--out", str(tmp_path / "s.jsonl"), *RF]
    argv += [a.format(d=tmp_path) for a in extra]
    (tmp_path / "x").mkdir()
    if needle is None:
        with pytest.raises(AssertionError, match="work started"):
            _cli(argv, capsys)
        return
    code, err, _ = _cli(argv, capsys)
    assert code == 2
    _one_line(err, needle)


def test_results_out_equal_to_its_data_file_is_refused(tmp_path, capsys, no_work) -> None:
    argv = ["sweep", "--out", str(tmp_path / "p.data.csv"), *RF, "--plot", str(tmp_path / "p.png")]
    code, err, _ = _cli(argv, capsys)
    assert code == 2
    _one_line(err, "--plot: expected a file no other output writes (it is --out's file")


def test_a_file_that_is_not_results_is_refused_not_cut(tmp_path, capsys, no_work) -> None:
    """`--out notes.txt` (text without a final newline): refused, not truncated."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nlast line without newline")
    before = notes.read_bytes()
    code, err, _ = _cli(["sweep", "--out", str(notes), *RF], capsys)
    assert code == 2 and notes.read_bytes() == before
    _one_line(err, "--out: expected a JSON-lines results file")


def test_report_folder_with_other_files_is_refused(tmp_path, capsys, no_work) -> None:
    (tmp_path / "thesis.tex").write_text("x")
    code, err, _ = _cli(["report", "--quick", "--out", str(tmp_path)], capsys)
    assert code == 2 and (tmp_path / "thesis.tex").read_text() == "x"
    _one_line(err, "it also holds thesis.tex, which replacing it would delete")


# ------------------------------------------------------------------ sizes, checked first
def test_a_billion_seeds_exit_2_with_the_estimate(tmp_path, capsys, no_work) -> None:
    argv = ["sweep", "--out", str(tmp_path / "s.jsonl"), "--kind", "random_function", "-N", "4"]
    code, err, _ = _cli([*argv, "--seeds", "0:1000000000"], capsys)
    assert code == 2
    _one_line(err, "--seeds: expected a run this machine can hold")
    assert "1000000000 cells" in err and "--allow-large runs it anyway" in err


def test_allow_large_streams_the_grid(tmp_path, capsys, monkeypatch) -> None:
    """With --allow-large the grid reaches the run as a stream: nothing lists a billion cells."""
    seen = {}

    def fake(args, grid, executor):
        seen["n"] = grid.n_cells
        seen["first"] = next(grid.iter_cells())
        seen["last_in"] = grid.contains({**seen["first"], "seed": 999_999_999})
        return 0

    monkeypatch.setattr("verify.commands.sweep._run_grid", fake)
    argv = ["sweep", "--out", str(tmp_path / "s.jsonl"), "--kind", "random_function", "-N", "4"]
    assert _cli([*argv, "--seeds", "0:1000000000", "--allow-large"], capsys)[0] == 0
    assert seen == {
        "n": 10**9,
        "first": {"kind": "random_function", "n_bits": 4, "seed": 0},
        "last_in": True,
    }


def test_large_n_for_a_transformer_is_refused(tmp_path, capsys, no_work, monkeypatch) -> None:
    monkeypatch.setattr("verify.sizes.available_bytes", lambda: 1e9)  # a 1 GB machine
    code, err, _ = _cli(["sweep", "--out", str(tmp_path / "s.jsonl"), "-N", "24"], capsys)
    assert code == 2
    _one_line(err, "-N/--n-bits: expected a run this machine can hold (1 GB of memory free)")


def test_seed_ranges_are_checked(tmp_path, capsys, no_work) -> None:
    for seeds, needle in (("5:3", "a range A:B with A < B"), ("x", '"A:B"'), ("-3", ">= 0")):
        code, err, _ = _cli(["sweep", "--out", str(tmp_path / "s.jsonl"), "--seeds", seeds], capsys)
        assert code == 2
        _one_line(err, needle)


# ------------------------------------------------------------------ tracebacks become one line
@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--out", f"{{d}}/{LONG}.jsonl"],
        ["report", "--quick", "--out", f"{{d}}/{LONG}"],
        ["profile", "-N", "4", "--plot", f"{{d}}/{LONG}.png"],
        ["sweep", "--out", "{d}/s.jsonl", "--csv", f"{{d}}/{LONG}.csv"],
    ],
)
def test_names_too_long_are_one_line(tmp_path, capsys, no_work, argv) -> None:
    code, err, _ = _cli([a.format(d=tmp_path) for a in argv], capsys)
    assert code == 2
    _one_line(err, "expected a path the file system can hold")


def test_huge_scale_is_one_line(capsys, no_work) -> None:
    code, err, _ = _cli(["profile", "--random", "--scale", "1e308", "-N", "4"], capsys)
    assert code == 2
    _one_line(err, "--scale: expected a real number <= 8.988e+307")


def test_train_without_torch_is_one_line(capsys, monkeypatch, tmp_path) -> None:
    pytest.importorskip("verify.torch")
    monkeypatch.setattr("verify.torch.requirement.torch", None)  # what require_torch reads
    code, err, _ = _cli(["train", "--out", str(tmp_path / "t.jsonl")], capsys)
    assert code == 2
    _one_line(err, "train: expected PyTorch installed")


def test_plot_data_file_that_is_a_folder_is_refused_first(tmp_path, capsys, no_work) -> None:
    (tmp_path / "x.data.csv").mkdir()
    code, err, _ = _cli(["profile", "-N", "4", "--plot", str(tmp_path / "x.png")], capsys)
    assert code == 2
    _one_line(err, "--plot: expected a file path, not a directory")


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("majority", "a family name not yet registered, got 'majority' (it is taken)"),
        ("json", "a module name not yet importable, got 'json' (it would shadow"),
        ("class", "a Python identifier"),
    ],
)
def test_new_family_refuses_taken_names(tmp_path, capsys, name, needle) -> None:
    code, err, _ = _cli(["new-family", name, "--dir", str(tmp_path)], capsys)
    assert code == 2 and not list(tmp_path.iterdir())
    _one_line(err, needle)


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from verify import plugins
    from verify.boolean import families

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("VERIFY_IMPORT", "")  # restored (removed) afterwards: --import sets it
    monkeypatch.setattr(families, "_FAMILIES", dict(families._FAMILIES))
    monkeypatch.setattr(plugins, "_loaded", set(plugins._loaded))
    yield tmp_path
    for mod in ("t27_badfam", "t27_twice", "t27_raises", "t43_prints", "t43_exits"):
        sys.modules.pop(mod, None)


def test_plugin_family_returning_a_list_is_one_line(plugin_dir, capsys) -> None:
    (plugin_dir / "t27_badfam.py").write_text(
        "from verify.boolean import register_family\n"
        "@register_family('t27_bad')\n"
        "def t27_bad(n):\n    return [0, 1]\n"
    )
    argv = ["profile", "--import", "t27_badfam", "--family", "t27_bad", "-N", "3"]
    code, err, _ = _cli(argv, capsys)
    assert code == 1
    _one_line(err, "family 't27_bad' (module t27_badfam) returned list [0, 1], expected a")


def test_plugin_family_that_raises_is_one_line(plugin_dir, capsys) -> None:
    (plugin_dir / "t27_raises.py").write_text(
        "from verify.boolean import register_family\n"
        "@register_family('t27_raise')\n"
        "def t27_raise(n):\n    return 1 / 0\n"
    )
    argv = ["profile", "--import", "t27_raises", "--family", "t27_raise", "-N", "3"]
    code, err, _ = _cli(argv, capsys)
    assert code == 1
    _one_line(err, "family 't27_raise' (module t27_raises) raised ZeroDivisionError")


def test_plugin_registering_a_builtin_name_is_one_line(plugin_dir, capsys) -> None:
    (plugin_dir / "t27_twice.py").write_text(
        "from verify.boolean import BooleanFunction, register_family\n"
        "@register_family('majority')\n"
        "def majority(n):\n    return None\n"
    )
    code, err, _ = _cli(["profile", "--import", "t27_twice", "-N", "3"], capsys)
    assert code == 1
    _one_line(err, "module t27_twice failed to import: ValueError: family 'majority' is")


def test_init_params_accepts_a_dict_or_says_what_it_expects() -> None:
    from verify.model import ModelConfig, init_params

    cfg = ModelConfig(d_model=8, n_layers=1, n_heads=2)
    a = init_params(cfg, "uniform", 3)
    b = init_params(cfg.to_dict(), "uniform", 3)
    assert list(a) == list(b) and all((a[k] == b[k]).all() for k in a)
    with pytest.raises(ValidationError, match="config: expected a ModelConfig or a dict"):
        init_params([8, 1], "uniform", 3)
    with pytest.raises(ValidationError, match="config: expected ModelConfig fields"):
        init_params({"d_model": 8, "width": 3}, "uniform", 3)


def test_an_os_failure_during_work_is_one_line_exit_1(tmp_path, capsys, monkeypatch) -> None:
    """A full disk (ENOSPC) while writing the CSV: one line naming the file, exit 1."""

    def full(rows, path):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("verify.sweep.write_csv", full)
    argv = ["sweep", "--out", str(tmp_path / "s.jsonl"), *RF, "--csv", str(tmp_path / "c.csv")]
    code, err, _ = _cli(argv, capsys)
    assert code == 1
    _one_line(err, f"error: No space left on device: {tmp_path / 'c.csv'}")


def test_only_runs_at_quick_unless_a_budget_is_given(tmp_path, capsys, monkeypatch) -> None:
    seen: list[str] = []

    def fake(out, **kw):
        seen.append(kw["budget"])
        raise KeyboardInterrupt  # stop here: only the budget matters

    monkeypatch.setattr("verify.report.generate_report", fake)
    for extra in ([], ["--default"], ["--full"]):
        argv = ["report", "--only", "Lemma 3.2", "--out", str(tmp_path / "r"), *extra]
        assert _cli(argv, capsys)[0] == 130
    assert seen == ["quick", "default", "full"]


def test_a_closed_stdout_is_quiet(capsys, monkeypatch) -> None:
    """`... | head`: the reader left; no error line, exit 141 (128 + SIGPIPE), like `yes`."""

    def gone(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("verify.commands.profile.run", gone)
    code, err, _ = _cli(["profile", "-N", "3"], capsys)
    assert code == 141 and err == ""


def test_the_entry_point_exits_with_the_commands_code_and_spares_the_final_collection(
    monkeypatch,
) -> None:
    """verify.cli.run (``python -m verify`` and the console script) exits with main's code,
    the live objects frozen out of the garbage collector so that the interpreter's shutdown
    does not walk them."""
    import gc

    from verify import cli

    monkeypatch.setattr(cli, "main", lambda: 3)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    before = gc.get_freeze_count()
    with pytest.raises(SystemExit) as exc:
        cli.run()
    try:
        assert exc.value.code == 3
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
        for sig, handler in handlers.items():  # run() set the shutdown handlers
            signal.signal(sig, handler)


# ------------------------------------------------------------------ the pieces, directly
def test_seeds_are_ranges_merged_once() -> None:
    from verify.sweep import Seeds

    s = Seeds([range(0, 5), 3, range(4, 8), 20])
    assert s.parts == (range(0, 8), range(20, 21)) and len(s) == 9
    assert list(s) == [0, 1, 2, 3, 4, 5, 6, 7, 20] and 20 in s and 8 not in s and s[8] == 20
    big = Seeds([range(10**12)])
    assert len(big) == 10**12 and 10**12 - 1 in big and big[-1] == 10**12 - 1


@pytest.mark.parametrize("exchange", [True, False])
def test_replace_dir_never_mixes(tmp_path, monkeypatch, exchange) -> None:
    """Old folder with a.png and b.png, new one with a.png only: afterwards exactly the new."""
    from verify import outputs

    if not exchange:  # the two-rename fallback of systems without renameat2
        monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    target = tmp_path / "r"
    target.mkdir()
    (target / "a.png").write_text("old")
    (target / "b.png").write_text("old")
    stage = outputs.staging_dir(target)
    (stage / "a.png").write_text("new")
    outputs.replace_dir(stage, target)
    assert {p.name: p.read_text() for p in target.iterdir()} == {"a.png": "new"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_staging_leftovers_of_dead_runs_are_removed(tmp_path) -> None:
    from verify import outputs

    dead = tmp_path / ".r.partial-999999999-x"  # no such process
    dead.mkdir()
    mine = outputs.staging_dir(tmp_path / "r")
    assert not dead.exists() and mine.is_dir() and mine.name.startswith(".r.partial-")


def test_interrupt_guard_defers_then_abandons() -> None:
    import os
    import signal

    from verify.interrupts import Abandoned, InterruptGuard

    said: list[str] = []
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a background job of a plain shell
    with InterruptGuard(lambda: said.append("asked") or "writing") as guard:
        with guard.deferred():
            os.kill(os.getpid(), signal.SIGINT)  # recorded, not raised: the files get written
            for _ in range(1000):
                pass
        assert guard.interrupted and guard.exit_code == 130 and said == ["asked"]
        with pytest.raises(Abandoned):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
    assert signal.getsignal(signal.SIGINT) is before  # the handler it found is back


def test_size_check_refuses_and_allows(monkeypatch) -> None:
    from verify import sizes

    monkeypatch.setattr(sizes, "available_bytes", lambda: 8e9)
    est = sizes.sweep_estimate(10**7, [10], "random_function", [16], [1], 2)
    assert est.bytes > 8e9  # 2 KB per kept record
    with pytest.raises(ValidationError, match="--seeds: expected a run this machine can hold"):
        sizes.check_size("--seeds", est, allow=False)
    assert sizes.check_size("--seeds", est, allow=True) is est
    small = sizes.sweep_estimate(400, [8, 10], "transformer", [16], [1, 2], 2)
    assert sizes.check_size("--seeds", small, allow=False) is small


def test_a_linked_report_folder_stays_a_link(tmp_path) -> None:
    from verify import outputs

    real = tmp_path / "real"
    real.mkdir()
    (real / "old.png").write_text("old")
    link = tmp_path / "latest"
    link.symlink_to(real, target_is_directory=True)
    stage = outputs.staging_dir(link)
    (stage / "new.png").write_text("new")
    outputs.replace_dir(stage, link)
    assert link.is_symlink() and sorted(p.name for p in link.iterdir()) == ["new.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "real"]


def test_check_model_save_over_its_checkpoint_is_refused_first(tmp_path, capsys) -> None:
    """`check-model P.npz --save P.npz` would overwrite the user's file: exit 2 before any work,
    the file unchanged."""
    from verify.model import ModelConfig, init_params

    path = tmp_path / "p.npz"
    init_params(ModelConfig(d_model=4, n_layers=1), "gaussian", seed=0).save(path)
    before = path.read_bytes()
    code, err, _ = _cli(["check-model", str(path), "-N", "3", "--save", str(path)], capsys)
    assert code == 2
    _one_line(err, "--save: expected a file that is not an input (it is CHECKPOINT's")
    assert path.read_bytes() == before


# ------------------------------------------------------------------ issue 43: report folders
def test_a_second_report_into_the_same_folder_is_refused(tmp_path, capsys, no_work) -> None:
    """Two `report` runs into one --out both printed "wrote" and only the second report
    remained. While one holds the folder, another exits 2 in one line, before any work."""
    from verify.outputs import folder_lock

    out = tmp_path / "r"
    with folder_lock("--out", out, "report"):
        argv = ["report", "--only", "Lemma 2.9", "--out", str(out), "--no-progress"]
        code, err, _ = _cli(argv, capsys)
    assert code == 2
    _one_line(err, "--out")
    assert "no other running `report`" in err
    assert not out.exists() or not any(out.iterdir())


def test_a_report_folder_gets_the_users_umask(tmp_path) -> None:
    """The folder was staged with mkdtemp (mode 0700), so colleagues and web servers could
    not read the report; it now has the mode the umask gives every other folder."""
    tests = Path(__file__).resolve().parent
    env = {
        **os.environ,
        "FAULT_CHECK_SECONDS": "0",
        "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)]),
    }
    argv = ["report", "--import", "_fault_statements", "--only", "Fault 1", "-j", "1"]
    argv += ["--out", "r", "--no-progress"]
    run = subprocess.run(
        [sys.executable, "-m", "verify", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert run.returncode == 0, run.stderr
    for folder in [tmp_path / "r", *(p for p in (tmp_path / "r").rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder


# ------------------------------------------------------------------ issue 43: plugins
def test_what_a_plugin_prints_on_import_goes_to_stderr(plugin_dir, capsys) -> None:
    """A plugin that printed on import corrupted `--json` (exit 0, stdout no longer JSON)."""
    (plugin_dir / "t43_prints.py").write_text("print('hello from the plugin')\n")
    argv = ["profile", "--import", "t43_prints", "--family", "majority", "-N", "3", "--json"]
    code, err, out = _cli(argv, capsys)
    assert code == 0, err
    assert json.loads(out)  # stdout is the JSON alone
    assert "hello from the plugin" in err


def test_a_plugin_calling_sys_exit_is_one_line_naming_it(plugin_dir, capsys) -> None:
    """`sys.exit(3)` in a plugin exited 3 with no message."""
    (plugin_dir / "t43_exits.py").write_text("import sys\nsys.exit(3)\n")
    code, err, out = _cli(["profile", "--import", "t43_exits", "-N", "3"], capsys)
    assert code == 1 and not out
    _one_line(err, "module t43_exits called sys.exit(3)")
