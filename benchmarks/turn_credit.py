"""Turn-level vs episode-level credit: the same tiny-model GRPO run, once per credit.

Trains the built-in tiny model twice with ``trl_env.trl.training.train`` on a multi-turn env, with
the same seed, settings and number of steps, once with ``credit="episode"`` (GRPO) and once with
``credit="turn"`` (see ``docs/multiturn.md``). Prints the success rate, mean return and
invalid-reply rate of every step for both, then, as its last line, one JSON object with the means
over the last ``--window`` steps for each credit and their ratios (turn / episode).

    python benchmarks/turn_credit.py                       # TextTicTacToe-v0, ~4 min on 2 cores
    python benchmarks/turn_credit.py --gamma 0.9 --steps 200
    python benchmarks/turn_credit.py --env TextGuessNumber-v0 \\
        --env-kwargs '{"high": 10, "max_guesses": 4}' --max-completion-length 128

The tiny model is a 2-layer toy: a short run measures whether turn credit changes what GRPO does
with the same samples budget, not what a real model reaches. With ``gamma=1`` (the default) the
two runs differ only where an env pays rewards before the last step (invalid-reply penalties,
shaped rewards): with a terminal reward alone they are the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CREDITS = ("episode", "turn")
COLUMNS = (("success", "env/success_rate"), ("return", "env/mean_return"),
           ("invalid", "env/invalid_action_rate"))  # fmt: skip


def _run(args: argparse.Namespace, credit: str, output_dir: Path) -> list[dict[str, float]]:
    from trl_env.trl.training import train

    result = train(
        args.env,
        credit=credit,
        gamma=args.gamma if credit == "turn" else 1.0,
        seed=args.seed,
        max_steps=args.steps,
        num_tasks=4096,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.batch_size,
        max_completion_length=args.max_completion_length,
        max_new_tokens_per_turn=args.max_new_tokens,
        warm_start_steps=args.warm_start_steps,
        env_kwargs=json.loads(args.env_kwargs),
        output_dir=str(output_dir),
        save_steps=0,
        plot=False,
        progress=False,
        log=lambda line: None,
    )
    return result.history


def _mean(rows: list[dict[str, float]], key: str) -> float:
    values = [row[key] for row in rows if key in row]
    return sum(values) / len(values) if values else math.nan


def _ratio(turn: float, episode: float) -> float | None:
    # A ratio means something for positive rates only (a return can be negative): None otherwise.
    if not episode > 0 or math.isnan(turn):
        return None
    return round(turn / episode, 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="TextTicTacToe-v0", help="a multi-turn env ID")
    parser.add_argument("--env-kwargs", default="{}", help="gym.make kwargs, as JSON")
    parser.add_argument("--steps", type=int, default=64, help="GRPO steps of each run")
    parser.add_argument("--window", type=int, default=16, help="last steps averaged")
    parser.add_argument("--gamma", type=float, default=1.0, help="discount of credit='turn'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=32, help="episodes per step")
    parser.add_argument("--num-generations", type=int, default=8, help="GRPO group size")
    parser.add_argument("--max-completion-length", type=int, default=320)
    parser.add_argument("--max-new-tokens", type=int, default=6, help="tokens per model turn")
    parser.add_argument("--warm-start-steps", type=int, default=100)
    args = parser.parse_args(argv)

    histories: dict[str, list[dict[str, float]]] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="trl-env-turn-credit-") as scratch:
        for credit in CREDITS:
            started = time.perf_counter()
            histories[credit] = _run(args, credit, Path(scratch) / credit)
            seconds[credit] = time.perf_counter() - started

    names = [f"{credit[:4]}_{name}" for credit in CREDITS for name, _ in COLUMNS]
    print(f"# python benchmarks/turn_credit.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(
        f"# {args.env}, tiny model, seed {args.seed}, {args.steps} steps of {args.batch_size} "
        f"episodes (groups of {args.num_generations}), gamma {args.gamma:g} for credit='turn'; "
        f"seconds per run: episode {seconds['episode']:.0f}, turn {seconds['turn']:.0f}"
    )
    print("step " + " ".join(f"{name:>12}" for name in names))
    for step in range(max(len(h) for h in histories.values())):
        cells = []
        for credit in CREDITS:
            row = histories[credit][step] if step < len(histories[credit]) else {}
            cells += [f"{row.get(key, math.nan):12.3f}" for _, key in COLUMNS]
        print(f"{step + 1:4d} " + " ".join(cells))

    summary: dict[str, Any] = {
        "env": args.env,
        "env_kwargs": json.loads(args.env_kwargs),
        "steps": args.steps,
        "window": args.window,
        "gamma": args.gamma,
        "seed": args.seed,
    }
    for credit in CREDITS:
        last = histories[credit][-args.window :]
        summary[credit] = {name: round(_mean(last, key), 4) for name, key in COLUMNS} | {
            "seconds": round(seconds[credit], 1)
        }
    summary["ratio_turn_over_episode"] = {
        name: _ratio(summary["turn"][name], summary["episode"][name]) for name, _ in COLUMNS
    }
    summary["difference_turn_minus_episode"] = {
        name: round(summary["turn"][name] - summary["episode"][name], 4) for name, _ in COLUMNS
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
