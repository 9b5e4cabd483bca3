"""``trl-env train``: GRPO on registered text envs, from Python (the command line is
:mod:`trl_env.cli`'s ``train``, generated from the same :class:`TrainConfig`).

The code lives in :mod:`trl_env.trl.training` (config, run, callbacks, plots); this module is the
stable import path of its public names.

Example:
    >>> from trl_env.trl.train import TrainConfig
    >>> TrainConfig("TextLargestNumber-v0").resolved().max_steps
    400

Command line::

    trl-env train TextLargestNumber-v0            # tiny model, CPU, about 2 minutes
    trl-env train TextWordle-v0 --model model.gguf --lora
    trl-env train --config runs/x/config.yaml --output-dir runs/x-again  # repeat a run
"""

from __future__ import annotations

from trl_env.trl.training import (
    TrainConfig,
    TrainResult,
    eval_command,
    plot_learning_curve,
    train,
)

__all__ = [
    "TrainConfig",
    "TrainResult",
    "eval_command",
    "plot_learning_curve",
    "train",
]
