"""Gymnasium's FrozenLake as a text env: ``TextFrozenLake-v1``, ``TextFrozenLake8x8-v1``."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from functools import partial
from typing import Any, ClassVar

import numpy as np
from gymnasium.envs.toy_text.frozen_lake import MAPS, FrozenLakeEnv
from trl_env.envs._common import improvement_reward
from trl_env.envs.toy_text._adapter import (
    GRID_MOVES,
    GRID_SYNONYMS,
    ToyTextEnv,
    grid_move,
    position,
)
from trl_env.envs.toy_text._solvers import cached_policy

__all__ = ["TextFrozenLakeEnv"]

_LAKE_ACTIONS = ("left", "down", "right", "up")


def _describe_lake(rows: tuple[str, ...], state: int) -> str:
    row, col = divmod(int(state), len(rows[0]))
    grid = [list(line) for line in rows]
    grid[row][col] = "@"
    return (
        "\n".join("".join(line) for line in grid)
        + f"\nYou (@) are at {position(state, len(rows[0]))}."
    )


def walking_distances(rows: Sequence[str]) -> dict[int, int]:
    """Moves from each cell to the nearest goal, walking around the holes (unslipped moves).

    Cells that cannot reach a goal, and the holes, are left out.

    Example:
        >>> distances = walking_distances(["SF", "HG"])
        >>> distances[0], distances[1], distances[3]
        (2, 1, 0)
    """
    shape = (len(rows), len(rows[0]))
    cells = "".join(rows)
    distances = {state: 0 for state, cell in enumerate(cells) if cell == "G"}
    frontier = deque(distances)
    while frontier:
        state = frontier.popleft()
        # Moves are reversible on a grid, so the cells one move from `state` are its neighbours.
        for direction in GRID_MOVES.values():
            neighbour = grid_move(state, direction, shape)
            if neighbour not in distances and cells[neighbour] != "H":
                distances[neighbour] = distances[state] + 1
                frontier.append(neighbour)
    return distances


class TextFrozenLakeEnv(ToyTextEnv):
    """Frozen Lake: cross a frozen lake from the start to the goal without falling into a hole.

    ## Description
    Gymnasium's ``FrozenLake-v1`` (``FrozenLakeEnv``), unchanged (but for the start cell with
    ``random_start``), as text. The lake is a grid of
    ``S`` (start), ``F`` (frozen, safe), ``H`` (hole) and ``G`` (goal); the player is drawn as
    ``@``. On slippery ice (the default, as in gymnasium) a move goes in the chosen direction with
    probability ``success_rate`` and otherwise to one of the two perpendicular directions.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`): ``[left]``, ``[down]``, ``[right]`` or ``[up]``
    (case-insensitive; the last bracketed word wins; a bare word works too; ``west``, ``south``,
    ``east``, ``north`` and ``l``/``d``/``r``/``u`` are accepted). Anything else is an *invalid
    action*: the game does not move, the reply gets feedback listing the legal actions,
    ``info["invalid_action"]`` is set and the reward is ``-invalid_action_penalty``.

    ## Observation Space
    Text. The first observation states the rules, the map and the reply format. Each later one is
    only the news: what the move did (including slips), the map with ``@`` and the position.

    ## Rewards
    1 for reaching the goal, 0 otherwise (gymnasium's schedule); ``-invalid_action_penalty`` for an
    invalid reply. The maximum return is 1. With ``partial_credit > 0`` (shaped reward), each
    valid move that does not reach the goal also earns ``partial_credit`` times the increase of
    its best *closeness* so far, where a cell's closeness is ``1 - d / d_start`` (``d`` the
    fewest moves from it to the goal around the holes, ``d_start`` the start's; 0 for a hole or a
    cell farther than the start). The shaped part of a return is therefore less than
    ``partial_credit``, a move to a cell closer than any before is always rewarded, and walking
    back and forth earns nothing. Success (``info["success"]``) is reaching the goal either way.

    ## Starting State
    The player starts on ``S`` (gymnasium's start). With ``random_start=True`` each game starts
    instead on a cell drawn uniformly, from the reset seed, among the safe cells other than the
    goal from which the goal can be reached (on the 4x4 map: 11 cells, 1 to 6 moves from the
    goal); ``d_start`` is then that cell's distance. Games then differ by seed, and some start
    near the goal, so a learner meets wins early and each cell's move where it pays (a curriculum
    of exploring starts).

    ## Episode End
    Terminated on reaching the goal or falling into a hole. Truncated by ``TimeLimit`` after 100
    steps (4x4) or 200 steps (8x8), invalid replies included.

    ## Arguments
    ```python
    gym.make("TextFrozenLake-v1", map_name="4x4", is_slippery=True, success_rate=1/3,
             invalid_action_penalty=0.1, partial_credit=0.0, random_start=False,
             render_mode="ansi")
    gym.make("TextFrozenLake8x8-v1")  # map_name="8x8", max_episode_steps=200
    ```
    ``map_name`` is ``"4x4"`` or ``"8x8"`` (gymnasium's maps); ``desc`` (a list of row strings)
    gives a custom map instead.

    ## Info
    Gymnasium's ``prob`` of the transition (float; left out of invalid replies), ``invalid_action``
    (bool, every step), ``success`` (bool, every step), ``action`` (the move played, str; left out
    of invalid replies) and ``error`` (str; only on invalid replies).

    ## Version History
    * v1: Initial version, wrapping gymnasium's ``FrozenLake-v1``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextFrozenLake-v1", is_slippery=False)
        >>> _ = env.reset(seed=0)
        >>> print(env.step("[right]")[0])
        You moved right.
        S@FF
        FHFH
        FFFH
        HFFG
        You (@) are at row 1, column 2.
    """

    description = (
        "Gymnasium's FrozenLake as text, on the {map_name} map: reach the goal, avoid the holes."
    )
    actions = _LAKE_ACTIONS
    synonyms: ClassVar[dict[str, list[str]]] = GRID_SYNONYMS

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        map_name: str = "4x4",
        desc: Sequence[str] | None = None,
        is_slippery: bool = True,
        success_rate: float = 1.0 / 3.0,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
        random_start: bool = False,
    ) -> None:
        if desc is None and map_name not in MAPS:
            raise ValueError(f"map_name must be one of {sorted(MAPS)}, got {map_name!r}")
        if partial_credit < 0:
            raise ValueError(f"partial_credit must be >= 0, got {partial_credit}")
        rows = tuple(desc if desc is not None else MAPS[map_name])
        self.partial_credit = float(partial_credit)
        self._distances = walking_distances(rows)
        self._start_distance = self._distances.get("".join(rows).find("S"), 0)
        self._best_closeness = 0.0
        self.random_start = bool(random_start)
        self.is_slippery = bool(is_slippery)
        self.success_rate = float(success_rate)
        self._rows = rows
        # A map with no S divides by zero in gymnasium's start distribution; random_start
        # replaces that distribution at once, so its warning would only mislead.
        with np.errstate(divide="ignore", invalid="ignore"):
            game = FrozenLakeEnv(
                desc=list(rows), is_slippery=is_slippery, success_rate=success_rate
            )
        if self.random_start:
            # Gymnasium's reset draws the start from this distribution with the env's generator.
            starts = [state for state, distance in self._distances.items() if distance > 0]
            if not starts:
                raise ValueError(
                    "random_start needs a safe cell from which the goal can be reached"
                )
            game.initial_state_distrib = np.bincount(starts, minlength=len(game.P)) / len(starts)
        start = (
            "from a random safe cell (@ marks where you start; S is the usual start)"
            if self.random_start
            else "from the start S"
        )
        slippery = (
            f"The ice is slippery: a move goes the way you chose only with probability "
            f"{success_rate:.2g}; otherwise you slide to one side (left or right of that direction).\n"
            if is_slippery
            else ""
        )
        rules = (
            f"Let's play Frozen Lake. Walk across a frozen lake ({len(rows)} rows x "
            f"{len(rows[0])} columns) {start} to the goal G without falling into a hole.\n"
            "Map: S start, F frozen ice (safe), H hole, G goal, @ you. Row 1 is the top (north) "
            "row, column 1 the left (west) column.\n"
            f"{slippery}"
            "Reaching G wins (reward 1). Falling into a hole ends the game (reward 0)."
        )
        super().__init__(
            game,
            render_mode=render_mode,
            describe=partial(_describe_lake, rows),
            rules=rules,
            invalid_action_penalty=invalid_action_penalty,
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game and return the rules, the map and the reply format."""
        self._best_closeness = 0.0
        observation, info = super().reset(seed=seed, options=options)
        # Closeness is measured from where this game starts (gymnasium's S, or a random cell).
        self._start_distance = self._distances.get(int(self.game.s), 0)  # type: ignore[attr-defined]
        return observation, info

    def _closeness(self, state: int) -> float:
        """``1 - d / d_start`` of a cell, in [0, 1] (0 where the goal cannot be reached)."""
        here = self._distances.get(int(state))
        if not self._start_distance or here is None:
            return 0.0
        return max(0.0, 1.0 - here / self._start_distance)

    def _shaped_reward(self, reward: float, success: bool) -> float:
        if not self.partial_credit or success:
            return reward
        shaped, self._best_closeness = improvement_reward(
            self.partial_credit,
            self._best_closeness,
            self._closeness(self.game.s),  # type: ignore[attr-defined]
        )
        return reward + shaped

    def _narrate(self, before: int, action: str, reward: float, terminated: bool) -> str:
        after = int(self.game.s)  # type: ignore[attr-defined]
        shape = (len(self._rows), len(self._rows[0]))
        if after == grid_move(before, GRID_MOVES[action], shape):
            message = (
                f"You moved {action}."
                if after != before
                else f"You tried to move {action} but the edge of the lake stopped you."
            )
        else:
            index = _LAKE_ACTIONS.index(action)
            sideways = [
                name
                for name in (_LAKE_ACTIONS[(index - 1) % 4], _LAKE_ACTIONS[(index + 1) % 4])
                if grid_move(before, GRID_MOVES[name], shape) == after
            ]
            slid = f"slid {sideways[0]}" if after != before else "slid against the edge"
            message = f"You tried to move {action} but slipped and {slid}."
        row, col = divmod(after, shape[1])
        if terminated and self._rows[row][col] == "H":
            message += " You fell into a hole. Game over."
        elif terminated:
            message += " You reached the goal. You win!"
        return message

    def oracle_index(self) -> int:
        """The optimal move (value iteration on the game's transition table)."""
        key = ("FrozenLake", self._rows, self.is_slippery, self.success_rate)
        return int(cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]
