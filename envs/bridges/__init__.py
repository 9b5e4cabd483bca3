"""Bridges to other catalogues: reasoning-gym tasks and TextArena games as gym IDs.

:func:`register_bridged_envs` (called once, as ``import trl_env`` registers the catalogue)
registers every bridged ID with :func:`gymnasium.register`, from static tables (``_tables.py``),
without importing either library; a bridged env imports its library when it is made, and raises
:class:`trl_env.error.MissingExtraError` naming the extra to install when the library is missing.
Each bridged catalogue has its own namespace (:data:`NAMESPACES`), which is how
:func:`trl_env.envs.env_specs` tells its IDs apart.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> "reasoning_gym/Countdown-v0" in gym.registry and "TextArena/TowerOfHanoi-v0" in gym.registry
    True
    >>> [spec.id for spec in trl_env.envs.env_specs("textarena")][:2]
    ['TextArena/2048-v0', 'TextArena/Bandit-v0']
"""

from __future__ import annotations

from gymnasium import register
from trl_env.envs.bridges._tables import (
    REASONING_GYM_NO_STORED_ANSWER,
    REASONING_GYM_TASKS,
    TEXTARENA_GAMES,
    reasoning_gym_id,
)

__all__ = ["NAMESPACES", "register_bridged_envs"]

NAMESPACES: dict[str, str] = {"reasoning-gym": "reasoning_gym", "textarena": "TextArena"}
"""The bridged catalogues, named as their trl-env extras (``pip install "trl-env[textarena]"``),
and the gym namespace of each one's IDs."""

_RG_MODULE = "trl_env.envs.bridges.reasoning_gym_env"
_TA_ENTRY_POINT = "trl_env.envs.bridges.textarena_env:TextArenaEnv"
_TA_ORACLE_ENTRY_POINT = "trl_env.envs.bridges.textarena_oracles:SolvableTextArenaEnv"
_TA_TWO_PLAYER_ENTRY_POINT = "trl_env.envs.bridges.textarena_two_player:RandomOpponentTextArenaEnv"


def register_bridged_envs() -> None:
    """Register every bridged ID with gymnasium (imports neither library).

    The entry point's class says whether an ID has an oracle (a task whose problems carry no
    stored answer, a game without a solver, gets a class without ``oracle_action``), so
    ``trl-env list`` answers without making the env. Descriptions come from the classes too
    (``description``).
    """
    for task in REASONING_GYM_TASKS:
        stored = task not in REASONING_GYM_NO_STORED_ANSWER
        register(
            id=reasoning_gym_id(task),
            entry_point=f"{_RG_MODULE}:"
            + ("StoredAnswerReasoningGymEnv" if stored else "ReasoningGymEnv"),
            kwargs={"task": task},
        )
    for game in TEXTARENA_GAMES:
        register(
            id=f"{NAMESPACES['textarena']}/{game.name}-v0",
            entry_point=(
                _TA_TWO_PLAYER_ENTRY_POINT
                if game.opponent
                else _TA_ORACLE_ENTRY_POINT
                if game.has_oracle
                else _TA_ENTRY_POINT
            ),
            max_episode_steps=game.max_episode_steps,
            kwargs={"game": f"{game.name}-v0", "moves": game.moves},
        )
