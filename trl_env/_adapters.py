"""Adapters both ways between the Text Env Protocol and :class:`gymnasium.Env`.

* :class:`ProtocolToGymnasium` makes any object satisfying :class:`trl_env.protocol.Env` a real
  ``gymnasium.Env[str, str]``, so it can be registered, ``gym.make``-d and wrapped.
* :class:`GymnasiumToProtocol` makes any gymnasium env with string observation and action spaces
  (wrappers included) a :class:`trl_env.protocol.Env`.

The round trip protocol -> gymnasium -> protocol is lossless: the inner env sees the same seed
strings and actions, and the outer one reports the same deltas, rewards and ``alive`` flags.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> env = trl_env.GymnasiumToProtocol(gym.make("TextWordle-v0"))
    >>> first = env.reset("7")
    >>> reply = env.step("[crane]")
    >>> env.alive, env.last_step_reward
    (True, 0.0)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium import spaces

from trl_env._seeding import seed_to_int
from trl_env.error import EpisodeOverError, NotATextEnvError
from trl_env.protocol import Action, Delta, Env, Seed
from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = ["GymnasiumToProtocol", "ProtocolToGymnasium", "is_text_space"]

# Reset option through which GymnasiumToProtocol hands the original string seed to a
# ProtocolToGymnasium underneath it, so non-numeric seeds survive the round trip.
_SEED_OPTION = "trl_env.seed"


def is_text_space(space: spaces.Space[Any]) -> bool:
    """Whether ``space`` holds strings (a :class:`TextSpace` or gymnasium's ``Text``)."""
    return isinstance(space, TextSpace | spaces.Text)


def _resolve_entry_point(entry_point: str | Callable[..., Any]) -> Callable[..., Any]:
    if callable(entry_point):
        return entry_point
    module_name, _, attr = entry_point.partition(":")
    if not attr:
        raise ValueError(
            f"entry point must look like 'package.module:ClassName', got {entry_point!r}"
        )
    return getattr(importlib.import_module(module_name), attr)


class ProtocolToGymnasium(gym.Env[str, str]):
    """A :class:`trl_env.protocol.Env` seen as a ``gymnasium.Env[str, str]``.

    ``reset(seed=n)`` calls the protocol env's ``reset(str(n))``; ``reset()`` without a seed draws
    one from ``self.np_random``, so seeded sequences of episodes are reproducible. ``step`` returns
    ``(delta, last_step_reward, not alive, False, info)``: the protocol has no notion of truncation,
    so time limits belong to gymnasium's ``TimeLimit`` (``max_episode_steps`` at registration).

    Args:
        env: A protocol env instance, a callable that builds one (a class or factory), or an entry
            point string ``"package.module:ClassName"`` (which keeps the env picklable).
        env_kwargs: Keyword arguments for ``env`` when it is a callable or entry point.
        render_mode: ``None`` or ``"ansi"`` (the transcript of the current episode as text).
        max_observation_length: ``max_length`` of the observation :class:`TextSpace`.
        max_action_length: ``max_length`` of the action :class:`TextSpace`.

    Example:
        >>> class Countdown:
        ...     def __init__(self, start: int = 3):
        ...         self.start, self.last_step_reward, self.alive = start, 0.0, False
        ...     def reset(self, seed: str) -> str:
        ...         self.n, self.alive = self.start, True
        ...         return f"Say 'go' {self.n} times."
        ...     def step(self, action: str) -> str:
        ...         self.n -= action.strip() == "go"
        ...         self.alive = self.n > 0
        ...         self.last_step_reward = float(not self.alive)
        ...         return "done" if not self.alive else f"{self.n} to go"
        >>> env = ProtocolToGymnasium(Countdown, env_kwargs={"start": 1})
        >>> env.reset(seed=0)
        ("Say 'go' 1 times.", {'seed': '0'})
        >>> env.step("go")
        ('done', 1.0, True, False, {})
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        env: Env | str | Callable[..., Env],
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        max_observation_length: int = DEFAULT_MAX_LENGTH,
        max_action_length: int = DEFAULT_MAX_LENGTH,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if isinstance(env, gym.Env):
            raise TypeError(
                f"ProtocolToGymnasium wraps a trl_env.protocol.Env (the text protocol), but got the "
                f"gymnasium env {env}: it is a gymnasium env already, use it as it is (or "
                "GymnasiumToProtocol(env) for the protocol side)"
            )
        if isinstance(env, Env) and not isinstance(env, type):
            if env_kwargs:
                raise TypeError(
                    "env_kwargs only applies when `env` is a class, factory or entry point"
                )
            self.protocol_env: Env = env
        else:
            self.protocol_env = _resolve_entry_point(env)(**dict(env_kwargs or {}))
            if not isinstance(self.protocol_env, Env):
                raise NotATextEnvError(
                    f"{env!r} built {type(self.protocol_env).__name__}, which does not satisfy "
                    "trl_env.protocol.Env (needs last_step_reward, alive, reset(seed), step(action))"
                )
        self.render_mode = render_mode
        self.observation_space = TextSpace(max_observation_length)
        self.action_space = TextSpace(max_action_length)
        self._transcript: list[tuple[str, str]] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode. ``options={"trl_env.seed": "any string"}`` passes a string seed."""
        super().reset(seed=seed)
        if options and _SEED_OPTION in options:
            task_seed = str(options[_SEED_OPTION])
        elif seed is not None:
            task_seed = str(seed)
        else:
            task_seed = str(int(self.np_random.integers(0, 2**63 - 1)))
        delta = self.protocol_env.reset(task_seed)
        self._transcript = [("env", delta)]
        return delta, {"seed": task_seed}

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Forward ``action`` to the protocol env."""
        if not self.protocol_env.alive:
            raise EpisodeOverError(
                f"step() called on a finished {type(self.protocol_env).__name__} episode; "
                "call reset() to start a new one"
            )
        delta = self.protocol_env.step(action)
        self._transcript += [("agent", action), ("env", delta)]
        info = dict(getattr(self.protocol_env, "last_step_info", None) or {})
        return (
            delta,
            float(self.protocol_env.last_step_reward),
            not self.protocol_env.alive,
            False,
            info,
        )

    def render(self) -> str | None:  # type: ignore[override]
        """The episode so far as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return "\n".join(
            f"{'>' if who == 'agent' else ' '} {text}" for who, text in self._transcript
        )

    def close(self) -> None:
        """Close the protocol env if it has a ``close`` method."""
        close = getattr(self.protocol_env, "close", None)
        if callable(close):
            close()


class GymnasiumToProtocol:
    """A gymnasium env with string spaces seen as a :class:`trl_env.protocol.Env`.

    ``reset(seed)`` maps the string seed to an int with :func:`trl_env._seeding.seed_to_int`
    (numeric strings map to themselves); ``alive`` is ``not (terminated or truncated)``;
    ``last_step_reward`` is the last reward. The last ``info``, ``terminated`` and ``truncated``
    stay available as attributes for callers that want them.

    Args:
        env: A gymnasium env (wrapped or not), or a registered ID to ``gym.make``.
        **make_kwargs: Passed to ``gym.make`` when ``env`` is an ID.

    Raises:
        NotATextEnvError: If the observation or action space does not hold strings.
    """

    def __init__(self, env: gym.Env[str, str] | str, **make_kwargs: Any) -> None:
        if isinstance(env, str):
            env = gym.make(env, **make_kwargs)
        elif make_kwargs:
            raise TypeError("make_kwargs only applies when `env` is an environment ID")
        for name in ("observation_space", "action_space"):
            space = getattr(env, name)
            if not is_text_space(space):
                raise NotATextEnvError(
                    f"{env} has {name} {space}, not a text space; wrap it so observations and "
                    "actions are strings (see trl_env.wrappers) or declare a trl_env.TextSpace"
                )
        self.gym_env = env
        self._passes_seed_strings = isinstance(env.unwrapped, ProtocolToGymnasium)
        self.last_step_reward: float = 0.0
        self.alive: bool = False
        self.terminated = False
        self.truncated = False
        self.last_info: dict[str, Any] = {}

    def reset(self, seed: Seed) -> Delta:
        """Start an episode with the task ``seed`` and return the first observation."""
        options = {_SEED_OPTION: seed} if self._passes_seed_strings else None
        observation, self.last_info = self.gym_env.reset(seed=seed_to_int(seed), options=options)
        self.last_step_reward, self.alive = 0.0, True
        self.terminated = self.truncated = False
        return observation

    def step(self, action: Action) -> Delta:
        """Apply ``action``; raises :class:`EpisodeOverError` once the episode has ended."""
        if not self.alive:
            raise EpisodeOverError(
                f"step() called on {self.gym_env} with no episode running (it ended or was never "
                "started); call reset(seed) first"
            )
        observation, reward, self.terminated, self.truncated, self.last_info = self.gym_env.step(
            action
        )
        self.last_step_reward = float(reward)
        self.alive = not (self.terminated or self.truncated)
        return observation

    def close(self) -> None:
        """Close the underlying gymnasium env."""
        self.gym_env.close()

    def __repr__(self) -> str:
        return f"GymnasiumToProtocol({self.gym_env})"
