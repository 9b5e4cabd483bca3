"""``trl-env check``: hold environments to the text-env rules, and to hostile replies."""

from __future__ import annotations

import argparse
from typing import Any

from trl_env.cli._common import Formatter, json_object, seed

__all__ = ["add_parser"]

_EPILOG = """\
examples:
  trl-env check TextWordle-v0                       # the rules of check_text_env
  trl-env check reasoning_gym/Countdown-v0 --hostile
  trl-env check mypackage:MyGame-v0 --hostile --time-limit 10

--hostile steps replies that try to run code (__import__, open, eval/exec, attribute
chains, lambdas, f-strings, unicode look-alikes, 9**9**9, ...) and fails if any of them
ran or a step took longer than --time-limit. Exit status 1 if any env fails."""


def run(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from trl_env._eval import check_env_id
    from trl_env.error import TextEnvCheckError
    from trl_env.utils import check_hostile_replies, check_text_env

    failed = 0
    for env_id in args.env_ids:
        check_env_id(env_id)
        try:
            check_text_env(gym.make(env_id, **(args.env_kwargs or {})), seed=args.seed)
            line = f"{env_id}: the text-env rules hold"
            if args.hostile:
                report = check_hostile_replies(
                    gym.make(env_id, **(args.env_kwargs or {})),
                    seed=args.seed,
                    time_limit=args.time_limit,
                )
                line += (
                    f"; {report.steps} hostile replies ran nothing "
                    f"(slowest call {report.slowest_step_s:.2f} s)"
                )
            print(line)
        except TextEnvCheckError as error:
            failed += 1
            print(f"{env_id}: FAILED {error}")
    return 1 if failed else 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``check`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "check",
        parents=parents,
        formatter_class=Formatter,
        help="check environments against the text-env rules (and hostile replies)",
        description="Run check_text_env on each environment; with --hostile, also step replies\n"
        "that try to run code and prove none did (trl_env.utils.check_hostile_replies).",
        epilog=_EPILOG,
    )
    p.add_argument("env_ids", nargs="+", metavar="ID", help="environment IDs (see `trl-env list`)")
    p.add_argument("--hostile", action="store_true", help="also step hostile replies")
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (default: 0)")
    p.add_argument(
        "--time-limit",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds any reset or step may take under --hostile (default: 30)",
    )
    p.add_argument(
        "--env-kwargs",
        type=json_object,
        default=None,
        metavar="JSON",
        help="gym.make keyword arguments, e.g. '{\"max_attempts\": 200}'",
    )
    p.set_defaults(func=run)
