"""End an episode after too many invalid actions in a row."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.core import ActType, ObsType

from trl_env.wrappers._text import widen

__all__ = ["LimitInvalidActions"]


class LimitInvalidActions(
    gym.Wrapper[ObsType, ActType, ObsType, ActType], gym.utils.RecordConstructorArgs
):
    """Truncates the episode after ``max_consecutive`` invalid actions in a row.

    Reads ``info["invalid_action"]`` (every env of the catalogue and
    :class:`~trl_env.wrappers.ParseAction` set it on every step). When the count reaches
    ``max_consecutive``, the step returns ``truncated=True``, ``info["invalid_action_limit"]=True``
    and, for text observations, the observation ends with a sentence saying why the episode is
    over. A valid action resets the count. A model that keeps replying in the wrong format thus
    stops wasting generation on a long, hopeless episode. ``step`` after that raises
    :class:`gymnasium.error.ResetNeeded`. Wrappers that record episodes
    (:class:`~trl_env.wrappers.RecordTranscript`, ``RecordEpisodeStatistics``) must go outside
    this one to see the truncation.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.wrappers import LimitInvalidActions
        >>> env = LimitInvalidActions(gym.make("TextWordle-v0", max_guesses=10,
        ...                                    max_episode_steps=10), max_consecutive=2)
        >>> _ = env.reset(seed=0)
        >>> env.step("?")[3], env.step("??")[3]
        (False, True)

    Args:
        env: An env that reports invalid actions in ``info``.
        max_consecutive: Invalid actions in a row that end the episode (>= 1).
        info_key: The boolean ``info`` key that flags an invalid action.
    """

    def __init__(
        self,
        env: gym.Env[ObsType, ActType],
        max_consecutive: int = 3,
        *,
        info_key: str = "invalid_action",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, max_consecutive=max_consecutive, info_key=info_key
        )
        gym.Wrapper.__init__(self, env)
        if max_consecutive < 1:
            raise ValueError(f"max_consecutive must be >= 1, got {max_consecutive}")
        self.max_consecutive = int(max_consecutive)
        self.info_key = info_key
        self._message = f"\n{self.max_consecutive} invalid replies in a row: the episode is over."
        self.observation_space = widen(env.observation_space, len(self._message))
        self._consecutive = 0
        self._limit_reached = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the count with the episode."""
        self._consecutive = 0
        self._limit_reached = False
        return self.env.reset(seed=seed, options=options)

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step, count invalid actions, truncate when the limit is reached."""
        if self._limit_reached:
            raise gym.error.ResetNeeded(
                "step() called after the invalid-action limit ended the episode; call reset()"
            )
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._consecutive = self._consecutive + 1 if info.get(self.info_key) else 0
        if self._consecutive >= self.max_consecutive and not terminated:
            self._limit_reached = True
            truncated = True
            info = {**info, "invalid_action_limit": True}
            if isinstance(observation, str):
                observation = observation + self._message  # type: ignore[assignment]
        return observation, reward, terminated, truncated, info
