"""Does one `trl-env train` command make a real model learn a game? Runs the product's commands
and tabulates; it holds no training logic of its own.

1. ``trl-env train ENV --model MODEL --lora [--minutes M] [--recipe NAME] [--max-steps N]
   --out OUT/run`` (plus any ``--train-arg``), timed;
2. ``trl-env eval ENV --policy X --episodes N --seed S --temperature 0`` for X in: the base model,
   the run's warm start (``OUT/run/warm_start``, when the run made one), the env's random policy,
   and the trained run, with the run's own env kwargs, turn limit and token budgets (read from
   ``OUT/run/config.yaml``), so all four play the same held-out games;
3. prints one JSON line and writes ``OUT/result.json``:
   ``{"env", "before", "warm_start", "random", "after"}`` each with ``success_ci_low``,
   ``success_ci_high``, ``mean_turns`` (and the rest of the eval's summary), plus ``steps``,
   ``wall_s`` (the train command), ``stopped_by``, ``peak_rss_gb``, ``cpu``, ``commit``,
   ``command``, ``after_above`` (after's interval entirely above each reference's, recomputed
   from the intervals) and ``idle`` (the load average before the run: figures from a busy
   machine are slower). Where the run kept ``OUT/run/best`` (the model of its best in-training
   held-out eval), it is evaluated too, as ``best``, with ``best_step``, ``best_above`` and
   ``best_judged_on_other_seeds`` (false when the in-training evals played some of the judged
   seeds: pass ``--train-arg=--eval-seed --train-arg=S`` with S away from ``--eval-seed``). A run
   whose ``final/`` is its best eval's (``--final-model best``: ``final_model`` says which) gets
   ``final_model_step`` and ``after_judged_on_other_seeds`` instead, ``after`` playing that model,
   and its last step's model (``OUT/run/last``) is evaluated as ``last``.

Every eval's ``results.json`` and transcripts stay in ``OUT/eval/<name>``, and the run folder
(``metrics.csv``, ``learning_curve.png``, ``run.json``) in ``OUT/run``.

Run (the Hangman command of docs/multiturn.md; about an hour on a 2-core CPU with AMX):
    python benchmarks/real_model_learning.py --env TextHangman-v0 --minutes 55 \\
        --eval-seed 10000 --eval-episodes 256 --out benchmarks/results/learning_hangman
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, cli, run_facts, run_settings_flags, run_train, wilson_interval

REFERENCES = ("before", "warm_start", "random")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="default: %(default)s")
    parser.add_argument(
        "--env", default=None, help="default: the --recipe's env, else TextHangman-v0"
    )
    parser.add_argument("--minutes", type=float, default=None, help="trl-env train --minutes")
    parser.add_argument("--max-steps", type=int, default=None, help="trl-env train --max-steps")
    parser.add_argument("--recipe", default=None, help="trl-env train --recipe")
    parser.add_argument("--lora", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--train-arg", action="append", default=[], metavar="ARG",
        help="one more argument for trl-env train (repeat: --train-arg=--seed --train-arg=1)",
    )  # fmt: skip
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=256)
    parser.add_argument("--eval-batch-size", type=int, default=32)
    parser.add_argument("--out", default="real_model_learning_out")
    args = parser.parse_args(argv)
    if args.env is None:
        from trl_env.trl.training import load_recipe

        args.env = load_recipe(args.recipe)["env_ids"][0] if args.recipe else "TextHangman-v0"
    return args


def train_command(args: argparse.Namespace, run: Path) -> list[str]:
    """The ``trl-env train`` command this benchmark runs (the one the docs show)."""
    command = ["trl-env", "train", args.env, "--model", args.model]
    command += ["--lora"] if args.lora else ["--no-lora"]  # explicit: a recipe may set lora
    for flag, value in (("--minutes", args.minutes), ("--max-steps", args.max_steps)):
        if value is not None:
            command += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    command += ["--recipe", args.recipe] if args.recipe else []
    return [*command, *args.train_arg, "--out", str(run), "--no-progress"]


def eval_command(args: argparse.Namespace, policy: str, settings: dict[str, Any], out: Path):
    """``trl-env eval`` of ``policy`` on the held-out seeds, with the run's game settings."""
    command = ["trl-env", "eval", args.env, "--policy", policy, "--episodes",
               str(args.eval_episodes), "--seed", str(args.eval_seed), "--temperature", "0",
               "--batch-size", str(args.eval_batch_size), "--json", "--no-progress",
               "--out", str(out), "--overwrite"]  # fmt: skip
    return [*command, *run_settings_flags(settings)]


