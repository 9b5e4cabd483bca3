"""Turn any observation into text an LLM can read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import gymnasium as gym
from gymnasium.core import ActType, ObsType

from trl_env.spaces import TextSpace
from trl_env.wrappers._text import sanitize

__all__ = ["DescribeObservation"]


def _default_description(observation: Any) -> str:
    return f"Observation: {observation}"


class DescribeObservation(
    gym.ObservationWrapper[str, ActType, ObsType], gym.utils.RecordConstructorArgs
):
    """Replaces every observation by a text description of it.

    The description comes from, in order of preference:

    1. ``describe(observation) -> str``, a function you give (use a module-level function or a
       :func:`functools.partial` of one, so the env stays picklable for ``AsyncVectorEnv``);
    2. ``describe="ansi"`` (the default when the env has ``render_mode="ansi"``): the env's own
       ``render()`` after every ``reset``/``step``;
    3. otherwise ``"Observation: <observation>"``.

    Whatever the source, the text is made to fit the new observation space: ANSI escape sequences
    (the colours of gymnasium's ``ansi`` renders) and other non-printable characters are removed,
    and anything past ``max_length`` characters is cut off. Note that the colours are often the
    only mark of the agent's position (FrozenLake, Taxi): for those, write a ``describe`` function.

    Pair it with :class:`~trl_env.wrappers.ParseAction` to make a complete text env; this wrapper
    changes only observations.

    Example:
        >>> import gymnasium as gym
        >>> from trl_env.wrappers import DescribeObservation
        >>> env = DescribeObservation(
        ...     gym.make("FrozenLake-v1", is_slippery=False), lambda s: f"You are on square {s}."
        ... )
        >>> env.reset(seed=0)[0]
        'You are on square 0.'
        >>> env.observation_space
        TextSpace(max_length=8192, min_length=0)

    Args:
        env: Any environment.
        describe: ``observation -> str``, or ``"ansi"`` for the env's render, or ``None`` for
            ``"ansi"`` when the env renders ansi and a generic description otherwise.
        max_length: ``max_length`` of the text observation space; longer descriptions are cut.
    """

    def __init__(
        self,
        env: gym.Env[ObsType, ActType],
        describe: Callable[[ObsType], str] | Literal["ansi"] | None = None,
        *,
        max_length: int = 8192,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, describe=describe, max_length=max_length)
        gym.ObservationWrapper.__init__(self, env)
        if describe is None:
            describe = "ansi" if env.render_mode == "ansi" else None
        if describe == "ansi" and env.render_mode != "ansi":
            raise ValueError(
                "describe='ansi' renders the env, which needs render_mode='ansi' "
                f"(this env has render_mode={env.render_mode!r}); create it with "
                "render_mode='ansi' or pass a describe function"
            )
        if describe is not None and describe != "ansi" and not callable(describe):
            raise TypeError(f"describe must be a callable, 'ansi' or None, got {describe!r}")
        self._describe = describe
        self.observation_space = TextSpace(max_length)

    def observation(self, observation: ObsType) -> str:
        """The text for ``observation``."""
        if self._describe == "ansi":
            text = self.env.render()
        elif self._describe is None:
            text = _default_description(observation)
        else:
            text = self._describe(observation)
        if not isinstance(text, str):
            raise TypeError(
                f"the description must be a str, got {type(text).__name__}; "
                "make the describe function (or the env's ansi render) return text"
            )
        space = self.observation_space
        if not isinstance(space, TextSpace):
            raise TypeError(
                f"DescribeObservation's observation_space must stay a TextSpace, got {space!r}; "
                "set a TextSpace (its max_length is where descriptions are cut)"
            )
        return sanitize(text)[: space.max_length]
