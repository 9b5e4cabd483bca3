"""Registering text environments under gymnasium IDs."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from trl_env.error import UsageError
from trl_env.protocol import Env

__all__ = ["register_protocol_env"]


def register_protocol_env(
    id: str,
    entry_point: str | Callable[..., Env],
    *,
    kwargs: Mapping[str, Any] | None = None,
    max_episode_steps: int | None = None,
    **register_kwargs: Any,
) -> None:
    """Register a :class:`trl_env.protocol.Env` implementation under a gymnasium ID.

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
    _check_registration(id, entry_point, kwargs, max_episode_steps)
    gym.register(
        id=id,
        entry_point="trl_env._adapters:ProtocolToGymnasium",
        kwargs={"env": entry_point, "env_kwargs": dict(kwargs or {})},
        max_episode_steps=max_episode_steps,
        **register_kwargs,
    )


def _check_registration(id: Any, entry_point: Any, kwargs: Any, max_episode_steps: Any) -> None:
    """Fail now, naming the argument, rather than at the first ``gym.make``."""
    if not isinstance(id, str) or not id:
        raise UsageError(f"id must be a gymnasium ID string like 'TextMyGame-v0', got {id!r}")
    if isinstance(entry_point, str):
        module, sep, attr = entry_point.partition(":")
        if not (module and sep and attr):
            raise UsageError(
                f"entry_point {entry_point!r} must be 'package.module:ClassName' (or the class "
                "itself)"
            )
    elif not callable(entry_point):
        raise UsageError(
            f"entry_point must be a protocol env class, a factory, or its 'module:attr' path, "
            f"got {entry_point!r:.80} ({type(entry_point).__name__})"
        )
    if kwargs is not None and not (
        isinstance(kwargs, Mapping) and all(isinstance(key, str) for key in kwargs)
    ):
        raise UsageError(f"kwargs must be a dict of constructor arguments, got {kwargs!r:.80}")
    if kwargs and callable(entry_point):
        _check_constructor_kwargs(entry_point, kwargs)
    if max_episode_steps is not None and (
        isinstance(max_episode_steps, bool)
        or not isinstance(max_episode_steps, int)
        or max_episode_steps < 1
    ):
        raise UsageError(
            f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}"
        )


def _check_constructor_kwargs(entry_point: Callable[..., Any], kwargs: Mapping[str, Any]) -> None:
    try:
        parameters = inspect.signature(entry_point).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL}
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        name = getattr(entry_point, "__name__", repr(entry_point))
        raise UsageError(
            f"kwargs: {name} does not accept {', '.join(map(repr, unknown))}; its constructor "
            f"takes {', '.join(sorted(accepted)) or 'no arguments'}"
        )
