"""The TRL bridge: train on any registered text env with ``GRPOTrainer``.

Needs ``pip install "trl-env[trl]"``. Every name here loads on first use (TRL's
``_import_structure`` pattern, see :mod:`trl_env.trl._lazy`): ``import trl_env.trl`` and its
torch-free modules (the settings, :class:`~trl_env.trl.training.config.TrainConfig`) import
neither torch nor trl, so ``trl-env --help`` starts fast on any install; the first name that
needs the extra raises :class:`~trl_env.error.MissingExtraError` without it. The main names are
also served from the top-level package (``trl_env.make_rollout_func`` ...).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from trl_env.trl._lazy import lazy_exports as _lazy_exports

_import_structure: dict[str, list[str]] = {
    "credit": ["TurnCreditGRPOTrainer"],
    "environment_factory": ["EnvironmentFactory", "make_environment_factory"],
    "generation": ["Generator", "TransformersGenerator", "VLLMGenerator"],
    "model_policy": ["ModelPolicy"],
    "processors": ["ChatTemplateProcessor"],
    "rewards": ["env_reward", "env_success"],
    "rollout": [
        "DEFAULT_SYSTEM_PROMPT",
        "EnvErrorWarning",
        "EnvRollout",
        "Episode",
        "RolloutConfig",
        "make_rollout_func",
        "play_episodes",
    ],
    "tasks": ["TASK_KEY", "Task", "make_dataset", "task_from_prompt"],
}

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "TASK_KEY",
    "ChatTemplateProcessor",
    "EnvErrorWarning",
    "EnvRollout",
    "EnvironmentFactory",
    "Episode",
    "Generator",
    "ModelPolicy",
    "RolloutConfig",
    "Task",
    "TransformersGenerator",
    "TurnCreditGRPOTrainer",
    "VLLMGenerator",
    "env_reward",
    "env_success",
    "make_dataset",
    "make_environment_factory",
    "make_rollout_func",
    "play_episodes",
    "task_from_prompt",
]

if _TYPE_CHECKING:  # what the names are, for type checkers and readers
    from trl_env.trl.credit import TurnCreditGRPOTrainer
    from trl_env.trl.environment_factory import EnvironmentFactory, make_environment_factory
    from trl_env.trl.generation import Generator, TransformersGenerator, VLLMGenerator
    from trl_env.trl.model_policy import ModelPolicy
    from trl_env.trl.processors import ChatTemplateProcessor
    from trl_env.trl.rewards import env_reward, env_success
    from trl_env.trl.rollout import (
        DEFAULT_SYSTEM_PROMPT,
        EnvErrorWarning,
        EnvRollout,
        Episode,
        RolloutConfig,
        make_rollout_func,
        play_episodes,
    )
    from trl_env.trl.tasks import TASK_KEY, Task, make_dataset, task_from_prompt

__getattr__, __dir__ = _lazy_exports(__name__, _import_structure)
