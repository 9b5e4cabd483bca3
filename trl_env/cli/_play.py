"""``trl-env play``: play an environment yourself in the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trl_env.cli._common import Formatter, json_object, seed

__all__ = ["add_parser"]

_EPILOG = """\
Type your reply and press Enter; the environment answers. Type `quit` (or press
Ctrl-D) to stop. Replies can also be piped in, one per line:

  printf '[crane]\\n[slate]\\n' | trl-env play TextWordle-v0 --seed 0"""


# Only this exact word stops the game (a bracketed "[quit]" is still sent to the env as a reply).
_QUIT = "quit"


def run(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from trl_env.eval import _make_text_env, check_env_id

    check_env_id(args.env_id)
    env: gym.Env[str, str] = _make_text_env(args.env_id, args.env_kwargs or {})
    interactive = sys.stdin.isatty()
    prompt = "> " if interactive else ""
    try:
        observation, _ = env.reset(seed=args.seed)
        print(observation)
        if interactive:
            print("(type your reply and press Enter; `quit` or Ctrl-D to stop)")
        total, turns = 0.0, 0
        while True:
            try:
                line = input(prompt)
            except EOFError:
                if interactive:
                    print()
                print(f"Stopped after {turns} turn{'s' if turns != 1 else ''}; return {total:g}.")
                return 0
            if line.strip().lower() == _QUIT:
                print(f"Stopped after {turns} turn{'s' if turns != 1 else ''}; return {total:g}.")
                return 0
            observation, reward, terminated, truncated, info = env.step(line)
            total += float(reward)
            turns += 1
            print(observation)
            print(f"[reward {float(reward):+g}, return {total:g}]")
            if terminated or truncated:
                how = "terminated" if terminated else "truncated (turn limit)"
                print(
                    f"Episode over ({how}) after {turns} turn{'s' if turns != 1 else ''}; "
                    f"return {total:g}."
                )
                return 0
    finally:
        env.close()




def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``play`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "play",
        parents=parents,
        formatter_class=Formatter,
        help="play an environment yourself in the terminal",
        description="Play an environment yourself: the game's messages are printed, you type\n"
        "the replies. The reward of each step and the return so far are shown.",
        epilog=_EPILOG,
    )
    p.add_argument("env_id", metavar="ID", help="environment ID (see `trl-env list`)")
    p.add_argument("--seed", type=seed, default=None, help="seed of the game (default: random)")
    p.add_argument(
        "--env-kwargs",
        type=json_object,
        default=None,
        metavar="JSON",
        help="gym.make keyword arguments, e.g. '{\"max_guesses\": 8}'",
    )
    p.set_defaults(func=run)
