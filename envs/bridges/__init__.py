"""Bridges to other catalogues: reasoning-gym tasks and TextArena games as gym IDs.

``register_bridges`` registers every bridged ID from static tables (``_tables.py``) without
importing either library; a bridged env imports its library when it is made, and raises
:class:`trl_env.MissingExtraError` naming the extra to install when the library is missing.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> "reasoning_gym/Countdown-v0" in gym.registry and "TextArena/TowerOfHanoi-v0" in gym.registry
    True
    >>> [row["id"] for row in catalogue_rows("textarena")][:2]
    ['TextArena/2048-v0', 'TextArena/Bandit-v0']
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from trl_env.envs.bridges._tables import (
    REASONING_GYM_NO_STORED_ANSWER,
    REASONING_GYM_TASKS,
    TEXTARENA_GAMES,
    reasoning_gym_id,
)

__all__ = ["SOURCES", "bridged_ids", "catalogue_rows", "register_bridges"]

SOURCES: tuple[str, ...] = ("reasoning-gym", "textarena")
"""The bridged catalogues, named as their trl-env extras (``pip install "trl-env[textarena]"``)."""

_RG_MODULE = "trl_env.envs.bridges.reasoning_gym_env"
_TA_ENTRY_POINT = "trl_env.envs.bridges.textarena_env:TextArenaEnv"
_TA_ORACLE_ENTRY_POINT = "trl_env.envs.bridges.textarena_oracles:SolvableTextArenaEnv"
_TA_TWO_PLAYER_ENTRY_POINT = "trl_env.envs.bridges.textarena_two_player:RandomOpponentTextArenaEnv"


def _rows(source: str) -> list[dict[str, Any]]:
    if source == "reasoning-gym":
        return [
            {
                "id": reasoning_gym_id(task),
                "source": source,
                "description": f"reasoning-gym task {task!r}: answer one generated problem.",
                "has_oracle": task not in REASONING_GYM_NO_STORED_ANSWER,
                "entry_point": f"{_RG_MODULE}:"
                + (
                    "ReasoningGymEnv"
                    if task in REASONING_GYM_NO_STORED_ANSWER
                    else "StoredAnswerReasoningGymEnv"
                ),
                "kwargs": {"task": task},
                "max_episode_steps": None,
            }
            for task in REASONING_GYM_TASKS
        ]
    return [
        {
            "id": f"TextArena/{game.name}-v0",
            "source": source,
            "description": f"TextArena {game.name}: {game.description}",
            "has_oracle": game.has_oracle,
            "entry_point": (
                _TA_TWO_PLAYER_ENTRY_POINT
                if game.opponent
                else _TA_ORACLE_ENTRY_POINT
                if game.has_oracle
                else _TA_ENTRY_POINT
            ),
            "kwargs": {"game": f"{game.name}-v0", "moves": game.moves},
            "max_episode_steps": game.max_episode_steps,
        }
        for game in TEXTARENA_GAMES
    ]


def catalogue_rows(source: str | None = None) -> list[dict[str, Any]]:
    """The bridged IDs for ``trl-env list``: one dict per ID, sorted by source then ID.

    Args:
        source: ``"reasoning-gym"`` or ``"textarena"`` for one catalogue, ``None`` for both.

    Returns:
        Dicts with ``id``, ``source``, ``description``, ``has_oracle`` (and the registration's
        ``entry_point``, ``kwargs``, ``max_episode_steps``).

    Raises:
        ValueError: for an unknown ``source``, listing the known ones.
    """
    if source is not None and source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    return [row for name in SOURCES if source in (None, name) for row in _rows(name)]


def bridged_ids(source: str | None = None) -> list[str]:
    """The bridged gym IDs (of one ``source``, or all)."""
    return [row["id"] for row in catalogue_rows(source)]


def register_bridges() -> None:
    """Register every bridged ID with gymnasium (idempotent; imports neither library)."""
    for row in catalogue_rows():
        if row["id"] in gym.registry:
            continue
        gym.register(
            id=row["id"],
            entry_point=row["entry_point"],
            max_episode_steps=row["max_episode_steps"],
            kwargs=dict(row["kwargs"]),
        )
