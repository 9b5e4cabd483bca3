"""Does self-play make a real model play a two-player game better? Runs the product's commands
and tabulates; it holds no training logic of its own.

1. ``trl-env train ENV --model MODEL --lora --self-play --warm-start random [--opponent X]
   [--minutes M] [--max-steps N] --out OUT/run`` (plus any ``--train-arg``), timed: a format warm
   start (SFT on the env's random-policy demos, kept as ``OUT/run/warm_start``), then self-play;
2. four head-to-head evals on the same held-out seeds (``trl-env eval ENV --policy A --opponent B
   --episodes N --seed S --temperature 0``; seats alternate over the seeds), with the run's token
   limits and system prompt (read from ``OUT/run/config.yaml``):
   ``vs_warm_start`` (the trained model against its warm-start model), ``vs_random_trained`` and
   ``vs_random_warm_start`` (each against the env's random player), and
   ``vs_warm_start_sampled`` (the first again with both models sampling at temperature 1: greedy
   against greedy replays one game per seating, ``distinct_games`` 2, so only sampling gives
   independent games between two models);
3. prints one JSON line and writes ``OUT/result.json``: ``env``, the four evals (each with
   ``score``, ``score_ci_low``, ``score_ci_high``, ``wins``, ``draws``, ``losses`` and the win
   rate's interval, and ``distinct_games``), ``steps``, ``wall_s`` (the train command),
   ``stopped_by``, ``peak_rss_gb``, ``cpu``, ``commit``, the commands, ``idle`` (the load average
   before the run), and the claims recomputed from the intervals: ``beats_warm_start`` (the
   greedy score's lower bound above 0.5), ``beats_warm_start_sampled`` (the same, sampled) and
   ``wins_more_vs_random`` (the trained model's win-rate interval against the random player
   entirely above the warm-start model's).

Every eval's ``results.json`` (with both seats' transcripts) stays in ``OUT/eval/<name>``.

Run (the command of docs/self_play.md):
    python benchmarks/self_play.py --model SmolLM2-135M-Instruct.Q4_1.gguf --minutes 45 \\
        --eval-seed 20000 --eval-episodes 128 --out benchmarks/results/self_play_tictactoe
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

from _real_model import DEFAULT_GGUF, cli, run_facts, run_settings_flags, run_train

MATCHES = {
    "vs_warm_start": ("run", "warm_start", 0.0),
    "vs_random_trained": ("run", "random", 0.0),
    "vs_random_warm_start": ("warm_start", "random", 0.0),
    # Greedy against greedy replays one game per seating on every seed (distinct_games 2):
    # both models sampling, as they were trained, play independent games.
    "vs_warm_start_sampled": ("run", "warm_start", 1.0),
}
"""Each eval: the policy, its opponent, and the temperature of both (0: greedy)."""
KEYS = ("score", "score_ci_low", "score_ci_high", "wins", "draws", "losses", "errors",
        "win_rate", "win_ci_low", "win_ci_high", "games", "distinct_games")  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="default: %(default)s")
    parser.add_argument("--env", default="TextTicTacToe-v0")
    parser.add_argument("--opponent", default=None, help="trl-env train --opponent (default self)")
    parser.add_argument("--minutes", type=float, default=None, help="trl-env train --minutes")
    parser.add_argument("--max-steps", type=int, default=None, help="trl-env train --max-steps")
    parser.add_argument(
        "--train-arg", action="append", default=[], metavar="ARG",
        help="one more argument for trl-env train (repeat: --train-arg=--seed --train-arg=1)",
    )  # fmt: skip
    parser.add_argument("--eval-seed", type=int, default=20_000)
    parser.add_argument("--eval-episodes", type=int, default=128)
    parser.add_argument("--eval-batch-size", type=int, default=32)
    parser.add_argument("--out", default="self_play_out")
    return parser.parse_args(argv)


def train_command(args: argparse.Namespace, run: Path) -> list[str]:
    """The ``trl-env train`` command this benchmark runs (the one the docs show)."""
    command = ["trl-env", "train", args.env, "--model", args.model, "--lora", "--self-play"]
    command += ["--warm-start", "random"]
    command += ["--opponent", args.opponent] if args.opponent else []
    for flag, value in (("--minutes", args.minutes), ("--max-steps", args.max_steps)):
        if value is not None:
            command += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return [*command, *args.train_arg, "--out", str(run), "--no-progress"]


def eval_command(
    args: argparse.Namespace,
    policy: str,
    opponent: str,
    settings: dict[str, Any],
    out: Path,
    temperature: float = 0.0,
) -> list[str]:
    """``trl-env eval --opponent`` on the held-out seeds, with the run's game settings; both
    sides at ``temperature`` (0: greedy)."""
    command = ["trl-env", "eval", args.env, "--policy", policy, "--opponent", opponent,
               "--episodes", str(args.eval_episodes), "--seed", str(args.eval_seed),
               "--temperature", f"{temperature:g}", "--batch-size", str(args.eval_batch_size),
               "--json", "--no-progress", "--out", str(out), "--overwrite"]  # fmt: skip
    if temperature > 0:
        command += ["--opponent-temperature", f"{temperature:g}"]
    return [*command, *run_settings_flags(settings)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = Path(args.out)
    run = out / "run"
    out.mkdir(parents=True, exist_ok=True)
    train = train_command(args, run)
    train_run = run_train(train, run)
    settings = train_run.settings
    policies = {"run": str(run), "warm_start": str(run / "warm_start"), "random": "random"}
    result: dict[str, Any] = {"env": args.env}
    commands = {}
    for name, (policy, opponent, temperature) in MATCHES.items():
        command = eval_command(
            args, policies[policy], policies[opponent], settings, out / "eval" / name, temperature
        )
        commands[name] = shlex.join(command)
        print("$", commands[name], flush=True)
        # stdout is the JSON report; stderr (progress, errors) goes to the terminal.
        done = subprocess.run(cli(command), check=True, stdout=subprocess.PIPE, text=True)
        report = json.loads(done.stdout)
        result[name] = {key: report[key] for key in KEYS}
    trained, warm = result["vs_random_trained"], result["vs_random_warm_start"]
    result.update(
        {
            "beats_warm_start": result["vs_warm_start"]["score_ci_low"] > 0.5,
            "beats_warm_start_sampled": result["vs_warm_start_sampled"]["score_ci_low"] > 0.5,
            "wins_more_vs_random": trained["win_ci_low"] > warm["win_ci_high"],
            **run_facts(train_run, train),
            "eval_commands": commands,
        }
    )
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
