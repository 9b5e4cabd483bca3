"""``trl-env replay``: read the episodes a training run saved; print them, or score them again."""

from __future__ import annotations

import argparse
import json
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
  trl-env replay runs/wordle                    # the first 4 episodes of the last saved step
  trl-env replay runs/wordle --worst --limit 2  # its 2 episodes of lowest return
  trl-env replay runs/wordle --best --all-steps # the best episodes of the whole run
  trl-env replay runs/wordle --step 10 --json   # step 10's episodes, as JSON Lines
  trl-env replay runs/wordle --rescore          # after changing the env: same rewards?
  trl-env replay runs/guess --rescore --env-kwargs '{"partial_credit": 0.1}'

The run must have been trained with --save-rollouts (RUN/rollouts/step-N.jsonl).
--rescore plays every saved episode's actions again in a fresh env with its seed and compares
each step's rewards and where the env ended the episode. Exit status: 0 ok (--rescore: every
episode matched), 1 some episodes differ, 2 usage error (no such run, no saved rollouts,
no such step)."""


def _run_rescore(config: Any, run: Any) -> int:
    from trl_env._replay import rescore, select_episodes

    records = (
        select_episodes(run, config.step)
        if config.step is not None
        else select_episodes(run, all_steps=True)
    )
    report = rescore(records, env_kwargs=config.env_kwargs, step_timeout=config.step_timeout)
    print(json.dumps(report.to_dict(), indent=2) if config.as_json else report.summary())
    return 0 if report.ok else 1


def run(args: argparse.Namespace) -> int:
    from trl_env._replay import (
        DEFAULT_LIMIT,
        ReplayConfig,
        format_episode,
        load_run,
        select_episodes,
    )

    config = config_from_namespace(ReplayConfig, args)
    run_ = load_run(config.run)
    if config.rescore:
        return _run_rescore(config, run_)
    order = "worst" if config.worst else "best" if config.best else "saved"
    limit = config.limit or DEFAULT_LIMIT
    step = run_.steps[-1] if config.step is None and not config.all_steps else config.step
    every = select_episodes(run_, step, all_steps=config.all_steps, order=order)
    records = every[:limit]
    if config.as_json:
        for record in records:
            print(json.dumps(record, ensure_ascii=False))
        return 0
    where = "every saved step" if config.all_steps else f"step {step}"
    which = {"saved": "first", "worst": "worst", "best": "best"}[order]
    print(
        f"{run_.path}: {len(run_.steps)} saved steps ({run_.steps[0]}..{run_.steps[-1]}); "
        f"the {which} {len(records)} of {len(every)} episodes of {where}"
    )
    for record in records:
        print()
        print(format_episode(record))
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``replay`` on the ``commands`` subparsers."""
    from trl_env._replay import ReplayConfig

    p = commands.add_parser(
        "replay",
        parents=parents,
        formatter_class=Formatter,
        help="print the episodes a training run saved, or score them again (--rescore)",
        description="Read the rollouts of a run trained with --save-rollouts: print transcripts\n"
        "(the last saved step's first episodes, or the worst or best ones) with every reward,\n"
        "invalid action and cut reply; or, with --rescore, replay every saved episode's actions\n"
        "in a fresh env and check that the env scores them as it did during training.",
        epilog=_EPILOG,
    )
    add_config_arguments(p, ReplayConfig)
    add_config_file_option(p)
    p.set_defaults(func=run)
