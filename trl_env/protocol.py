"""The Text Env Protocol: the smallest contract a text environment for LLM agents can have.

An environment speaks in text deltas: :meth:`Env.reset` returns the first message, and every
:meth:`Env.step` returns only the *new* message that the agent's action produced, never the whole
history. A :class:`Processor` turns those deltas into model input and model output back into an
action.

Both are :func:`typing.runtime_checkable` protocols, so ``isinstance(obj, trl_env.protocol.Env)`` checks
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
    >>> isinstance(Echo(), trl_env.protocol.Env)
    True
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Protocol, TypeAlias, runtime_checkable

__all__ = ["Action", "Delta", "Env", "Language", "Processor", "Seed", "TokenProcessor"]

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


@runtime_checkable
class TokenProcessor(Processor, Protocol):
    """A :class:`Processor` that also works in token ids: what the token-exact rollout needs.

    The rollout builds each episode's token stream as ``initial_prompt_ids(...)``, then the ids
    the model sampled, then ``env_turn_ids(...)`` for each env reply, and so on; it never
    re-tokenises the conversation. :class:`trl_env.trl.ChatTemplateProcessor` implements it for
    any tokenizer with a chat template.

    Attributes:
        eos_token_ids: Token ids that end a model turn (generation stops on any of them).
        end_of_turn_id: The id that closes a turn; closes an episode's completion that would
            otherwise be empty.
    """

    @property
    def eos_token_ids(self) -> Set[int]:
        """Token ids that end a model turn."""
        ...

    @property
    def end_of_turn_id(self) -> int:
        """The id that closes a turn."""
        ...

    def initial_prompt_ids(self, system: str | None, first_user_message: str) -> list[int]:
        """Token ids of an episode's prompt: optional system message, the env's first message,
        and the generation prompt."""
        ...

    def env_turn_ids(self, user_message: str, *, last_token_id: int | None = None) -> list[int]:
        """Token ids of an env reply, to append right after the ids the model sampled (ending
        with the next generation prompt); ``last_token_id`` is the last sampled id."""
        ...

    def decode(self, token_ids: Sequence[int]) -> str:
        """The text of sampled ids, special tokens kept (for :meth:`parse_agent_output`)."""
        ...
