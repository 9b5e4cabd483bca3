"""``trl-env train`` with a step's batch trained in one pass and in passes of ``--micro-batch``.

Runs the product's command, ``trl-env train ENV --model MODEL --lora --warm-start none
--max-steps N --micro-batch K``, once per setting and round (settings alternate, so slow drift
of the machine hits them alike), each in its own process, and reads each run's ``metrics.csv``
(``time/train_s``: the step's log-probability passes, forward, backward and optimizer;
``time/generation_s``) and ``run.json`` (peak RSS of the whole command). The same seed gives
every setting the same tasks; the first step's episodes are the same model's, so they match.

Prints one line per run, a table (median training seconds per step over all measured steps,
generation, peak RSS), and as its last line one JSON object: ``before_s`` (the first setting's
median training seconds per step: the whole batch), ``after_s`` (the last setting's), ``ratio``,
each setting's medians, the CPU (model, flags, torch threads), the commit and the command.

The default multi-turn shape is the default Hangman command's after its warm start: pass the
warm-started model of ``trl-env train TextHangman-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf
--lora`` (its ``RUN/warm_start/merged`` folder) as ``--model``, or the GGUF itself for the
base model's (longer) episodes.

Run:
    python benchmarks/training_micro_batches.py --model RUN/warm_start/merged --settings 16 4
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, cli, git_commit


def run_once(args: argparse.Namespace, micro: int, out: Path) -> dict[str, object]:
    """One ``trl-env train`` run with passes of ``micro`` episodes; its per-step figures."""
    command = [
        "trl-env", "train", args.env, "--model", args.model, "--lora",
        "--warm-start", "none", "--max-steps", str(args.steps), "--micro-batch", str(micro),
        "--eval-every", "0", "--no-plot", "--no-progress", "--seed", str(args.seed),
        "--out", str(out), "--overwrite",
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(cli(command), check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    with open(out / "metrics.csv", encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if row.get("time/train_s")]
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {
        "train_s": [float(row["time/train_s"]) for row in rows],
        "generation_s": [float(row["time/generation_s"]) for row in rows],
        "turns": [float(row["env/mean_turns"]) for row in rows],
        "peak_rss_gb": record["peak_rss_gb"],
        "wall_s": round(wall, 1),
        "machine": record["machine"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="a .gguf file or model dir")
    parser.add_argument("--env", default="TextHangman-v0")
    parser.add_argument(
        "--settings", nargs="+", type=int, default=[16, 4],
        help="episodes per training pass to compare (the first: the whole batch)",
    )  # fmt: skip
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps per run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    runs: dict[int, list[dict[str, object]]] = {micro: [] for micro in args.settings}
    folder = Path(tempfile.mkdtemp(prefix="training_micro_batches_"))
    try:
        for round_ in range(args.rounds):
            for micro in args.settings:
                result = run_once(args, micro, folder / f"{micro}-{round_}")
                runs[micro].append(result)
                train = ", ".join(f"{s:.1f}" for s in result["train_s"])  # type: ignore[attr-defined]
                print(f"round {round_ + 1}  passes of {micro:2d}: training {train} s a step, "
                      f"peak RSS {result['peak_rss_gb']} GB", flush=True)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    def median(micro: int, key: str) -> float:
        return statistics.median(v for run in runs[micro] for v in run[key])  # type: ignore[attr-defined]

    machine = runs[args.settings[0]][0]["machine"]
    print(f"\n{args.env}, {args.steps} steps x {args.rounds} rounds a setting; "
          f"{machine['summary']}")  # type: ignore[index]  # fmt: skip
    print(f"{'episodes a pass':>16s} {'train s/step':>13s} {'min':>7s} {'max':>7s} "
          f"{'generation s':>13s} {'turns':>6s} {'peak RSS GB':>12s}")  # fmt: skip
    for micro in args.settings:
        trains = [v for run in runs[micro] for v in run["train_s"]]  # type: ignore[attr-defined]
        peak = max(run["peak_rss_gb"] for run in runs[micro])  # type: ignore[type-var]
        print(f"{micro:16d} {median(micro, 'train_s'):13.1f} {min(trains):7.1f} "
              f"{max(trains):7.1f} {median(micro, 'generation_s'):13.1f} "
              f"{median(micro, 'turns'):6.1f} {peak:12.2f}")  # fmt: skip
    before, after = median(args.settings[0], "train_s"), median(args.settings[-1], "train_s")
    print(json.dumps({
        "before_s": round(before, 1), "after_s": round(after, 1), "ratio": round(before / after, 2),
        "before": f"passes of {args.settings[0]}", "after": f"passes of {args.settings[-1]}",
        "runs": {str(micro): results for micro, results in runs.items()},
        "env": args.env, "steps": args.steps, "rounds": args.rounds, "cpu": machine,
        "commit": git_commit(), "command": " ".join(["python", *sys.argv]),
        "idle": load_before < 0.5, "load_average_before": round(load_before, 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
