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
from typing import Any as _Any

import trl_env.envs as _envs  # importing the catalogue registers every env with gymnasium
from trl_env.adapters import GymnasiumToProtocol, ProtocolToGymnasium, is_text_space
from trl_env.core import Action, Delta, Env, Language, Processor, Seed, TokenProcessor
from trl_env.episode import Episode, Task, is_success
from trl_env.error import (
    EnvErrorWarning,
    EpisodeOverError,
    Error,
    InvalidSpaceError,
    MissingExtraError,
    NoOracleError,
    NotATextEnvError,
    TaskSpecError,
    TextEnvCheckError,
    UsageError,
)
from trl_env.play import play_episode, run_episodes
from trl_env.policies import FunctionPolicy, OraclePolicy, Policy, RandomPolicy, Reply, Turn
from trl_env.registration import register_protocol_env
from trl_env.seeding import seed_to_int
from trl_env.spaces import TextSpace
from trl_env.stepping import EnvOutcome, reset_envs, step_envs
from trl_env.summary import EnvSummary, summarize

__version__ = "0.2.0"

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
    "Action",
    "ChatTemplateProcessor",
    "Delta",
    "Env",
    "EnvErrorWarning",
    "EnvOutcome",
    "EnvSummary",
    "EnvironmentFactory",
    "Episode",
    "EpisodeOverError",
    "Error",
    "FunctionPolicy",
    "GymnasiumToProtocol",
    "InvalidSpaceError",
    "Language",
    "MissingExtraError",
    "NoOracleError",
    "NotATextEnvError",
    "OraclePolicy",
    "Policy",
    "Processor",
    "ProtocolToGymnasium",
    "RandomPolicy",
    "Reply",
    "Seed",
    "Task",
    "TaskSpecError",
    "TextEnvCheckError",
    "TextSpace",
    "TokenProcessor",
    "Turn",
    "UsageError",
    "__version__",
    "env_reward",
    "env_success",
    "is_success",
    "is_text_space",
    "make_dataset",
    "make_environment_factory",
    "make_rollout_func",
    "play_episode",
    "register_protocol_env",
    "reset_envs",
    "run_episodes",
    "seed_to_int",
    "step_envs",
    "summarize",
]


def __getattr__(name: str) -> _Any:
    if name in ("REGISTRY", "register_envs"):  # deprecated (gym.registry is the catalogue)
        return getattr(_envs, name)
    if name in _TRL_EXPORTS:
        module = _importlib.import_module("trl_env.trl")
        return getattr(module, name)
    raise AttributeError(f"module 'trl_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _TRL_EXPORTS)
