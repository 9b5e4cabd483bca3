"""``trl-env train``: GRPO training. Its options are generated from
:class:`~trl_env.trl.training._config.TrainConfig` (which imports without torch, so ``--help``
works on any install); the run itself, :func:`trl_env.trl.training.train`, is imported only when
the command runs and needs ``pip install "trl-env[trl]"``."""

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
from trl_env.cli._threads import add_threads_option
from trl_env.error import Error, UsageError
from trl_env.trl.training._config import TrainConfig

__all__ = ["add_arguments", "add_parser", "config_from_args", "run"]

_EPILOG = """\
examples:
  trl-env train TextLargestNumber-v0                 # the tiny local model, CPU, ~2 minutes
  trl-env train TextWordle-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf --lora --out runs/smol
  trl-env train --config runs/smol/config.yaml --out runs/smol-again  # repeat a run
  trl-env train TextTicTacToe-v0 --credit turn --gamma 0.9

The run folder holds config.yaml (every resolved setting: `--config` takes it back),
train_config.json, metrics.csv, learning_curve.png, checkpoints and final/."""

_INTERRUPTED = (
    "the model so far is in <output-dir>/interrupted, metrics.csv holds the steps done; --resume "
    "continues from the last checkpoint"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``trl-env train`` to ``parser`` (one per :class:`TrainConfig` field,
    and ``--threads``)."""
    add_config_arguments(parser, TrainConfig)
    add_threads_option(parser)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of parsed ``trl-env train`` arguments.

    Raises:
        UsageError: For bad values (including malformed ``--env-kwargs`` JSON).
    """
    return config_from_namespace(TrainConfig, args)  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env train`` with parsed arguments: train, then print a JSON summary.

    Raises:
        UsageError: A setting the run cannot use, found before any work (train's ``ValueError``
            and ``FileNotFoundError``).
        MissingExtraError: Without the ``trl`` extra.
    """
    from trl_env.trl._lazy import require_trl
    from trl_env.trl._threads import set_torch_threads

    config = config_from_args(args)
    require_trl("trl-env train")
    # Set silently: the run names the count in its first line, after its checks pass.
    set_torch_threads(getattr(args, "threads", None), announce=False)
    from trl_env.trl.training._run import train

    try:
        result = train(config.env_ids, config=config)
    except (ValueError, FileNotFoundError) as error:
        if isinstance(error, Error):
            raise
        raise UsageError(str(error)) from error  # train()'s contract: a bad setting, before work
    summary = result.summary()
    print(
        json.dumps(
            {
                "output_dir": str(result.output_dir),
                "model_dir": str(result.model_dir),
                "metrics_csv": str(result.metrics_csv),
                "plot_png": str(result.plot_png) if result.plot_png else None,
                "steps": int(summary["steps"]),
                "first10_mean_reward": round(summary["first_mean"], 4),
                "last10_mean_reward": round(summary["last_mean"], 4),
                "gain": round(summary["gain"], 4),
                "wall_time_s": round(summary["wall_time_s"], 1),
            },
            indent=2,
        )
    )
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``train`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "train",
        parents=parents,
        formatter_class=Formatter,
        help='train a model with GRPO on environments (needs: pip install "trl-env[trl]")',
        description="Train a model with TRL's GRPOTrainer on text environments.",
        epilog=_EPILOG,
    )
    add_arguments(p)
    add_config_file_option(p)
    p.set_defaults(func=run, on_interrupt=_INTERRUPTED)
