"""TextArena games that have a simple solver: the env class with ``oracle_action``.

Each solver reads the live TextArena game (its ``state.game_state``, never changing it) and
returns the move text the game accepts. Registered for the games in :data:`SOLVERS`; the other
bridged games use :class:`~trl_env.envs.bridges.textarena_env.TextArenaEnv`, with no oracle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from trl_env.envs._common import reset_needed
from trl_env.envs.bridges.textarena_env import TextArenaEnv

__all__ = ["SOLVERS", "SolvableTextArenaEnv"]

_STEPS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def _tower_of_hanoi(game: Any) -> str:
    """The optimal next move from any legal position: put the largest misplaced disk on C."""
    towers: dict[str, list[int]] = game.state.game_state["towers"]
    where = {disk: peg for peg, disks in towers.items() for disk in disks}
    target = "C"
    for disk in range(max(where), 0, -1):
        if where[disk] == target:
            continue
        # Disk must go from its peg to `target`: first everything smaller onto the third peg.
        source = where[disk]
        spare = ({"A", "B", "C"} - {source, target}).pop()
        smaller_in_the_way = any(where[d] != spare for d in range(1, disk))
        if not smaller_in_the_way:
            return f"[{source} {target}]"
        target = spare  # solve "disk-1 .. 1 onto spare" first
    raise AssertionError("the tower is already solved")  # the game ends before this


def _guess_the_number(game: Any) -> str:
    """Binary search over the hints so far."""
    low, high = game.min_number, game.max_number
    for guess, hint in game.state.game_state["guess_history"]:
        if hint == "higher":
            low = max(low, guess + 1)
        else:
            high = min(high, guess - 1)
    return f"[{(low + high) // 2}]"


def _frozen_lake(game: Any) -> str:
    """The first step of a shortest path to the goal around the holes (breadth-first search)."""
    state = game.state.game_state
    grid, start, goal = state["grid"], tuple(state["player_pos"]), tuple(state["goal_pos"])
    first_step: dict[tuple[int, int], str | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            return f"[{first_step[cell]}]"
        for name, (dr, dc) in _STEPS.items():
            r, c = cell[0] + dr, cell[1] + dc
            inside = 0 <= r < len(grid) and 0 <= c < len(grid)
            if inside and (r, c) not in first_step and grid[r][c] != "H":
                first_step[(r, c)] = first_step[cell] or name
                queue.append((r, c))
    return "[up]"  # TextArena guarantees a path; this only keeps the oracle total


def _sudoku(game: Any) -> str:
    """The first empty cell, filled from the game's own (unique) solution."""
    board = game.state.game_state["board"]
    for r, row in enumerate(board):
        for c, value in enumerate(row):
            if value == 0:
                return f"[{r + 1} {c + 1} {game.full_grid[r][c]}]"
    raise AssertionError("the board is already full")  # the game ends before this


SOLVERS: dict[str, Callable[[Any], str]] = {
    "TowerOfHanoi-v0": _tower_of_hanoi,
    "GuessTheNumber-v0": _guess_the_number,
    "FrozenLake-v0": _frozen_lake,
    "Sudoku-v0": _sudoku,
}
"""TextArena game -> solver of the next move (optimal for the first three; Sudoku is unique)."""


class SolvableTextArenaEnv(TextArenaEnv):
    """:class:`TextArenaEnv` for a game in :data:`SOLVERS`: adds ``oracle_action``."""

    def oracle_action(self) -> str:
        """The solver's next move for the current position."""
        if self._game is None or self._done:
            raise reset_needed(f"TextArena/{self.game}", started=self._game is not None)
        return SOLVERS[self.game](self._game)
