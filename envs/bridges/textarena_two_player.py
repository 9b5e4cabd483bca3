"""TextArena two-player games against a scripted opponent that plays a random legal move.

The model is player 0 and moves first. After each of its moves, the opponent (player 1) plays a
legal move drawn uniformly with the env's ``np_random``, so the opponent is part of the seeded
dynamics: the same seed and the same model moves give the same game. Only games whose legal moves
are easy to list from TextArena's state are bridged (:data:`LEGAL_MOVES`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trl_env.envs.bridges.textarena_env import TextArenaEnv

__all__ = ["LEGAL_MOVES", "RandomOpponentTextArenaEnv"]


def _tictactoe_moves(game: Any) -> list[str]:
    board = game.state.game_state["board"]
    return [f"[{3 * r + c}]" for r in range(3) for c in range(3) if board[r][c] == ""]


def _connect_four_moves(game: Any) -> list[str]:
    top_row = game.state.game_state["board"][0]
    return [f"[{c}]" for c, cell in enumerate(top_row) if cell == "."]


LEGAL_MOVES: dict[str, Callable[[Any], list[str]]] = {
    "TicTacToe-v0": _tictactoe_moves,
    "ConnectFour-v0": _connect_four_moves,
}
"""TextArena game -> its legal moves in the current position, as move texts."""


class RandomOpponentTextArenaEnv(TextArenaEnv):
    """A two-player TextArena game against a random legal-move opponent.

    Rewards are TextArena's for player 0: 1 for a win, -1 for a loss, 0 for a draw.
    ``random_action`` plays a random *legal* move.
    """

    num_players = 2

    def _legal_moves(self) -> list[str]:
        return LEGAL_MOVES[self.game](self._game)

    def _play_opponents(self) -> bool:
        done = False
        while not done and self._game.state.current_player_id != 0:
            self._game.get_observation()  # the opponent's view: read, so it does not pile up
            moves = self._legal_moves()
            done, _ = self._game.step(moves[int(self.np_random.integers(len(moves)))])
        return bool(done)

    def random_action(self, rng: Any) -> str:
        """A uniformly random legal move (drawn with ``rng`` only)."""
        if self._game is None or self._done:
            return super().random_action(rng)
        moves = self._legal_moves()
        return moves[int(rng.integers(len(moves)))]
