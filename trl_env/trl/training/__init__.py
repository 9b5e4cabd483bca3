"""GRPO training on registered text envs, split by concern:

* :mod:`~trl_env.trl.training.config`: :class:`TrainConfig`, the settings (a dataclass with a
  ``help`` for every field);
* :mod:`trl_env.cli._arguments`: the command-line options, generated from the config;
* :mod:`~trl_env.trl.training.run`: :func:`train`, the run (checks, model, GRPO, saving);
* :mod:`~trl_env.trl.training.callbacks`: ``metrics.csv``, progress and per-step lines;
* :mod:`~trl_env.trl.training.heldout`: :class:`HeldOutEvalCallback`, held-out evals during
  training;
* :mod:`~trl_env.trl.training.recording`: :class:`RecordingGRPOTrainer`, the trainer that saves
  every step's episodes (``trl-env replay`` reads them);
* :mod:`~trl_env.trl.training.plots`: the learning-curve PNG;
* :mod:`~trl_env.trl.training.command`: ``trl-env train`` (parse, train, report).

Models are loaded by :mod:`trl_env.trl.models` only.

Example:
    >>> from trl_env.trl.training import train
    >>> result = train("TextLargestNumber-v0")  # doctest: +SKIP
"""

from __future__ import annotations

from trl_env.trl.training.command import add_arguments, config_from_args, run
from trl_env.trl.training.config import TrainConfig
from trl_env.trl.training.heldout import HeldOutEvalCallback
from trl_env.trl.training.plots import plot_learning_curve
from trl_env.trl.training.recording import RecordingGRPOTrainer
from trl_env.trl.training.run import TrainResult, eval_command, train

__all__ = [
    "HeldOutEvalCallback",
    "RecordingGRPOTrainer",
    "TrainConfig",
    "TrainResult",
    "add_arguments",
    "config_from_args",
    "eval_command",
    "plot_learning_curve",
    "run",
    "train",
]
