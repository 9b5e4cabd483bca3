"""The trl-env catalogue of text environments (installed as ``trl_env.envs``).

Every environment is registered from the one table below when ``trl_env`` is imported, so
``import trl_env; gym.make("TextWordle-v0")`` works, and so does ``gym.make("trl_env:TextWordle-v0")``
with no prior import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

__all__ = ["REGISTRY", "EnvEntry", "register_envs"]


@dataclass(frozen=True)
class EnvEntry:
    """One row of the registration table.

    Attributes:
        id: Gymnasium ID, ``TextName-vN``.
        entry_point: ``"trl_env.envs.module:ClassName"``.
        description: One line for ``trl-env list`` and the docs.
        max_episode_steps: Turn limit applied by gymnasium's ``TimeLimit`` (sets ``truncated``).
        kwargs: Default constructor arguments (registered variants differ only here).
    """

    id: str
    entry_point: str
    description: str
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


REGISTRY: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="TextWordle-v0",
        entry_point="trl_env.envs.wordle:TextWordleEnv",
        description="Guess a secret five-letter English word in six tries from G/Y/X feedback.",
        max_episode_steps=6,
    ),
    # --- gymnasium toy-text adapters ---
    # --- native games: Mastermind, Hangman, GuessNumber ---
    # --- native games: TicTacToe, Sudoku, Countdown ---
)
"""The registration table: every environment of the catalogue, one row each."""


def register_envs() -> None:
    """Register every row of :data:`REGISTRY` with gymnasium (idempotent)."""
    for entry in REGISTRY:
        if entry.id in gym.registry:
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            max_episode_steps=entry.max_episode_steps,
            kwargs=dict(entry.kwargs),
        )
