"""``trl-env sft``: a warm start on demos (TRL's SFTTrainer), tokenized as the rollout plays.

Its options come from :class:`~trl_env.trl._sft.SFTRunConfig` (which imports without torch); the
run, :func:`~trl_env.trl._sft.run_sft`, needs ``pip install "trl-env[trl]"``."""

from __future__ import annotations

import argparse
from typing import Any

from trl_env.cli._arguments import (
    add_config_arguments,
    add_config_file_option,
    config_from_namespace,
)
from trl_env.cli._common import Formatter
from trl_env.cli._threads import add_threads_option
from trl_env.trl._sft import SFTRunConfig

__all__ = ["add_parser"]

_EPILOG = """\
examples:
  trl-env sft TextTicTacToe-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf --lora --demos oracle
  trl-env sft --model Qwen/Qwen3-0.6B --lora --demos demos/format --output-dir runs/warm

Then: trl-env train TextTicTacToe-v0 --model runs/sft --lora
      trl-env eval TextTicTacToe-v0 --policy runs/sft"""


def run(args: argparse.Namespace) -> int:
    from trl_env._eval import check_env_id
    from trl_env.trl._lazy import require_trl
    from trl_env.trl._threads import set_torch_threads

    config = config_from_namespace(SFTRunConfig, args)
    for env_id in config.env_ids:
        check_env_id(env_id)
    require_trl("trl-env sft")
    set_torch_threads(getattr(args, "threads", None), announce=False)
    from trl_env.trl._sft import run_sft

    run_sft(config)
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``sft`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "sft",
        parents=parents,
        formatter_class=Formatter,
        help='warm-start a model on demos with SFT (needs: pip install "trl-env[trl]")',
        description="Fine-tune a model on demonstrations (the env's oracle, random policy or a\n"
        "scripted player, or a folder from `trl-env demos`), on the reply tokens only, tokenized exactly as the GRPO\n"
        "rollout presents episodes. The run folder works as --model of train and --policy of eval.",
        epilog=_EPILOG,
    )
    add_config_arguments(p, SFTRunConfig)
    add_threads_option(p)
    add_config_file_option(p)
    p.set_defaults(func=run)
