"""trl-env: train LLM agents with reinforcement learning on text environments.

Environments are real :class:`gymnasium.Env` objects with string observations and actions,
registered under gymnasium IDs; training goes through TRL's ``GRPOTrainer``.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> env = gym.make("TextWordle-v0")
    >>> observation, info = env.reset(seed=42)
    >>> observation.startswith("Let's play Wordle")
    True

Importing ``trl_env`` is light (gymnasium and numpy only). The TRL bridge
(:func:`make_dataset`, :func:`make_rollout_func`, :func:`env_reward`, ...) lives in
:mod:`trl_env.trl` and is imported on first use; it needs ``pip install "trl-env[trl]"``.
"""

import importlib as _importlib
import warnings as _warnings
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

import trl_env.envs as _envs  # importing the catalogue registers every env with gymnasium
from trl_env import _deprecation, error, protocol  # noqa: F401 (subpackages as attributes)
from trl_env._adapters import GymnasiumToProtocol, ProtocolToGymnasium, is_text_space
from trl_env._demos import record_demos
from trl_env._episode import Episode, Task, is_success
from trl_env._eval import evaluate
from trl_env._model_options import ModelOptions
from trl_env._play import play_episode, run_episodes
from trl_env._policies import FunctionPolicy, OraclePolicy, Policy, RandomPolicy, Reply, Turn
from trl_env._registration import register_protocol_env
from trl_env._stepping import reset_envs, step_envs
from trl_env._summary import EnvSummary, summarize
from trl_env._version import __version__
from trl_env.spaces import TextSpace

# Names served lazily from trl_env.trl so that `import trl_env` never imports torch or trl.
_TRL_EXPORTS = frozenset(
    {
        "ChatTemplateProcessor",
        "EnvironmentFactory",
        "env_reward",
        "env_success",
        "make_dataset",
        "make_environment_factory",
        "make_rollout_func",
    }
)

__all__ = [
    "ChatTemplateProcessor",
    "EnvSummary",
    "EnvironmentFactory",
    "Episode",
    "FunctionPolicy",
    "GymnasiumToProtocol",
    "ModelOptions",
    "OraclePolicy",
    "Policy",
    "ProtocolToGymnasium",
    "RandomPolicy",
    "Reply",
    "Task",
    "TextSpace",
    "Turn",
    "__version__",
    "env_reward",
    "env_success",
    "evaluate",
    "is_success",
    "is_text_space",
    "make_dataset",
    "make_environment_factory",
    "make_rollout_func",
    "play_episode",
    "record_demos",
    "register_protocol_env",
    "reset_envs",
    "run_episodes",
    "step_envs",
    "summarize",
]

if _TYPE_CHECKING:  # what the lazy names are, for type checkers and the API reference
    from trl_env.trl import (
        ChatTemplateProcessor,
        EnvironmentFactory,
        env_reward,
        env_success,
        make_dataset,
        make_environment_factory,
        make_rollout_func,
    )

# Old import paths keep working for one release, with a DeprecationWarning naming the new one.
_deprecation.install()


def __getattr__(name: str) -> _Any:
    if name in _TRL_EXPORTS:
        module = _importlib.import_module("trl_env.trl")
        return getattr(module, name)
    if name in ("REGISTRY", "register_envs"):  # deprecated (gym.registry is the catalogue)
        return getattr(_envs, name)
    home = _deprecation.MOVED_NAMES.get(name)
    if home is not None:
        _warnings.warn(
            f"trl_env.{name} is deprecated and will be removed in trl-env {_deprecation.REMOVAL}; "
            f"use {home}.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_importlib.import_module(home), name)
    raise AttributeError(f"module 'trl_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _TRL_EXPORTS)
