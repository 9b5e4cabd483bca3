"""Episode, turn and step-group credit on one game: the same ``trl-env train`` command once per
credit, each run judged by ``trl-env eval`` on the same held-out seeds. Runs the product's
commands and tabulates; it holds no training logic of its own.

1. ``trl-env train ENV --credit C --seed S --max-steps N [--model M] [--train-arg ...]
   --out OUT/C`` for C in ``--credits`` (default ``episode turn step-group``): the same seed,
   steps and settings, so the runs differ only in how each turn's advantage is computed
   (``docs/multiturn.md``);
2. ``trl-env eval ENV --policy OUT/C --episodes E --seed T --temperature 0 --out OUT/eval/C`` for
   each run (greedy, on seeds the training dataset never plays, with the run's own game settings);
   an arm whose run finished its steps and whose eval wrote ``OUT/eval/C/results.json`` is reused
   when the command runs again, so a stopped ablation resumes at the arm it stopped in;
3. prints a table and one JSON line, and writes ``OUT/result.json``: per credit its held-out
   ``success_rate``, ``success_ci_low``, ``success_ci_high`` (95% Wilson), ``mean_turns``,
   ``mean_return``, the train command's ``steps``, ``wall_s`` and the mean training-batch success
   of its last 10 steps; then ``above``: for each pair (A, B) whether A's interval lies entirely
   above B's (recomputed from the intervals), and ``winner``: the credit above every other, or
   ``None`` when no interval is apart (the runs do not tell the credits apart).

Run (the ablation of docs/multiturn.md; the tiny model: 14-17 minutes a run on a shared 2-core CPU):
    python benchmarks/credit_ablation.py --env TextLargestNumber-v0 --max-steps 400 \\
        --out benchmarks/results/credit_ablation
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import TrainedRun, cli, read_run, run_facts, run_settings_flags, run_train
from real_model_learning import summarize

CREDITS = ("episode", "turn", "step-group")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="TextLargestNumber-v0", help="default: %(default)s")
    parser.add_argument("--model", default=None, help="default: trl-env's tiny model")
    parser.add_argument("--credits", nargs="+", default=list(CREDITS), choices=CREDITS)
    parser.add_argument("--seed", type=int, default=0, help="trl-env train --seed")
    parser.add_argument("--max-steps", type=int, default=400, help="trl-env train --max-steps")
    parser.add_argument(
        "--train-arg", action="append", default=[], metavar="ARG",
        help="one more argument for every train command (repeat: --train-arg=--gamma "
        "--train-arg=0.9)",
    )  # fmt: skip
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=256)
    parser.add_argument(
        "--eval-batch-size", type=int, default=None,
        help="trl-env eval --batch-size (32 keeps a real model's eval of 256 games in minutes)",
    )  # fmt: skip
    parser.add_argument("--out", default="credit_ablation_out")
    return parser.parse_args(argv)


def train_command(args: argparse.Namespace, credit: str, run: Path) -> list[str]:
    """The ``trl-env train`` command of one credit (the others differ only in ``--credit``)."""
    command = ["trl-env", "train", args.env, "--credit", credit, "--seed", str(args.seed),
               "--max-steps", str(args.max_steps)]  # fmt: skip
    command += ["--model", args.model] if args.model else []
    return [*command, *args.train_arg, "--out", str(run), "--overwrite", "--no-progress"]


def eval_command(
    args: argparse.Namespace, run: Path, settings: dict[str, Any], out: Path
) -> list[str]:
    """The ``trl-env eval`` command of one run on the held-out seeds (its report saved in ``out``)."""
    command = ["trl-env", "eval", args.env, "--policy", str(run), "--episodes",
               str(args.eval_episodes), "--seed", str(args.eval_seed), "--temperature", "0",
               "--json", "--no-progress", *run_settings_flags(settings)]  # fmt: skip
    if args.eval_batch_size:
        command += ["--batch-size", str(args.eval_batch_size)]
    return [*command, "--out", str(out), "--overwrite"]


def held_out(
    args: argparse.Namespace, run: Path, settings: dict[str, Any], out: Path
) -> dict[str, Any]:
    """``trl-env eval`` of the run on the held-out seeds: its summary, interval recomputed."""
    command = eval_command(args, run, settings, out)
    print("$", shlex.join(command), flush=True)
    subprocess.run(cli(command), check=True, stdout=subprocess.DEVNULL)
    return evaluated(args, command, out)


def evaluated(args: argparse.Namespace, command: list[str], out: Path) -> dict[str, Any]:
    """The summary of the eval report saved in ``out`` (interval recomputed from the wins)."""
    report = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {"eval_command": shlex.join(command), **summarize(report, args.env)}


def finished_arm(args: argparse.Namespace, run: Path, out: Path) -> TrainedRun | None:
    """A run from an earlier, stopped invocation that trained all its steps and was evaluated:
    reused as it is (its wall time is the run's own ``wall_time_s``; the load before it unknown)."""
    if not ((run / "run.json").exists() and (out / "results.json").exists()):
        return None
    settings, record = read_run(run)
    if record.get("steps") != args.max_steps:
        return None
    return TrainedRun(settings, record, record["wall_time_s"], None)


def last_steps_success(run: Path, window: int = 10) -> float | None:
    """Mean training-batch success (``env/success_rate``) of the run's last ``window`` steps."""
    with (run / "metrics.csv").open(encoding="utf-8") as file:
        values = [float(row["env/success_rate"]) for row in csv.DictReader(file)
                  if row.get("env/success_rate") not in (None, "")]  # fmt: skip
    return round(sum(values[-window:]) / len(values[-window:]), 4) if values else None


def compare(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Which credit's held-out interval lies entirely above which (from the intervals)."""
    above = {
        f"{a} > {b}": results[a]["success_ci_low"] > results[b]["success_ci_high"]
        for a in results
        for b in results
        if a != b
    }
    winners = [a for a in results if all(above[f"{a} > {b}"] for b in results if b != a)]
    return {"above": above, "winner": winners[0] if winners else None}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    facts: dict[str, Any] = {}
    for credit in args.credits:
        run, eval_out = out / credit, out / "eval" / credit
        command = train_command(args, credit, run)
        trained = finished_arm(args, run, eval_out)
        if trained is None:
            trained = run_train(command, run)
            evaluation = held_out(args, run, trained.settings, eval_out)
        else:
            print(f"{credit}: reusing {run} and {eval_out} (trained and evaluated)", flush=True)
            evaluation = evaluated(
                args, eval_command(args, run, trained.settings, eval_out), eval_out
            )
        results[credit] = {
            **evaluation, "train_success_last_10": last_steps_success(run),
            **run_facts(trained, command),
        }  # fmt: skip
        facts = {key: results[credit][key] for key in ("cpu", "machine", "commit")}
    print(f"\n{args.env}, seed {args.seed}, {args.max_steps} steps; held-out greedy success on "
          f"{args.eval_episodes} seeds from {args.eval_seed}")  # fmt: skip
    print(f"{'credit':12s}{'success':>9s}{'95% CI':>18s}{'turns':>7s}{'train last 10':>15s}"
          f"{'wall s':>8s}")  # fmt: skip
    for credit, r in results.items():
        interval = f"[{r['success_ci_low']:.3f}, {r['success_ci_high']:.3f}]"
        print(f"{credit:12s}{r['success_rate']:9.3f}{interval:>18s}{r['mean_turns']:7.2f}"
              f"{r['train_success_last_10'] or 0:15.3f}{r['wall_s']:8.0f}")  # fmt: skip
    result = {"env": args.env, "seed": args.seed, "max_steps": args.max_steps,
              "eval_seed": args.eval_seed, "eval_episodes": args.eval_episodes,
              "credits": results, **compare(results), **facts}  # fmt: skip
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
