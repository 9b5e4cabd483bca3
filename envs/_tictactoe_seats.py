"""Tic-tac-toe's two seats: what each seat is told, and the two-player contract.

The half of :class:`trl_env.envs.tictactoe.TextTicTacToeEnv` that deals with seats (its own
module to keep the game's module short): every seat's messages, from its own side ("You are O"),
and the methods of :class:`trl_env._two_player.TwoPlayerGame`. Seat 0 is X, seat 1 is O.
"""

from __future__ import annotations

from typing import Any

from trl_env._two_player import SeatStep

from ._common import reset_needed

__all__ = ["CELL_NAMES", "MARKS", "OPPONENTS", "TicTacToeSeats", "draw_board"]

EMPTY, AGENT, OPPONENT = ".", "X", "O"
MARKS = (AGENT, OPPONENT)
"""The mark of each seat: seat 0 (the agent of the gym API) is X, seat 1 (the opponent) O."""
OPPONENTS = ("random", "greedy", "perfect")
"""The game's scripted players."""
CELL_NAMES = tuple(f"{col}{row}" for row in "123" for col in "abc")
"""Cell names in index order 0-8: column letter a-c (left to right), row number 1-3 (top down)."""


def draw_board(board: str) -> str:
    """The board as four lines of text, with the column letters and row numbers."""
    rows = [f"{r + 1}  {' '.join(board[3 * r : 3 * r + 3])}" for r in range(3)]
    return "\n".join(["   a b c", *rows])


class TicTacToeSeats:
    """Each seat's messages and the two-player contract, on the game's state.

    The game keeps ``board``, ``result`` (``"X"``, ``"O"``, ``"draw"`` or ``None``),
    ``_to_move`` (a seat), ``_moves`` (``(seat, cell)`` in order), ``_forfeit``, and per seat
    ``_told`` (moves it has been told), ``_introduced`` and ``_feedback``; it fills
    ``_place(cell, seat)`` and ``_scripted_cell(name, mark)``.
    """

    board: str
    result: str | None
    draw_reward: float
    invalid_action_penalty: float
    game_name: str
    last_reply: Any
    _started: bool
    _done: bool
    _to_move: int
    _moves: list[tuple[int, int]]
    _forfeit: tuple[int, str] | None
    _told: list[int]
    _introduced: list[bool]
    _feedback: list[str | None]
    seats_outside: bool

    def _rules(self, seat: int) -> str:
        me, them = MARKS[seat], MARKS[1 - seat]
        return (
            f"Let's play tic-tac-toe. You are {me}, your opponent is {them}. Take turns marking an "
            "empty cell; the first to get three in a row (across, down or diagonally) wins.\n"
            "Cells are named by column letter a-c (left to right) and row number 1-3 (top to "
            "bottom): a1 is the top-left, b2 the centre, c3 the bottom-right. You may also use "
            "the numbers 1-9, counted row by row from the top-left (5 is the centre).\n"
            f"Win = 1, draw = {self.draw_reward:g}, loss = 0.\n"
            "Reply with one cell in square brackets, for example [b2].\n\n"
        )

    def _status(self, seat: int) -> str:
        if self.result is None:
            return f"Your move ({MARKS[seat]})."
        if self._forfeit is not None:
            loser, reason = self._forfeit
            if loser == seat:
                return f"You forfeited ({reason}): you lost."
            return f"Your opponent forfeited ({reason}): you won!"
        if self.result == "draw":
            return "The board is full: it's a draw."
        if self.result == MARKS[seat]:
            return "Three in a row: you won!"
        return "Your opponent got three in a row: you lost."

    def _seat_message(self, seat: int, consume: bool = True) -> str:
        """What ``seat`` has not been told yet: invalid-reply feedback, or the rules (first), or
        the moves played since it last moved, then the board and whose move it is."""
        feedback = self._feedback[seat]
        if consume:
            self._feedback[seat] = None
        if feedback is not None and self.result is None:  # over: how it ended, instead
            return feedback
        new = self._moves[self._told[seat] :]
        introduced = self._introduced[seat]
        if consume:
            self._told[seat], self._introduced[seat] = len(self._moves), True
        board = f"{draw_board(self.board)}\n{self._status(seat)}"
        if not introduced:
            opening = "".join(
                f"Your opponent moved first: {MARKS[s]} at {CELL_NAMES[c]}.\n"
                for s, c in new
                if s != seat
            )
            return f"{self._rules(seat)}{opening}{board}"
        said = " ".join(
            f"You: {MARKS[s]} at {CELL_NAMES[c]}." if s == seat
            else f"Opponent: {MARKS[s]} at {CELL_NAMES[c]}."
            for s, c in new
        )  # fmt: skip
        return f"{said}\n{board}" if said else board

    # --- the two-player contract (trl_env._two_player.TwoPlayerGame) ---------------------------

    @property
    def current_seat(self) -> int | None:
        """The seat to move (0 for X, 1 for O), ``None`` when the game is over or not started."""
        return None if not self._started or self.result is not None else self._to_move

    def _check_seat(self, seat: int, call: str) -> None:
        if self.current_seat is None:
            raise reset_needed(self.game_name, started=self._started, call=call)
        if seat != self.current_seat:
            raise ValueError(
                f"it is {MARKS[self._to_move]}'s turn (seat {self._to_move}), not seat {seat}'s"
            )

    def seat_observation(self, seat: int) -> str:
        """What ``seat`` has not been told yet (the rules from its side first)."""
        return self._seat_message(seat)

    def seat_step(self, seat: int, action: str) -> SeatStep:
        """Play ``action`` for ``seat`` (the seat to move); an invalid reply leaves it to move."""
        self._check_seat(seat, "seat_step()")
        self.last_reply = action
        cell, problem = self.read_move(action)
        if problem is not None:
            self._feedback[seat] = self.invalid_feedback(problem)
            return SeatStep(True, -self.invalid_action_penalty, problem)
        self._place(cell, seat)  # type: ignore[arg-type]
        return SeatStep()

    def forfeit(self, seat: int, reason: str) -> None:
        """``seat`` gives up: the other seat wins now."""
        self._check_seat(seat, "forfeit()")
        self._forfeit, self.result = (seat, reason), MARKS[1 - seat]
        if self.seats_outside:
            self._done = True

    def seat_result(self, seat: int) -> str | None:
        """``"win"``, ``"draw"`` or ``"loss"`` for ``seat`` (``None`` while playing)."""
        if self.result is None:
            return None
        if self.result == "draw":
            return "draw"
        return "win" if self.result == MARKS[seat] else "loss"

    def result_reward(self, result: str) -> float:
        """1.0 for a win, ``draw_reward`` for a draw, 0.0 for a loss."""
        return {"win": 1.0, "draw": self.draw_reward, "loss": 0.0}[result]

    def scripted_action(self, name: str) -> str:
        """The move of the scripted player ``name`` (``"random"``, ``"greedy"``, ``"perfect"``)
        for the seat to move, drawn from ``np_random``, as a reply like ``[b2]``."""
        if name not in OPPONENTS:
            raise ValueError(f"scripted players are {OPPONENTS}, got {name!r}")
        if self.current_seat is None:
            raise reset_needed(self.game_name, started=self._started, call="scripted_action()")
        return f"[{CELL_NAMES[self._scripted_cell(name, MARKS[self._to_move])]}]"