def summarize(results: dict[str, Any], env: str) -> dict[str, Any]:
    """The eval's summary of ``env``, with the success interval recomputed from the wins."""
    summary = dict(results["envs"][env])
    episodes = summary["episodes"]
    wins = round(summary["success_rate"] * episodes)
    low, high = wilson_interval(wins, episodes)
    summary.update(wins=wins, success_ci_low=round(low, 4), success_ci_high=round(high, 4))
    return summary


def judged_on_other_seeds(settings: dict[str, Any], args: argparse.Namespace) -> bool:
    """Whether the judged seeds miss every seed the run's in-training evals played (those chose
    ``RUN/best``, and ``RUN`` itself with ``--final-model best``)."""
    from trl_env.trl.training._config import EVAL_SEED

    first = settings.get("eval_seed")
    first = EVAL_SEED if first is None else int(first)
    seen = range(first, first + int(settings["eval_episodes"]))
    return not set(seen) & set(range(args.eval_seed, args.eval_seed + args.eval_episodes))


def final_facts(
    record: dict[str, Any], settings: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """A ``--final-model best`` run: ``final/`` (``after``) is its best eval's model; its step and
    whether it is judged on seeds its choice never saw (``last`` is the last step's model)."""
    return {
        "final_model": "best",
        "final_model_step": record.get("final_model_step"),
        "after_judged_on_other_seeds": judged_on_other_seeds(settings, args),
    }


def best_facts(
    result: dict[str, Any], run: Path, settings: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """``RUN/best`` (the model of the run's best in-training held-out eval), where the run kept
    one and ``final/`` is not it: its step, whether it is judged on seeds its choice never saw
    (the in-training evals played ``eval_seed ..`` of the run's settings), and its interval
    against each reference."""
    if "best" not in result:
        return {"best": None}
    chosen = json.loads((run / "best" / "best.json").read_text(encoding="utf-8"))
    return {
        "best_step": chosen.get("step"),
        "best_judged_on_other_seeds": judged_on_other_seeds(settings, args),
        "best_above": {
            name: result["best"]["success_ci_low"] > result[name]["success_ci_high"]
            for name in REFERENCES
            if result[name]
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = Path(args.out)
    run = out / "run"
    out.mkdir(parents=True, exist_ok=True)
    train = train_command(args, run)
    train_run = run_train(train, run)
    settings = train_run.settings
    policies = {"before": args.model, "random": "random", "after": str(run)}
    if (run / "warm_start").is_dir():
        policies["warm_start"] = str(run / "warm_start")
    final_is_best = train_run.record.get("final_model") == "best"
    if final_is_best:  # "after" plays best/'s model: the last step's is the one to compare
        policies["last"] = str(run / "last")
    elif (run / "best" / "best.json").is_file():
        policies["best"] = str(run / "best")
    result: dict[str, Any] = {"env": args.env}
    commands = {}
    for name, policy in policies.items():
        command = eval_command(args, policy, settings, out / "eval" / name)
        commands[name] = shlex.join(command)
        print("$", commands[name], flush=True)
        # stdout is the JSON report; stderr (progress, errors) goes to the terminal.
        done = subprocess.run(cli(command), check=True, stdout=subprocess.PIPE, text=True)
        result[name] = summarize(json.loads(done.stdout), args.env)
    result.setdefault("warm_start", None)
    references = [result[name] for name in REFERENCES if result[name]]
    result.update(
        {
            "after_above": {
                name: result["after"]["success_ci_low"] > result[name]["success_ci_high"]
                for name in REFERENCES
                if result[name]
            },
            "after_above_all": all(
                result["after"]["success_ci_low"] > r["success_ci_high"] for r in references
            ),
            **(
                final_facts(train_run.record, settings, args)
                if final_is_best
                else {"final_model": "last", **best_facts(result, run, settings, args)}
            ),
            **run_facts(train_run, train),
            "eval_commands": commands,
        }
    )
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
