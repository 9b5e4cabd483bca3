"""Charge a reward penalty for every invalid action."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.core import ActType, ObsType

__all__ = ["PenalizeInvalidActions"]


class PenalizeInvalidActions(
    gym.Wrapper[ObsType, ActType, ObsType, ActType], gym.utils.RecordConstructorArgs
):
    """Subtracts ``penalty`` from the reward of every step with ``info["invalid_action"]`` true.

    Every env of the catalogue (and :class:`~trl_env.wrappers.ParseAction`) sets
    ``info["invalid_action"]`` on every step and already charges its own
    ``invalid_action_penalty``; use this wrapper to add a penalty on top, or to give one to a
    third-party env that only flags invalid actions (point ``info_key`` at its flag).

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.wrappers import PenalizeInvalidActions
        >>> env = PenalizeInvalidActions(gym.make("TextWordle-v0", invalid_action_penalty=0.0), 0.5)
        >>> _ = env.reset(seed=0)
        >>> env.step("not a word")[1]
        -0.5

    Args:
        env: An env that reports invalid actions in ``info``.
        penalty: Subtracted from the reward of each invalid step (>= 0).
        info_key: The boolean ``info`` key that flags an invalid action.
    """

    def __init__(
        self,
        env: gym.Env[ObsType, ActType],
        penalty: float = 0.1,
        *,
        info_key: str = "invalid_action",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, penalty=penalty, info_key=info_key)
        gym.Wrapper.__init__(self, env)
        if penalty < 0:
            raise ValueError(f"penalty must be >= 0, got {penalty}")
        self.penalty = float(penalty)
        self.info_key = info_key

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step, then subtract the penalty if the step was invalid."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        if info.get(self.info_key):
            reward = float(reward) - self.penalty
        return observation, reward, terminated, truncated, info
