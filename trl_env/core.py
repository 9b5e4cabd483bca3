"""The Text Env Protocol: the smallest contract a text environment for LLM agents can have.

An environment speaks in text deltas: :meth:`Env.reset` returns the first message, and every
:meth:`Env.step` returns only the *new* message that the agent's action produced, never the whole
history. A :class:`Processor` turns those deltas into model input and model output back into an
action.

Both are :func:`typing.runtime_checkable` protocols, so ``isinstance(obj, trl_env.Env)`` checks
structure, not inheritance:

    >>> import trl_env
    >>> class Echo:
    ...     last_step_reward = 0.0
    ...     alive = True
    ...     def reset(self, seed: str) -> str:
    ...         return "say something"
    ...     def step(self, action: str) -> str:
    ...         self.alive = False
    ...         return action
    >>> isinstance(Echo(), trl_env.Env)
    True
"""

from __future__ import annotations

from typing import Protocol, TypeAlias, runtime_checkable

__all__ = ["Action", "Delta", "Env", "Language", "Processor", "Seed"]

Action: TypeAlias = str
"""What the agent does: the action text parsed out of a model completion."""
Delta: TypeAlias = str
"""What the environment says back: only the new message, not the conversation so far."""
Seed: TypeAlias = str
"""A task identifier. Numeric strings are used as integer seeds; other strings are hashed stably."""
Language: TypeAlias = str
"""Text in the model's input format (for example a chat template rendering)."""


@runtime_checkable
class Env(Protocol):
    """A text environment.

    Attributes:
        last_step_reward: The reward of the most recent :meth:`step` (0.0 after :meth:`reset`).
        alive: ``False`` once the episode has ended, for any reason.
    """

    last_step_reward: float
    alive: bool

    def reset(self, seed: Seed) -> Delta:
        """Start a new episode for the task ``seed`` and return its first message."""
        ...

    def step(self, action: Action) -> Delta:
        """Apply ``action`` and return the environment's reply (the delta)."""
        ...


@runtime_checkable
class Processor(Protocol):
    """Turns environment deltas into model input and model output into actions."""

    def init_system_input(self, prompt: str) -> Language:
        """Render the opening of a conversation whose system message is ``prompt``."""
        ...

    def append_user_input(self, prompt: str) -> Language:
        """Render a user turn (plus the generation prompt) that follows the model's last turn."""
        ...

    def parse_agent_output(self, completion: str) -> tuple[str, Action]:
        """Split a model completion into ``(reasoning, action)``."""
        ...
