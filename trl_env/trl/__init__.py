"""The TRL bridge: train on any registered text env with ``GRPOTrainer``.

Needs ``pip install "trl-env[trl]"``. Every name here loads on first use (TRL's
``_import_structure`` pattern, see :mod:`trl_env.trl._lazy`): ``import trl_env.trl`` and its
torch-free modules (the settings, :class:`~trl_env.trl.training._config.TrainConfig`) import
neither torch nor trl, so ``trl-env --help`` starts fast on any install; the first name that
needs the extra raises :class:`~trl_env.error.MissingExtraError` without it. The main names are
also served from the top-level package (``trl_env.make_rollout_func`` ...).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from trl_env.trl._lazy import lazy_exports as _lazy_exports

_import_structure: dict[str, list[str]] = {
    "_credit": ["TurnCreditGRPOTrainer", "returns_to_go", "turn_advantages"],
    "_environment_factory": ["EnvironmentFactory", "make_environment_factory"],
    "models._generation": ["Generator", "TransformersGenerator", "VLLMGenerator"],
    "_model_play": ["model_policy", "play_model"],
    "_model_policy": ["ModelPolicy"],
    "_processors": ["ChatTemplateProcessor"],
    "_rewards": ["env_reward", "env_success"],
    "_rollout": [
        "DEFAULT_SYSTEM_PROMPT",
        "EnvErrorWarning",
        "EnvRollout",
        "Episode",
        "RolloutConfig",
        "make_rollout_func",
        "play_episodes",
    ],
    "_sft": ["SFTResult", "SFTRunConfig", "run_sft"],
    "_tasks": ["TASK_KEY", "Task", "make_dataset", "task_from_prompt"],
    "_warm_start": ["FormatExample", "register_format_example", "warm_start"],
}

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "TASK_KEY",
    "ChatTemplateProcessor",
    "EnvErrorWarning",
    "EnvRollout",
    "EnvironmentFactory",
    "Episode",
    "FormatExample",
    "Generator",
    "ModelPolicy",
    "RolloutConfig",
    "SFTResult",
    "SFTRunConfig",
    "Task",
    "TransformersGenerator",
    "TurnCreditGRPOTrainer",
    "VLLMGenerator",
    "env_reward",
    "env_success",
    "make_dataset",
    "make_environment_factory",
    "make_rollout_func",
    "model_policy",
    "play_episodes",
    "play_model",
    "register_format_example",
    "returns_to_go",
    "run_sft",
    "task_from_prompt",
    "turn_advantages",
    "warm_start",
]

if _TYPE_CHECKING:  # what the names are, for type checkers and readers
    from trl_env.trl._credit import TurnCreditGRPOTrainer, returns_to_go, turn_advantages
    from trl_env.trl._environment_factory import EnvironmentFactory, make_environment_factory
    from trl_env.trl._model_play import model_policy, play_model
    from trl_env.trl._model_policy import ModelPolicy
    from trl_env.trl._processors import ChatTemplateProcessor
    from trl_env.trl._rewards import env_reward, env_success
    from trl_env.trl._rollout import (
        DEFAULT_SYSTEM_PROMPT,
        EnvErrorWarning,
        EnvRollout,
        Episode,
        RolloutConfig,
        make_rollout_func,
        play_episodes,
    )
    from trl_env.trl._sft import SFTResult, SFTRunConfig, run_sft
    from trl_env.trl._tasks import TASK_KEY, Task, make_dataset, task_from_prompt
    from trl_env.trl._warm_start import FormatExample, register_format_example, warm_start
    from trl_env.trl.models._generation import Generator, TransformersGenerator, VLLMGenerator

__getattr__, __dir__ = _lazy_exports(__name__, _import_structure)
