"""Keep text observations under a length budget."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.core import ActType

from trl_env.spaces import TextSpace
from trl_env.wrappers._text import require_text_observations

__all__ = ["CapObservationLength"]


class CapObservationLength(
    gym.ObservationWrapper[str, ActType, str], gym.utils.RecordConstructorArgs
):
    """Cuts every text observation to at most ``max_length`` characters, ending with ``marker``.

    Useful to bound the context an episode can use (a model's context window, or
    ``max_completion_length`` in TRL): an observation longer than ``max_length`` keeps its first
    ``max_length - len(marker)`` characters followed by ``marker``. The observation space becomes
    ``TextSpace(max_length)``, which also bounds the shared-memory buffer of ``AsyncVectorEnv``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.wrappers import CapObservationLength
        >>> env = CapObservationLength(gym.make("TextWordle-v0"), 40)
        >>> env.reset(seed=0)[0]
        "Let's play Wordle. Guess the sec[...cut]"

    Args:
        env: An env with text observations.
        max_length: Longest observation, marker included.
        marker: What replaces the cut-off text.
    """

    def __init__(self, env: gym.Env[str, ActType], max_length: int, *, marker: str = "[...cut]"):
        gym.utils.RecordConstructorArgs.__init__(self, max_length=max_length, marker=marker)
        gym.ObservationWrapper.__init__(self, env)
        require_text_observations(env.observation_space, "CapObservationLength")
        if not 0 <= len(marker) < max_length:
            raise ValueError(
                f"max_length ({max_length}) must be longer than the marker ({marker!r})"
            )
        self.max_length = int(max_length)
        self.marker = marker
        self.observation_space = TextSpace(self.max_length)

    def observation(self, observation: str) -> str:
        """``observation``, cut to :attr:`max_length` characters if longer."""
        if len(observation) <= self.max_length:
            return observation
        return observation[: self.max_length - len(self.marker)] + self.marker
