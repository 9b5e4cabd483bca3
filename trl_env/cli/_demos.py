"""``trl-env demos``: episodes played by an env's oracle, random policy or a scripted player, as an
SFT dataset."""

from __future__ import annotations

import argparse
from typing import Any

from trl_env.cli._arguments import (
    add_config_arguments,
    add_config_file_option,
    config_from_namespace,
)
from trl_env.cli._common import Formatter

__all__ = ["add_parser"]

_EPILOG = """\
examples:
  trl-env demos TextTicTacToe-v0 --policy oracle --episodes 64 --out demos/ttt
  trl-env demos TextWordle-v0 TextHangman-v0 --policy random --episodes 32 --out demos/format
  trl-env demos TextHangman-v0 --policy frequency --episodes 64 --out demos/hangman-frequency

The folder holds demos.jsonl (one episode per line: messages, env_id, seed,
episode_return, success, turns) and README.md (a dataset card with the settings). Read it with
datasets.load_dataset(DIR) or TRL's SFTTrainer; warm-start a model on it with
`trl-env sft ID --model M --demos DIR`."""


def run(args: argparse.Namespace) -> int:
    from trl_env._demos import DemosConfig, record_demos, write_demos
    from trl_env._eval import check_env_id

    config = config_from_namespace(DemosConfig, args)
    for env_id in config.env_ids:
        check_env_id(env_id)
    rows = record_demos(
        config.env_ids,
        policy=config.policy,
        episodes=config.episodes,
        seed=config.seed,
        max_turns=config.max_turns,
        system_prompt=config.system_prompt,
        env_kwargs=config.env_kwargs,
        seats=config.seats,
    )
    folder = write_demos(rows, config.out, config)
    for env_id in config.env_ids:
        mine = [r for r in rows if r["env_id"] == env_id]
        wins = sum(r["success"] for r in mine)
        turns = sum(r["turns"] for r in mine) / len(mine)
        print(f"{env_id}: {len(mine)} {config.policy} episodes, success {wins}/{len(mine)}, "
              f"mean turns {turns:.1f}")  # fmt: skip
    print(f"wrote {len(rows)} episodes to {folder / 'demos.jsonl'}")
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``demos`` on the ``commands`` subparsers."""
    from trl_env._demos import DemosConfig

    p = commands.add_parser(
        "demos",
        parents=parents,
        formatter_class=Formatter,
        help="record episodes of an env's oracle, random policy or scripted player as an SFT dataset",
        description="Play episodes with the env's own oracle (its solver: teaches the game),\n"
        "random policy (well-formed random replies: teaches the format only) or one of its\n"
        "scripted players (Hangman: frequency) and save them as a conversational dataset, with\n"
        "the rollout's system prompt.",
        epilog=_EPILOG,
    )
    add_config_arguments(p, DemosConfig)
    add_config_file_option(p)
    p.set_defaults(func=run)
