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


def _turns(n: int) -> str:
    return f"{n} turn{'s' if n != 1 else ''}"


def run(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from trl_env._eval import check_env_id, make_text_env
    from trl_env._play import play_episode
    from trl_env._policies import FunctionPolicy, Turn
    from trl_env._stepping import EnvOutcome

    check_env_id(args.env_id)
    env: gym.Env[str, str] = make_text_env(args.env_id, args.env_kwargs or {})
    interactive = sys.stdin.isatty()

    def ask(turn: Turn) -> str | None:  # the person at the terminal is the policy
        if turn.episode.turns == 0:
            print(turn.observation)
            if interactive:
                print("(type your reply and press Enter; `quit` or Ctrl-D to stop)")
        try:
            line = input("> " if interactive else "")
        except EOFError:
            if interactive:
                print()
            return None
        return None if line.strip().lower() == _QUIT else line

    def show(episode: Any, outcome: EnvOutcome) -> None:
        print(outcome.observation)
        print(f"[reward {outcome.reward:+g}, return {sum(episode.rewards):g}]")

    # The same play loop as eval and training: checked env calls, one episode record.
    try:
        episode = play_episode(env, FunctionPolicy(ask), seed=args.seed, on_turn=show)
    finally:
        env.close()
    total = sum(episode.rewards)
    if episode.ended_by in ("terminated", "truncated"):
        how = "terminated" if episode.ended_by == "terminated" else "truncated (turn limit)"
        print(f"Episode over ({how}) after {_turns(episode.turns)}; return {total:g}.")
    elif episode.ended_by == "error":
        print(f"The environment failed: {episode.error}")
        return 1
    else:
        print(f"Stopped after {_turns(episode.turns)}; return {total:g}.")
    return 0


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
