"""Registering text environments under gymnasium IDs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from trl_env.core import Env

__all__ = ["register_protocol_env"]


def register_protocol_env(
    id: str,
    entry_point: str | Callable[..., Env],
    *,
    kwargs: Mapping[str, Any] | None = None,
    max_episode_steps: int | None = None,
    **register_kwargs: Any,
) -> None:
    """Register a :class:`trl_env.Env` implementation under a gymnasium ID.

    After this, ``gym.make(id)`` returns the env wrapped in :class:`trl_env.ProtocolToGymnasium`
    (and gymnasium's usual wrappers), so it works with every gymnasium tool and with the TRL
    rollout. Pass ``entry_point`` as a ``"package.module:ClassName"`` string to keep the env
    picklable (for ``AsyncVectorEnv``, for example).

    Args:
        id: The gymnasium ID, by convention ``TextName-vN``.
        entry_point: The protocol env class or factory, or its ``"module:attr"`` path.
        kwargs: Keyword arguments for the protocol env's constructor.
        max_episode_steps: Turn limit enforced by gymnasium's ``TimeLimit`` (sets ``truncated``).
        **register_kwargs: Anything else :func:`gymnasium.register` accepts.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> class Parrot:
        ...     last_step_reward, alive = 0.0, False
        ...     def reset(self, seed):
        ...         self.alive = True
        ...         return "Say hi."
        ...     def step(self, action):
        ...         self.alive, self.last_step_reward = False, float(action == "hi")
        ...         return "Bye."
        >>> trl_env.register_protocol_env("TextParrot-v0", Parrot, max_episode_steps=3)
        >>> env = gym.make("TextParrot-v0")
        >>> env.reset(seed=1)[0]
        'Say hi.'
        >>> env.step("hi")[1]
        1.0
    """
    gym.register(
        id=id,
        entry_point="trl_env.adapters:ProtocolToGymnasium",
        kwargs={"env": entry_point, "env_kwargs": dict(kwargs or {})},
        max_episode_steps=max_episode_steps,
        **register_kwargs,
    )
