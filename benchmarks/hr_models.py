"""Issue 40's table, by hand: models trained in Hahn & Rofin's conventions (tests/_hr_model.py)
certified by check-model through a state_dict with flags, a pickle and --module with
--module-kwargs; per run the command, exit code, wall time and how many of the 2^N certified
labels equal the model's own predictions (output > 0.5, float32).

    PYTHONPATH=$PWD python benchmarks/hr_models.py [--steps 3000] [--out DIR]

Say the machine's load (uptime) next to the times.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
import _hr_model as hr  # noqa: E402

from verify.model import Params, truth_table  # noqa: E402

MODELS = [("parity", 8, 16), ("parity", 8, 32), ("majority", 10, 16), ("majority", 10, 32),
          ("first", 10, 16), ("first", 10, 32)]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--out", default="/tmp/hr_models")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    rows = []
    for function, n, d in MODELS:
        name = f"{function}_N{n}_D{d}"
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        model = hr.train(function, n, d, steps=args.steps, batch=64, seed=0)
        train_s = time.perf_counter() - t0
        own = hr.predictions(model, n)
        idx = np.arange(1 << n)
        x = torch.from_numpy(((idx[:, None] >> np.arange(n)) & 1).astype(np.int64))
        acc = float(np.mean(own == hr.TARGETS[function](x).numpy()))
        sd, pk = out / f"{name}.pt", out / f"{name}_pickle.pt"
        torch.save(model.state_dict(), sd)
        torch.save(model, pk)
        kwargs = json.dumps({"hidden_dim": d, "num_attn_heads": 2, "num_layers": 2, "max_len": n})
        flags = "-H 2 --eps 1e-5 --norm post --final-norm no --activation relu --eos no"
        forms = {
            "state_dict": f"{sd} {flags}",
            "pickle": f"{pk} --trust-pickle",
            "module": f"{sd} --module tests/_hr_model.py:HRTransformer --module-kwargs '{kwargs}'",
            "no --threshold": f"{sd} {flags}",
            "no -N": f"{sd} {flags}",
            "-H 1 (wrong)": f"{sd} {flags.replace('-H 2', '-H 1')}",
            "--norm pre (wrong)": f"{sd} {flags.replace('--norm post', '--norm pre')}",
        }
        for form, rest in forms.items():
            saved = out / f"{name}_{form.split()[0]}.npz"
            if saved.exists():
                saved.unlink()
            n_flag = "" if form == "no -N" else f"-N {n}"
            thr = "" if form == "no --threshold" else "--threshold 0.5"
            cmd = (f"python -m verify check-model {rest} {n_flag} {thr} --family {function}"
                   f" --save {saved}")  # fmt: skip
            env = {**os.environ, "PYTHONPATH": f"{HERE}:{HERE / 'tests'}"}
            t0 = time.perf_counter()
            argv = [sys.executable, *shlex.split(cmd)[1:]]
            proc = subprocess.run(argv, capture_output=True, text=True, cwd=HERE, env=env)
            secs = time.perf_counter() - t0
            agree = "-"
            if proc.returncode == 0 and saved.exists():
                table = truth_table(Params.load(saved), n)
                agree = f"{int(np.sum(table.label == own))}/{1 << n}"
            warn = [
                ln.split("with ", 1)[1].split(" the same file")[0]
                for ln in proc.stdout.splitlines()
                if "WARNING: with" in ln
            ]
            if warn:
                warn = ["another function with " + ", ".join(warn)]
            err = proc.stderr.strip().splitlines()[-1][:120] if proc.returncode else ""
            rows.append((name, f"{acc:.3f}", f"{train_s:.0f}", form, proc.returncode,
                         f"{secs:.1f}", agree, err or "; ".join(warn)))  # fmt: skip
            print(" | ".join(map(str, rows[-1])), flush=True)
    print()
    print("| model | accuracy | train s | form | exit | s | certified = own | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(map(str, r)) + " |")


if __name__ == "__main__":
    main()
