"""Record the whole conversation of an episode."""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, SupportsFloat

import gymnasium as gym
from gymnasium.core import ActType, ObsType

__all__ = ["RecordTranscript", "Turn"]


class Turn(NamedTuple, Generic[ObsType, ActType]):
    """One turn of an episode: what the agent saw, what it replied, the reward it got."""

    observation: ObsType
    """The observation the agent answered (the reset observation for the first turn)."""
    action: ActType
    """The agent's action (its raw reply, for text envs)."""
    reward: float
    """The reward of that step."""


class RecordTranscript(
    gym.Wrapper[ObsType, ActType, ObsType, ActType], gym.utils.RecordConstructorArgs
):
    """Puts the episode's turns into ``info["transcript"]`` when it ends.

    ``info["transcript"]`` is a tuple of :class:`Turn` ``(observation, action, reward)``, one per
    step, where ``observation`` is what the agent saw *before* acting. The final observation is
    the one returned by the step that carries the transcript. The turns so far are also available
    at any time as :attr:`transcript`.

    Like gymnasium's ``RecordEpisodeStatistics``, it must sit outside every wrapper that can end
    an episode (``TimeLimit``, :class:`~trl_env.wrappers.LimitInvalidActions`) to see those
    endings, and outside the ones that rewrite observations to record what the agent saw: make it
    the outermost wrapper.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.wrappers import RecordTranscript
        >>> env = RecordTranscript(gym.make("TextWordle-v0", max_episode_steps=2))
        >>> _ = env.reset(seed=0, options={"secret": "crane"})
        >>> _ = env.step("[slate]")
        >>> *_, info = env.step("[crane]")
        >>> [(turn.action, turn.reward) for turn in info["transcript"]]
        [('[slate]', 0.0), ('[crane]', 1.0)]

    Args:
        env: Any environment.
        info_key: The ``info`` key the transcript is stored under.
    """

    def __init__(self, env: gym.Env[ObsType, ActType], *, info_key: str = "transcript") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, info_key=info_key)
        gym.Wrapper.__init__(self, env)
        self.info_key = info_key
        self._turns: list[Turn[ObsType, ActType]] = []
        self._observation: ObsType | None = None

    @property
    def transcript(self) -> tuple[Turn[ObsType, ActType], ...]:
        """The turns of the current episode so far."""
        return tuple(self._turns)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Start a new, empty transcript."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._turns = []
        self._observation = observation
        return observation, info

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step, record the turn, and attach the transcript when the episode ends."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._turns.append(Turn(self._observation, action, float(reward)))  # type: ignore[arg-type]
        self._observation = observation
        if terminated or truncated:
            info = {**info, self.info_key: tuple(self._turns)}
        return observation, reward, terminated, truncated, info
