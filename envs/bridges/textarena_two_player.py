"""TextArena two-player games against an opponent: a random legal move, or any policy.

The model is player 0 and moves first. By default, after each of its moves the opponent (player
1) plays a legal move drawn uniformly with the env's ``np_random``, so the opponent is part of the
seeded dynamics: the same seed and the same model moves give the same game. ``opponent=`` takes
any policy instead (a model, a function of a turn): it is told player 1's own messages and
replies as player 1. Only games whose legal moves are easy to list from TextArena's state are
bridged (:data:`LEGAL_MOVES`).

The env is a two-player game (:class:`trl_env._two_player.TwoPlayerGame`): seat ``i`` is
TextArena's player ``i``, each seat reads only its own messages, and ``start_seats(seed)``
starts a game whose two seats are both played from outside (head-to-head evals, self-play).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trl_env.envs._common import reset_needed
from trl_env.envs.bridges.textarena_env import (
    MAX_ACTION_CHARS,
    TextArenaEnv,
    _recording_invalid_moves,
)

from trl_env._two_player import SeatStep, TwoPlayerEnv

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


class RandomOpponentTextArenaEnv(TwoPlayerEnv, TextArenaEnv):
    """A two-player TextArena game against an opponent: a random legal move, or any policy.

    Rewards are TextArena's for player 0: 1 for a win, -1 for a loss, 0 for a draw.
    ``random_action`` plays a random *legal* move for the player to move. ``opponent`` is
    ``"random"`` or a policy (:class:`trl_env.Policy`, or a function ``fn(turn) -> reply``);
    TextArena's own rule ends the game when a player's second reply in a row is invalid (that
    player loses), for the model and a policy opponent alike, and an opponent that stops replying
    forfeits.
    """

    num_players = 2
    seat_names = ("Player 0", "Player 1")
    scripted_opponents = ("random",)

    def __init__(self, render_mode: str | None = None, *, opponent: Any = "random", **kwargs: Any):
        super().__init__(render_mode, **kwargs)
        self._init_opponent(opponent)
        self._forfeited: tuple[int, str] | None = None
        self._rewards: dict[int, float] | None = None
        self._reason = ""
        self._unread: list[str | None] = [None, None]  # per seat: a text to give it first

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Start a new game (player 0, the model, moves first)."""
        self._forfeited, self._rewards, self._unread = None, None, [None, None]
        observation, info = super().reset(seed=seed, options=options)
        self._begin_game(options)
        if self.seats_outside:  # player 0 reads its opening messages on its first turn
            self._unread[0] = observation
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play the model's move; the opponent answers (see the class docstring)."""
        self._refuse_gym_step()
        result = super().step(action)
        if self._done and self.current_seat is None:
            self._play_opponent()  # a policy opponent's episode records the end
        return result

    def _legal_moves(self) -> list[str]:
        return LEGAL_MOVES[self.game](self._game)

    def _play_opponents(self) -> bool:
        if not isinstance(self.opponent, str):
            self._play_opponent()
            return self.current_seat is None
        done = False
        while not done and self._game.state.current_player_id != 0:
            with self._isolated():
                self._game.get_observation()  # the opponent's view: read, so it does not pile up
                done, _ = self._game.step(self.scripted_action("random"))
        return bool(done)

    def _final_rewards(self) -> tuple[dict[int, float], str]:
        if self._forfeited is not None:
            loser, reason = self._forfeited
            return {loser: -1.0, 1 - loser: 1.0}, f"Player {loser} forfeited ({reason})."
        if self._rewards is None:
            rewards, reason = super()._final_rewards()
            self._rewards, self._reason = rewards, reason
        return self._rewards, self._reason

    def random_action(self, rng: Any) -> str:
        """A uniformly random legal move (drawn with ``rng`` only)."""
        if self._game is None or self._done:
            return super().random_action(rng)
        moves = self._legal_moves()
        return moves[int(rng.integers(len(moves)))]

    # --- the two-player contract (trl_env._two_player.TwoPlayerGame) ---------------------------

    @property
    def current_seat(self) -> int | None:
        """The player to move, ``None`` when the game is over (or not started)."""
        if self._game is None or self._forfeited is not None or self._game.state.done:
            return None
        return int(self._game.state.current_player_id)

    def _check_seat(self, seat: int, call: str) -> None:
        if self.current_seat is None:
            raise reset_needed(f"TextArena/{self.game}", started=self._game is not None, call=call)
        if seat != self.current_seat:
            raise ValueError(f"it is player {self.current_seat}'s turn, not player {seat}'s")

    def seat_observation(self, seat: int) -> str:
        """The messages TextArena sent player ``seat`` since it last moved (and the end)."""
        unread, self._unread[seat] = self._unread[seat], None
        if unread is not None and self.current_seat is not None:
            return unread  # the opening, or feedback on a reply too long to reach the game
        ending = None
        if self.current_seat is None:
            ending = self._ending(seat)
        with self._isolated():
            return self._read_messages(ending, player=seat)

    def _ending(self, seat: int) -> str:
        if self._forfeited is not None:
            return self._final_rewards()[1]
        with self._isolated():
            self._final_rewards()
        return str(self._game.state.game_info.get(seat, {}).get("reason", self._reason))

    def seat_step(self, seat: int, action: str) -> SeatStep:
        """Play ``action`` as player ``seat`` (the player to move)."""
        self._check_seat(seat, "seat_step()")
        if len(action) > MAX_ACTION_CHARS:
            self._unread[seat] = (
                f"Invalid move: your reply is {len(action)} characters long; the game reads at "
                f"most {MAX_ACTION_CHARS}. Reply with your move in square brackets."
            )
            return SeatStep(True, -self.invalid_action_penalty, "reply too long")
        verdicts: list[str] = []
        with self._isolated(), _recording_invalid_moves(self._game, verdicts):
            self._game.step(action)
        if self.current_seat is None and self.seats_outside:
            self._done = True
        if verdicts:
            return SeatStep(True, -self.invalid_action_penalty, verdicts[-1])
        return SeatStep()

    def forfeit(self, seat: int, reason: str) -> None:
        """Player ``seat`` gives up: the other player wins now."""
        self._check_seat(seat, "forfeit()")
        self._forfeited = (seat, reason)
        if self.seats_outside:
            self._done = True

    def seat_result(self, seat: int) -> str | None:
        """``"win"``, ``"draw"`` or ``"loss"`` for player ``seat`` (``None`` while playing)."""
        if self._game is None or self.current_seat is not None:
            return None
        with self._isolated():
            reward = self._final_rewards()[0].get(seat, 0.0)
        return "win" if reward > 0 else "loss" if reward < 0 else "draw"

    def result_reward(self, result: str) -> float:
        """TextArena's rewards: 1 for a win, 0 for a draw, -1 for a loss."""
        return {"win": 1.0, "draw": 0.0, "loss": -1.0}[result]

    def scripted_action(self, name: str) -> str:
        """The ``"random"`` player's move for the player to move: a uniformly random legal move
        drawn from ``np_random``."""
        if name != "random":
            raise ValueError(f"scripted players are ('random',), got {name!r}")
        moves = self._legal_moves()
        return moves[int(self.np_random.integers(len(moves)))]
