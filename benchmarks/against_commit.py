"""Issue 29's targets as whole-process timings, this tree against a baseline commit (default
a74de4b, where the issue measured), both measured in this one run (run by hand; not a test).

    PYTHONPATH=. .venv/bin/python benchmarks/against_commit.py [--baseline a74de4b]
        [--rounds 3] [--scenario report-warm sweep-n20 check-model report-cold]
        [--cells 8] [--cells-l1 128] [-N 20] [--check-model-N 16]

The baseline is exported with ``git archive`` into a temporary folder (nothing in the
repository changes) and runs with this virtual environment, so only the code differs. The two
trees run in turn, A B A B ..., ``--rounds`` times per scenario, each run a new process
(``sys.executable -m verify ...`` with the tree on ``PYTHONPATH``); each tree keeps its own
Numba cache (``NUMBA_CACHE_DIR``), warmed by one untimed run before a warm scenario and fresh
for every run of ``report-cold``. ``--cache-dir DIR`` keeps the caches and the baseline's tree
in DIR between invocations; ``--warm-only`` fills them (e.g. while the machine is busy) and
``--no-warmup`` then skips the untimed runs. Printed per scenario: min / median / max wall and
CPU seconds of each tree, the ratio baseline / this tree of the medians and of each round's
pair, the issue's target, and, where the work is one kind of pass over 2^N strings, the flop limit:
flops per string (``benchmarks/limit.py``) x strings / (the machine rate measured at the start
of this run x cores) and how far each tree is from it. ``uptime`` is printed before and after.

Scenarios (the issue's targets):

- ``report-warm``: ``report --quick``, warm cache (target <= 20 s wall on 2 idle cores);
- ``report-cold``: the same with an empty Numba cache; report.json's ``kernels`` phase is the
  compile time (target <= 60 s);
- ``sweep-n20``: a random-init sweep at N (default 20), D = 16, L = 1 and 2, uniform and
  xavier_normal, ``--cells`` seeds per setting: cells per second (target >= 5x the baseline);
- ``sweep-l1``: one setting, xavier_normal, L = 1, N, D = 16, ``--cells-l1`` seeds (default
  128): the whole command's wall time, and from its records the cells' own seconds summed
  (``runtime_s``: without the start-up, but each worker's first cells carry its imports and
  kernel loads) and the median cell (the steady state);
- ``check-model``: ``check-model`` on a (32, 4) xavier_normal model (eps 1e-5, seed 0, written
  by this tree in the spec's .npz format, which both trees read) at ``--check-model-N``
  (target: N = 20 in <= 15 s); its flop limit is that of the full pass with diagnostics
  (every position in every layer, ``benchmarks/bench_check_model.py``), the certified table's
  smaller count (``limit.py``) being a lower bound of the rest of the work.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_check_model import flops_per_string as full_pass_flops  # noqa: E402
from bench_report import uptime  # noqa: E402
from limit import flops_per_string, machine_rate  # noqa: E402


@dataclass
class Tree:
    name: str
    root: Path
    cache: Path

    def env(self, cache: Path | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.root)
        env["NUMBA_CACHE_DIR"] = str(cache or self.cache)
        return env


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)


def run(tree: Tree, argv: list[str], cache: Path | None = None) -> tuple[float, float]:
    """(wall s, CPU s of the children) of one ``python -m verify ...`` process in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "verify", *argv],
        cwd=tree.root,
        env=tree.env(cache),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: some statement undecided or some cell failed
        sys.exit(f"{tree.name}: {' '.join(argv)} exited {proc.returncode}\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def stats(xs: list[float]) -> str:
    return f"{min(xs):8.2f} {statistics.median(xs):8.2f} {max(xs):8.2f}"


@dataclass
class Scenario:
    name: str
    target: str
    argv: Callable[[Path], list[str]]  # given a fresh scratch folder
    warm: bool = True
    flops: float | None = None  # flops of the whole command's passes, if one kind of pass
    after: Callable[[Path], str] | None = None  # a note read from the scratch folder


def measure(
    sc: Scenario, trees: list[Tree], rounds: int, scratch: Path, warmup: bool = True
) -> dict[str, Timing]:
    out = {t.name: Timing() for t in trees}
    if sc.warm and warmup:
        for t in trees:  # fill this tree's cache; not timed
            run(t, sc.argv(Path(tempfile.mkdtemp(dir=scratch))))
    for _ in range(rounds):
        for t in trees:
            folder = Path(tempfile.mkdtemp(dir=scratch))
            cache = None if sc.warm else Path(tempfile.mkdtemp(dir=scratch, prefix="cache"))
            wall, cpu = run(t, sc.argv(folder), cache)
            out[t.name].wall.append(wall)
            out[t.name].cpu.append(cpu)
            if sc.after:
                out[t.name].extra.append(sc.after(folder))
    return out


def report_phase(folder: Path) -> str:
    doc = json.loads((folder / "report.json").read_text())
    kernels = doc.get("kernels") or {}
    seconds = kernels.get("seconds")
    return "" if seconds is None else f"kernels {seconds:.1f} s"


def sweep_cells(folder: Path) -> str:
    """The cells' own seconds from a sweep's records: their sum and the median cell."""
    runtimes = [
        json.loads(line)["runtime_s"]
        for line in (folder / "s.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return f"cells {sum(runtimes):.2f} s summed, median {1e3 * statistics.median(runtimes):.0f} ms"


def scenarios(args: argparse.Namespace, model: Path) -> dict[str, Scenario]:
    n = args.N
    cells = args.cells
    sweep_flops = 0.0
    for layers in (1, 2):  # D = 16, H = 2, d_ff = 64, S = N + 1; 2 schemes x cells seeds
        sweep_flops += 2 * cells * flops_per_string(16, 2, 64, layers, n + 1) * 2.0**n
    cm_n = args.check_model_N
    return {
        "report-warm": Scenario(
            "report-warm",
            "<= 20 s wall on 2 idle cores",
            lambda f: ["report", "--quick", "--no-progress", "--out", str(f)],
            after=report_phase,
        ),
        "report-cold": Scenario(
            "report-cold",
            "kernels <= 60 s on 2 idle cores, empty cache",
            lambda f: ["report", "--quick", "--no-progress", "--out", str(f)],
            warm=False,
            after=report_phase,
        ),
        "sweep-n20": Scenario(
            "sweep-n20",
            ">= 5x the baseline's cells per second",
            lambda f: [
                *("sweep", "--out", str(f / "s.jsonl"), "-N", str(n), "--no-progress"),
                *f"-D 16 -L 1 2 --scheme uniform xavier_normal --seeds 0:{cells}".split(),
            ],
            flops=sweep_flops,
        ),
        "sweep-l1": Scenario(
            "sweep-l1",
            ">= 5x the baseline's cells per second (one layer, xavier_normal)",
            lambda f: [
                *("sweep", "--out", str(f / "s.jsonl"), "-N", str(n), "--no-progress"),
                *f"-D 16 -L 1 --scheme xavier_normal --seeds 0:{args.cells_l1}".split(),
            ],
            flops=args.cells_l1 * flops_per_string(16, 2, 64, 1, n + 1) * 2.0**n,
            after=sweep_cells,
        ),
        "check-model": Scenario(
            "check-model",
            "N = 20 in <= 15 s on 2 cores",
            lambda f: ["check-model", str(model), "-N", str(cm_n), "--json"],
            flops=float(full_pass_flops(32, 128, 4, cm_n + 1)) * 2.0**cm_n,
        ),
    }


def write_model(path: Path) -> None:
    from verify.model import ModelConfig, init_params

    cfg = ModelConfig(d_model=32, n_layers=4, n_heads=2, ln_eps=1e-5, max_len=64)
    init_params(cfg, seed=0, scheme="xavier_normal").save(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="a74de4b")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenario", nargs="+", default=["report-warm", "sweep-n20", "check-model"])
    ap.add_argument("--cells", type=int, default=4, help="seeds per (L, scheme) in sweep-n20")
    ap.add_argument("--cells-l1", type=int, default=128, help="seeds of sweep-l1")
    ap.add_argument("-N", type=int, default=20, help="N of sweep-n20")
    ap.add_argument("--check-model-N", type=int, default=16)
    ap.add_argument(
        "--cache-dir",
        type=Path,
        help="keep each tree's warm Numba cache (and the baseline's tree) here between"
        " invocations (default: temporary)",
    )
    ap.add_argument(
        "--warm-only",
        action="store_true",
        help="only fill both trees' caches (the untimed runs), e.g. before an idle moment",
    )
    ap.add_argument(
        "--no-warmup",
        action="store_true",
        help="no untimed run before a warm scenario: --cache-dir holds warm caches already",
    )
    args = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; {os.cpu_count()} cores")
    print(f"# uptime before: {uptime()}")
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True).stdout
    rate = machine_rate()
    cores = os.cpu_count() or 1
    print(f"# machine rate {rate:.2f} GFLOP/s per core (limit.machine_rate), {cores} cores")
    with tempfile.TemporaryDirectory(prefix="against-commit-") as tmp:
        scratch = Path(tmp)
        caches = args.cache_dir or scratch
        # with --cache-dir the baseline tree stays there too: Numba's cache is keyed by the
        # source files' paths, so a warm cache needs the same tree at the same place
        base_root = caches / f"tree-{args.baseline}"
        if not (base_root / "verify").is_dir():
            base_root.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(
                ["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(base_root)], input=archive, check=True)
        (caches / f"cache-{head}").mkdir(parents=True, exist_ok=True)
        (caches / f"cache-{args.baseline}").mkdir(parents=True, exist_ok=True)
        trees = [
            Tree(f"this ({head}{'+dirty' if dirty else ''})", ROOT, caches / f"cache-{head}"),
            Tree(f"baseline ({args.baseline})", base_root, caches / f"cache-{args.baseline}"),
        ]
        model = scratch / "model_32x4.npz"
        write_model(model)
        table = scenarios(args, model)
        if args.warm_only:
            for name in args.scenario:
                if table[name].warm:
                    for t in trees:
                        run(t, table[name].argv(Path(tempfile.mkdtemp(dir=scratch))))
            print(f"# caches filled in {caches}")
            return
        for name in args.scenario:
            sc = table[name]
            print(f"\n## {name} (target: {sc.target}); {args.rounds} rounds, A B A B ...")
            res = measure(sc, trees, args.rounds, scratch, not args.no_warmup)
            print(f"{'tree':28} {'wall min/med/max (s)':>28} {'cpu min/med/max (s)':>28}")
            for t in trees:
                r = res[t.name]
                extra = f"  [{'; '.join(x for x in r.extra if x)}]" if any(r.extra) else ""
                print(f"{t.name:28} {stats(r.wall):>28} {stats(r.cpu):>28}{extra}")
            this, base = (res[t.name] for t in trees)
            pairs = [b / a for a, b in zip(this.wall, base.wall, strict=True)]
            ratio = statistics.median(base.wall) / statistics.median(this.wall)
            print(f"baseline / this, wall: {ratio:.2f}x (medians); per round {stats(pairs)}")
            if sc.flops is not None:
                limit = sc.flops / (rate * 1e9 * cores)
                for t in trees:
                    med = statistics.median(res[t.name].wall)
                    print(f"flop limit {limit:.2f} s: {t.name} at {med / limit:.1f}x the limit")
    print(f"\n# uptime after: {uptime()}")


if __name__ == "__main__":
    main()
