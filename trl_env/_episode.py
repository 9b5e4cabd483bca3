"""One played episode: which task it played (:class:`Task`) and what happened (:class:`Episode`).

The same record is filled by every way trl-env plays: the TRL rollout (which also fills the token
stream), ``trl-env eval`` with a random, oracle, scripted or model policy, and ``trl-env play``. The rule
for "the agent won" is :func:`is_success`, written once here.

Example:
    >>> episode = Episode(Task("TextWordle-v0", 3))
    >>> episode.env_id, episode.seed, episode.done
    ('TextWordle-v0', 3, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trl_env._seeding import seed_to_int

__all__ = ["ENDED_BY_ENV", "TASK_KEY", "Episode", "Task", "is_success"]

TASK_KEY = "trl_env_task"
"""Message field of a dataset prompt that holds the task as JSON."""

ENDED_BY_ENV = ("terminated", "truncated")
"""Values of :attr:`Episode.ended_by` that mean the env itself ended the episode."""


@dataclass(frozen=True, init=False)
class Task:
    """One episode to play: a registered env ID, the seed of the game, and ``gym.make`` kwargs.

    Args:
        env_id: A registered gymnasium ID, e.g. ``"TextWordle-v0"``.
        seed: The game's seed, ``reset(seed=...)``: an int in ``[0, 2**63 - 1]``, or a string,
            mapped to an int once, here, with :func:`trl_env._seeding.seed_to_int` (``"42"`` is
            42, any other string is hashed), so datasets and records that hold string seeds
            still play the same games.
        kwargs: Keyword arguments for ``gym.make``.

    Attributes:
        env_id: The env ID.
        seed: The seed the env is reset with (an int).
        kwargs: The ``gym.make`` kwargs.

    Raises:
        TypeError: ``seed`` is neither an int nor a string.
        ValueError: ``seed`` is a negative int or above ``2**63 - 1``.

    Example:
        >>> Task("TextWordle-v0", 3).seed, Task("TextWordle-v0", "3").seed
        (3, 3)
        >>> Task("TextWordle-v0", "3") == Task("TextWordle-v0", 3)
        True
    """

    env_id: str
    seed: int
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __init__(
        self, env_id: str, seed: int | str, kwargs: Mapping[str, Any] | None = None
    ) -> None:
        object.__setattr__(self, "env_id", env_id)
        object.__setattr__(self, "seed", seed_to_int(seed))
        object.__setattr__(self, "kwargs", {} if kwargs is None else kwargs)

    def to_json(self) -> str:
        """Serialise to the JSON stored in a prompt (keys sorted, so equal tasks are equal text)."""
        return json.dumps(
            {"env_id": self.env_id, "seed": self.seed, "kwargs": dict(self.kwargs)}, sort_keys=True
        )

    @property
    def kwargs_key(self) -> str:
        """A hashable key for the ``gym.make`` kwargs (envs are pooled per ID and kwargs)."""
        return json.dumps(dict(self.kwargs), sort_keys=True)

    def to_prompt(self) -> list[dict[str, str]]:
        """The conversational prompt that identifies this task (the content itself stays empty)."""
        return [{"role": "user", "content": "", TASK_KEY: self.to_json()}]


def is_success(info: Mapping[str, Any], terminated: bool, reward: float) -> bool:
    """Whether the final step of an episode is a win.

    An env that knows what winning is says so in ``info`` (``won``, ``success`` or
    ``is_success``); otherwise a positive final reward on termination counts as a win.

    Example:
        >>> is_success({"won": False}, True, 1.0), is_success({}, True, 1.0)
        (False, True)
    """
    for key in ("won", "success", "is_success"):
        if key in info:
            return bool(info[key])
    return bool(terminated and reward > 0)


@dataclass
class Episode:
    """One played episode: what happened and, when a model played it, its token stream.

    ``ended_by`` is ``"terminated"`` or ``"truncated"`` when the env ended it, ``"max_turns"`` or
    ``"token_budget"`` when a limit of the player did, ``"stopped"`` when the policy stopped
    (``quit`` in ``trl-env play``), and ``"error"`` when the env raised or returned a malformed
    value (or a random/oracle policy raised); ``error`` then says what happened.

    The transcript alternates ``{"role": "env", "text", "reward"}`` and
    ``{"role": "agent", "action", ...}`` entries (a model's turns add ``text``, ``reasoning`` and
    ``stopped``); an env error adds an ``"error"`` key to the env entry where it happened.
    """

    task: Task
    rewards: list[float] = field(default_factory=list)
    turns: int = 0
    invalid_actions: int = 0
    success: bool = False
    ended_by: str | None = None
    error: str | None = None
    transcript: list[dict[str, Any]] | None = field(default_factory=list)
    episode_return: float = 0.0
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    seat: dict[str, Any] | None = None
    """For one seat of a two-player game played from outside (self-play, head-to-head): ``role``
    (0: moved first, 1: moved second), ``seat`` (the seat's name), ``result`` (``"win"``,
    ``"draw"``, ``"loss"`` or ``None``), ``opponent`` (who played the other seat) and ``game``
    (the game's index in its batch: a self-play game's two seats share it); ``None`` otherwise."""

    @property
    def env_id(self) -> str:
        """The env ID of the task."""
        return self.task.env_id

    @property
    def seed(self) -> int:
        """The task's seed (the int the env was reset with)."""
        return self.task.seed

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.ended_by is not None

    @property
    def ended_by_env(self) -> bool:
        """Whether the env (not a limit, the policy or an error) ended the episode."""
        return self.ended_by in ENDED_BY_ENV

    def messages(self) -> list[dict[str, str]]:
        """The conversation as chat messages, with no template markup.

        Env turns are ``user`` messages (the observation); agent turns are ``assistant``
        messages whose ``content`` is the reply the env received (the action), with the model's
        reasoning, when it had any, under ``reasoning``. This is what reward functions get as
        the ``episode_messages`` column of the rollout.

        Example:
            >>> episode = Episode(Task("TextWordle-v0", 3), transcript=[
            ...     {"role": "env", "text": "Guess."},
            ...     {"role": "agent", "text": "<think>hm</think>[crane]", "reasoning": "hm",
            ...      "action": "[crane]"}])
            >>> episode.messages()[1]
            {'role': 'assistant', 'content': '[crane]', 'reasoning': 'hm'}
        """
        messages = []
        for entry in self.transcript or ():
            if entry["role"] == "env":
                messages.append({"role": "user", "content": str(entry.get("text", ""))})
                continue
            message = {"role": "assistant", "content": str(entry.get("action", ""))}
            if entry.get("reasoning"):
                message["reasoning"] = str(entry["reasoning"])
            messages.append(message)
        return messages

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one line of ``transcripts.jsonl``); the token stream is left out."""
        return {
            "env_id": self.env_id,
            "seed": self.seed,
            "episode_return": self.episode_return,
            "success": self.success,
            "turns": self.turns,
            "invalid_actions": self.invalid_actions,
            "ended_by": self.ended_by or "error",
            "error": self.error,
            "transcript": self.transcript,
        }
