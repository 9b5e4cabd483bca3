"""``trl-env train``'s options (generated from :class:`TrainConfig`) and what the command does
with them: run :func:`train` and print a JSON summary."""

from __future__ import annotations

import argparse
import json
import sys

from trl_env.cli._arguments import add_config_arguments, config_from_namespace
from trl_env.trl.training.config import TrainConfig
from trl_env.trl.training.run import train

__all__ = ["add_arguments", "config_from_args", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``trl-env train`` to ``parser`` (one per :class:`TrainConfig` field)."""
    add_config_arguments(parser, TrainConfig)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of parsed ``trl-env train`` arguments.

    Raises:
        ValueError: For bad values (including malformed ``--env-kwargs`` JSON).
    """
    return config_from_namespace(TrainConfig, args)


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env train`` with parsed arguments; return the exit status.

    0 on success; 2 for a bad setting (unknown env, bad value, missing model or package, a model
    that cannot be loaded, an output folder that holds a run), with one
    ``trl-env train: error: ...`` line on stderr; 130 if interrupted (the model so far is saved).
    """
    import gymnasium as gym

    try:
        config = config_from_args(args)
        result = train(config.env_ids, config=config)
    except (ValueError, OSError, ImportError, gym.error.Error) as error:
        # OSError: also what from_pretrained raises for a Hub id it cannot find or download.
        print(f"trl-env train: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "trl-env train: interrupted (the model so far is in <output-dir>/interrupted, "
            "metrics.csv holds the steps done; --resume continues from the last checkpoint)",
            file=sys.stderr,
        )
        return 130
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
