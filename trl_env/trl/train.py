"""``trl-env train``: GRPO on registered text envs, from the command line or from Python.

The code lives in :mod:`trl_env.trl.training` (config, run, callbacks, plots, command); this
module is the stable import path of its public names.

Example:
    >>> from trl_env.trl.train import TrainConfig
    >>> TrainConfig("TextLargestNumber-v0").resolved().max_steps
    400

Command line::

    trl-env train TextLargestNumber-v0            # tiny model, CPU, about 2 minutes
    trl-env train TextWordle-v0 --model model.gguf --lora
"""

from __future__ import annotations

from trl_env.trl.training import (
    TrainConfig,
    TrainResult,
    add_arguments,
    config_from_args,
    eval_command,
    plot_learning_curve,
    run,
    train,
)

__all__ = [
    "TrainConfig",
    "TrainResult",
    "add_arguments",
    "config_from_args",
    "eval_command",
    "plot_learning_curve",
    "run",
    "train",
]
