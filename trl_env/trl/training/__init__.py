"""GRPO training on registered text envs, split by concern:

* :mod:`~trl_env.trl.training._config`: :class:`TrainConfig`, the settings (a dataclass with a
  ``help`` for every field; it imports without torch, so ``trl-env train --help`` is generated
  from it on any install);
* :mod:`~trl_env.trl.training._run`: :func:`train`, the run (checks, model, GRPO, saving);
* :mod:`~trl_env.trl.training._callbacks`: ``metrics.csv``, progress and per-step lines;
* :mod:`~trl_env.trl.training._heldout`: :class:`HeldOutEvalCallback`, held-out evals during
  training;
* :mod:`~trl_env.trl.training._best` and :mod:`~trl_env.trl.training._final_model`: the best
  held-out eval's model (``best/``) and which model ``final/`` holds (``--final-model``);
* :mod:`~trl_env.trl.training._recording`: :class:`RecordingGRPOTrainer`, the trainer that saves
  every step's episodes (``trl-env replay`` reads them);
* :mod:`~trl_env.trl.training._plots`: the learning-curve PNG;
* :mod:`~trl_env.trl.training._recipes`: recorded recipes (``trl_env/recipes/*.yaml``,
  ``trl-env train --recipe NAME``);
* :mod:`~trl_env.trl.training._defaults`: the defaults by model kind, machine and env traits.

The command ``trl-env train`` (its options, generated from the config, and its report) lives with
the other commands in :mod:`trl_env.cli`. Models are loaded by :mod:`trl_env.trl.models` only.
Every name here loads on first use (see :mod:`trl_env.trl._lazy`).

Example:
    >>> from trl_env.trl.training import train
    >>> result = train("TextLargestNumber-v0")  # doctest: +SKIP
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from trl_env.trl._lazy import lazy_exports as _lazy_exports

_import_structure: dict[str, list[str]] = {
    "_config": ["TrainConfig"],
    "_heldout": ["HeldOutEvalCallback"],
    "_plots": ["plot_learning_curve"],
    "_recipes": ["load_recipe", "recipe_names"],
    "_recording": ["RecordingGRPOTrainer"],
    "_run": ["TrainResult", "eval_command", "train"],
}

__all__ = [
    "HeldOutEvalCallback",
    "RecordingGRPOTrainer",
    "TrainConfig",
    "TrainResult",
    "eval_command",
    "load_recipe",
    "plot_learning_curve",
    "recipe_names",
    "train",
]

if _TYPE_CHECKING:  # what the names are, for type checkers and readers
    from trl_env.trl.training._config import TrainConfig
    from trl_env.trl.training._heldout import HeldOutEvalCallback
    from trl_env.trl.training._plots import plot_learning_curve
    from trl_env.trl.training._recipes import load_recipe, recipe_names
    from trl_env.trl.training._recording import RecordingGRPOTrainer
    from trl_env.trl.training._run import TrainResult, eval_command, train

__getattr__, __dir__ = _lazy_exports(
    __name__, _import_structure, torch_free={"_config", "_recipes"}
)
