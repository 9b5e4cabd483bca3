"""The TRL bridge: train on any registered text env with ``GRPOTrainer``.

Needs ``pip install "trl-env[trl]"``. Everything here is also served from the top-level
package (``trl_env.make_rollout_func`` ...), imported on first use.
"""

from trl_env.error import MissingExtraError as _MissingExtraError

try:
    import torch as _torch  # noqa: F401
    import transformers as _transformers  # noqa: F401
    import trl as _trl  # noqa: F401
except ImportError as _error:  # pragma: no cover - exercised only without the extra
    raise _MissingExtraError(
        "trl", "trl_env.trl (the GRPOTrainer bridge)", _error.name or "trl"
    ) from None

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
