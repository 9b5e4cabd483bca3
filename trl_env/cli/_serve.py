"""``trl-env serve``: run a registered text env as an OpenEnv server (one session per episode).

The options and the server are :mod:`trl_env.openenv`'s (``python -m trl_env.openenv serve`` is
the same command); openenv-core is imported only when ``serve`` runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from trl_env.cli._common import Formatter

__all__ = ["add_parser"]


def run(args: argparse.Namespace) -> int:
    """Serve the env until interrupted (needs ``pip install "trl-env[openenv]"``)."""
    from trl_env.openenv.cli import run_serve

    return run_serve(args)


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``serve`` (its options are plain argparse: openenv-core is imported only when
    the command runs)."""
    p = commands.add_parser(
        "serve",
        parents=parents,
        formatter_class=Formatter,
        help='serve an environment over OpenEnv (needs: pip install "trl-env[openenv]")',
        description="Run a registered text env as an OpenEnv server: one session per episode,\n"
        "many sessions at once, for TRL's OpenEnv integration and any OpenEnv client\n"
        '(gym.make("OpenEnv-v0", base_url=URL) here). See docs/slow_envs.md.',
    )
    from trl_env.openenv.cli import add_serve_arguments

    add_serve_arguments(p)
    p.set_defaults(func=run)
