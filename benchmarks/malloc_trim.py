"""Peak memory of ``trl-env train`` with and without returning freed heap pages between phases.

Runs the product's command, ``trl-env train ENV --model MODEL --lora --warm-start none
--max-steps N --eval-every E``, once with ``TRL_ENV_MALLOC_TRIM=0`` (glibc keeps what each phase
frees: the heap fragments and grows) and once as shipped (``trl_env._memory``: ``malloc_trim(0)``
after every rollout, training step and held-out eval), each in its own process with the same seed,
so both play the same first step. Reads each run's ``run.json`` (peak RSS of the whole command)
and ``metrics.csv`` (``peak_rss_gb`` after each step, ``step_time``).

Prints one line per run and, as its last line, one JSON object: ``before_gb`` (peak RSS without
the trim), ``after_gb`` (with it), ``ratio``, the median step times of both, each step's peak,
the CPU (model, flags, torch threads), the commit and the command.

The default shape is the default Hangman command's after its warm start: pass the warm-started
model of ``trl-env train TextHangman-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf --lora`` (its
``RUN/warm_start/merged`` folder) as ``--model``.

Run:
    python benchmarks/malloc_trim.py --model RUN/warm_start/merged --steps 12 --eval-every 6
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import cli, git_commit


def run_once(args: argparse.Namespace, trim: bool, out: Path) -> dict[str, object]:
    """One ``trl-env train`` run with the trim on or off; its peak and per-step figures."""
    command = [
        "trl-env", "train", args.env, "--model", args.model, "--lora", "--warm-start", "none",
        "--max-steps", str(args.steps), "--eval-every", str(args.eval_every), "--no-plot",
        "--no-progress", "--seed", str(args.seed), "--out", str(out), "--overwrite",
    ]  # fmt: skip
    env = {**os.environ, "TRL_ENV_MALLOC_TRIM": "1" if trim else "0"}
    started = time.perf_counter()
    subprocess.run(cli(command), check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - started
    with open(out / "metrics.csv", encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if row.get("step_time")]
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {
        "trim": trim,
        "peak_rss_gb": record["peak_rss_gb"],
        "peak_rss_gb_by_step": [float(row["peak_rss_gb"]) for row in rows],
        "median_step_s": round(statistics.median(float(row["step_time"]) for row in rows), 2),
        "turns": [float(row["env/mean_turns"]) for row in rows],
        "wall_s": round(wall, 1),
        "machine": record["machine"],
        "command": f"TRL_ENV_MALLOC_TRIM={int(trim)} " + shlex.join(command),
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a model directory or .gguf file")
    parser.add_argument("--env", default="TextHangman-v0")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--eval-every", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="keep the run folders here")
    args = parser.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="malloc_trim_"))
    load = os.getloadavg()[0]
    runs = []
    for trim in (False, True):
        run = run_once(args, trim, out / ("trim" if trim else "no_trim"))
        print(json.dumps(run), flush=True)
        runs.append(run)
    before, after = runs
    result = {
        "env": args.env,
        "before_gb": before["peak_rss_gb"],
        "after_gb": after["peak_rss_gb"],
        "ratio": round(before["peak_rss_gb"] / after["peak_rss_gb"], 3),
        "before_step_s": before["median_step_s"],
        "after_step_s": after["median_step_s"],
        "runs": runs,
        "steps": args.steps,
        "cpu": after["machine"],
        "idle": load < 0.5,
        "load_average_before": round(load, 2),
        "commit": git_commit(),
        "command": shlex.join(["benchmarks/malloc_trim.py", *(argv or sys.argv[1:])]),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
