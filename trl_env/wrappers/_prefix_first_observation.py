"""Put a task preamble in front of the first observation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.core import ActType

from trl_env.wrappers._text import require_text_observations, sanitize, widen

__all__ = ["PrefixFirstObservation"]


class PrefixFirstObservation(
    gym.Wrapper[str, ActType, str, ActType], gym.utils.RecordConstructorArgs
):
    """Prepends ``prefix`` (a task description, a persona, rules) to the reset observation.

    Only the first observation of each episode changes, so later observations stay deltas. The
    text observation space grows by the length of the prefix and separator.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.wrappers import PrefixFirstObservation
        >>> env = PrefixFirstObservation(gym.make("TextWordle-v0"), "You are a word-game expert.")
        >>> env.reset(seed=0)[0].splitlines()[:3]
        ['You are a word-game expert.', '', "Let's play Wordle. Guess the secret five-letter English word in 6 tries."]

    Args:
        env: An env with text observations.
        prefix: The text to put first (printable characters, newlines and tabs).
        separator: Between the prefix and the env's first observation.
    """

    def __init__(self, env: gym.Env[str, ActType], prefix: str, *, separator: str = "\n\n") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, prefix=prefix, separator=separator)
        gym.Wrapper.__init__(self, env)
        require_text_observations(env.observation_space, "PrefixFirstObservation")
        if sanitize(prefix + separator) != prefix + separator:
            raise ValueError(
                "prefix and separator must contain only printable characters, newlines and tabs"
            )
        self.prefix = prefix
        self.separator = separator
        self.observation_space = widen(env.observation_space, len(prefix) + len(separator))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Reset the inner env and prefix its first observation."""
        observation, info = self.env.reset(seed=seed, options=options)
        return f"{self.prefix}{self.separator}{observation}", info
