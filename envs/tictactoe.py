"""Tic-tac-toe as a text environment: play X against a built-in opponent of selectable strength."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from trl_env._policies import Policy
from trl_env._two_player import TwoPlayerEnv

from ._common import invalid_feedback, quote, read_reply
from ._text_game import TextGame
from ._tictactoe_seats import AGENT, CELL_NAMES, EMPTY, MARKS, OPPONENT, OPPONENTS, TicTacToeSeats
from ._tictactoe_seats import draw_board as _draw_board

__all__ = [
    "CELL_NAMES",
    "TextTicTacToeEnv",
    "best_moves",
    "minimax_score",
    "oracle_action",
    "parse_move",
    "winner",
]

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_CELL = re.compile(r"(?:([abc])\s*([123])|([123])\s*([abc])|([1-9]))", re.IGNORECASE)


def winner(board: str) -> str | None:
    """``"X"`` or ``"O"`` if that mark has three in a row, ``"draw"`` if the board is full, else None.

    Args:
        board: Nine characters, row by row from the top-left: ``"X"``, ``"O"`` or ``"."``.

    Example:
        >>> winner("XXX" "OO." "...")
        'X'
        >>> winner("XOX" "XOO" "OXX")
        'draw'
        >>> winner("X........") is None
        True
    """
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return "draw" if EMPTY not in board else None


def _other(mark: str) -> str:
    return OPPONENT if mark == AGENT else AGENT


@cache
def _minimax_table() -> dict[tuple[str, str], int]:
    """Score of every reachable ``(board, mark to move)`` for X, built once per process.

    A win scores ``1 + empty cells left`` for its owner (faster wins are better, slower losses
    less bad), a draw 0; positive means X wins under perfect play, negative O.
    """
    table: dict[tuple[str, str], int] = {}

    def score(board: str, to_move: str) -> int:
        key = (board, to_move)
        if key in table:
            return table[key]
        result = winner(board)
        if result == "draw":
            value = 0
        elif result is not None:
            value = (1 + board.count(EMPTY)) * (1 if result == AGENT else -1)
        else:
            children = [
                score(board[:i] + to_move + board[i + 1 :], _other(to_move))
                for i, cell in enumerate(board)
                if cell == EMPTY
            ]
            value = max(children) if to_move == AGENT else min(children)
        table[key] = value
        return value

    for first in (AGENT, OPPONENT):
        score(EMPTY * 9, first)
    return table


def minimax_score(board: str, to_move: str) -> int:
    """Perfect-play score of a position for X (> 0 X wins, 0 draw, < 0 O wins).

    Args:
        board: Nine characters ``"X"``, ``"O"``, ``"."`` (row by row from the top-left).
        to_move: ``"X"`` or ``"O"``.

    Example:
        >>> minimax_score("." * 9, "X")
        0
        >>> minimax_score("XX." "OO." "...", "X")  # X completes the top row, 4 cells left
        5
    """
    return _minimax_table()[(board, to_move)]


def best_moves(board: str, to_move: str) -> list[int]:
    """Every optimal cell index (0-8) for ``to_move`` under perfect play, ascending.

    Example:
        >>> best_moves("XX." "OO." "...", "O")  # O wins at once rather than block
        [5]
    """
    table = _minimax_table()
    sign = 1 if to_move == AGENT else -1
    options = {
        i: sign * table[(board[:i] + to_move + board[i + 1 :], _other(to_move))]
        for i, cell in enumerate(board)
        if cell == EMPTY
    }
    if not options:
        return []
    top = max(options.values())
    return [i for i, value in options.items() if value == top]


def oracle_action(env: gym.Env[str, str]) -> str:
    """A perfect move for the seat to move in ``env``'s position (the agent, X, through the gym
    API), as a reply like ``[b2]``.

    Minimax over the whole game tree (memoised once per process): it never loses, so against
    ``opponent="perfect"`` it always draws, and it takes every win the opponent allows. The same
    as ``env.unwrapped.oracle_action()``; on a finished game it raises
    :class:`~trl_env.envs._common.GameNotRunningError`.
    """
    return TextTicTacToeEnv.unwrap(env, "oracle_action").oracle_action()


def parse_move(action: str) -> tuple[int | None, str | None]:
    """Extract a cell index (0-8) from free model text.

    The last ``[bracketed]`` cell wins; without brackets the whole reply must be one cell. A cell
    is a column letter and row number (``b2``, ``B2``, ``2b``) or a number 1-9 counted row by row
    from the top-left (``5`` is the centre).

    Returns:
        ``(index, None)`` or ``(None, problem)`` describing why no cell could be read.

    Example:
        >>> parse_move("I'll take the centre: [b2]")
        (4, None)
        >>> parse_move("[9]")
        (8, None)
        >>> parse_move("[d4]")
        (None, "'d4' is not a cell: use a1-c3 (column a-c, row 1-3) or a number 1-9")
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    match = _CELL.fullmatch(candidate)
    if match is None:
        if not bracketed and any(w in candidate for w in " \t\n\r"):
            return None, "no move found: put one cell in square brackets, like [b2]"
        return (
            None,
            f"{quote(candidate)} is not a cell: use a1-c3 (column a-c, row 1-3) or a number 1-9",
        )
    if match.group(5):
        return int(match.group(5)) - 1, None
    col = (match.group(1) or match.group(4)).lower()
    row = match.group(2) or match.group(3)
    return CELL_NAMES.index(f"{col}{row}"), None


class TextTicTacToeEnv(TicTacToeSeats, TwoPlayerEnv, TextGame[int]):
    """Tic-tac-toe: get three X in a row against an O opponent, scripted or any policy.

    ## Description
    The agent plays X on a 3x3 board against an O player: a built-in one of selectable strength,
    ``"random"`` (a uniformly random empty cell), ``"greedy"`` (wins at once if it can, else
    blocks the agent's immediate win, else random) or ``"perfect"`` (minimax: never loses; random
    among its optimal moves), or any policy (a model, a function of a turn; see ``opponent``).
    Who moves first is ``agent_first`` (or a coin flip from ``self.np_random``). All scripted
    randomness comes from ``self.np_random``. The minimax table (every reachable position) is
    built once per process, never in ``reset``.

    The env is a two-player game (``trl_env._two_player.TwoPlayerGame``): seat 0 is X, seat 1
    is O, ``current_seat`` says whose turn it is, and each seat has its own observations (O is
    told the rules from its side, "You are O", and its own moves as "You"). A policy opponent
    sees only O's conversation (its episode is ``env.unwrapped.opponent_episode``); it may reply
    invalidly (feedback, still its turn) up to 3 times in a row, then, like an opponent that
    stops replying, it forfeits and the agent wins. ``start_seats(seed)`` starts a game whose two
    seats are both played from outside with ``seat_step`` (head-to-head evals, self-play).

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The move is the last ``[bracketed]`` cell, or the whole
    reply if it is a single bare cell. Cells are named by column letter ``a``-``c`` (left to right)
    and row number ``1``-``3`` (top to bottom): ``[b2]`` is the centre, ``[a1]`` the top-left;
    ``[2b]`` and upper case are accepted too, and so are the numbers ``1``-``9`` counted row by
    row from the top-left (``[5]`` is the centre). Anything else, or an occupied cell, is an
    *invalid action*: it never raises, returns feedback saying what was wrong (with the empty
    cells), sets ``info["invalid_action"]`` and gives ``-invalid_action_penalty``. The turn is not
    consumed: the board is unchanged, the opponent does not move, and it is still the agent's
    move (the step still counts towards ``max_episode_steps``).
    A reply that states exactly one legal move among other words ("I take the centre, b2") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rules, the cell names, the reply format and the board
    (after the opponent's opening move when it starts). Every later one is only the new message:
    the two moves just played and the board (9 cells, the whole state, 4 short lines).

    ## Rewards
    At the end of the game: 1.0 for a win, ``draw_reward`` (0.5) for a draw, 0.0 for a loss;
    0.0 on other valid steps; ``-invalid_action_penalty`` for an invalid action. Against
    ``opponent="perfect"`` the best achievable return is ``draw_reward`` (perfect play draws).

    ## Episode End
    Terminated when someone has three in a row, the board is full, or a policy opponent forfeits.
    Truncated by gymnasium's ``TimeLimit`` (registered ``max_episode_steps=10``: at most 5 moves
    are needed, the rest is slack for invalid replies).

    ## Arguments
    ```python
    gym.make("TextTicTacToe-v0", opponent="random", agent_first=True, draw_reward=0.5,
             invalid_action_penalty=0.1, render_mode="ansi")
    ```
    ``opponent`` is ``"random"``, ``"greedy"``, ``"perfect"`` (``TextTicTacToePerfect-v0``) or a
    policy: any :class:`trl_env.Policy` (a model from :func:`trl_env.trl.model_policy`, which
    plays greedily unless told otherwise) or a function ``fn(turn) -> reply``;
    ``agent_first`` is ``True``, ``False`` or ``"random"``.

    ## Info
    ``board`` (nine characters ``X``/``O``/``.``, row by row), ``agent_move`` and
    ``opponent_move`` of the step (cell names or ``None``: vector envs batch them as object
    arrays), ``legal_moves``, ``invalid_action``
    (with ``error``), ``winner`` (``"X"``, ``"O"``, ``"draw"`` or ``None``).

    ## Version History
    * v0: Initial version. Replies that state one legal move in plain words are accepted, and
      invalid-reply feedback quotes the reply (issue 9); seeds and valid moves are unchanged.
      ``opponent`` takes any policy, and the game says whose turn it is with per-seat
      observations (issue 32); games against the scripted opponents are unchanged.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextTicTacToe-v0", opponent="perfect")
        >>> observation, info = env.reset(seed=0)
        >>> observation, reward, terminated, truncated, info = env.step("[b2]")
        >>> info["agent_move"], info["board"][4]
        ('b2', 'X')
    """

    game_name = "TextTicTacToe"
    description = (
        "Tic-tac-toe as X against a {opponent} opponent; win 1, draw {draw_reward}, loss 0."
    )
    invalid_consequence = "It is still your turn."
    seat_names = MARKS
    scripted_opponents = OPPONENTS

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        opponent: Literal["random", "greedy", "perfect"] | Policy = "random",
        agent_first: bool | Literal["random"] = True,
        draw_reward: float = 0.5,
        invalid_action_penalty: float = 0.1,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        self._init_opponent(opponent)
        if agent_first not in (True, False, "random"):
            raise ValueError(f"agent_first must be True, False or 'random', got {agent_first!r}")
        if not 0.0 <= draw_reward <= 1.0:
            raise ValueError(f"draw_reward must be in [0, 1], got {draw_reward}")
        self.agent_first = agent_first
        self.draw_reward = float(draw_reward)
        # Built once per process and shared read-only: reset never rebuilds it.
        self._table = _minimax_table()
        self.board = EMPTY * 9
        self.result: str | None = None
        self._to_move = 0
        self._forfeit: tuple[int, str] | None = None
        self._moves: list[tuple[int, int]] = []  # (seat, cell), in the order played
        self._told = [0, 0]  # per seat: how many of the moves it has been told
        self._introduced = [False, False]  # per seat: whether it has had the rules
        self._feedback: list[str | None] = [None, None]  # per seat: invalid-reply feedback

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Start a new game (the opponent opens when it moves first) and return the rules."""
        self._begin_game(options)
        self.board = EMPTY * 9
        self.result, self._forfeit, self._moves = None, None, []
        self._told, self._introduced, self._feedback = [0, 0], [False, False], [None, None]
        if self.agent_first == "random":
            agent_starts = bool(self.np_random.integers(2))
        else:
            agent_starts = bool(self.agent_first)
        self._to_move = 0 if agent_starts else 1
        if not agent_starts and not self.seats_outside:
            self._started = True  # running already: a policy opponent's turn asks the game
            self._opponent_turn()
        # With both seats played from outside, X reads its first message on its first turn.
        return self._seat_message(0, consume=not self.seats_outside), self._info(None, None)

    def _opponent_turn(self) -> int | None:
        """The opponent's move: scripted, or its policy's (which may forfeit: ``None``)."""
        if isinstance(self.opponent, str):
            cell = self._scripted_cell(self.opponent, OPPONENT)
            self._place(cell, 1)
            return cell
        before = len(self._moves)
        self._play_opponent()
        return self._moves[before][1] if len(self._moves) > before else None

    def _scripted_cell(self, name: str, mark: str) -> int:
        empty = [i for i, cell in enumerate(self.board) if cell == EMPTY]
        choices = empty
        if name == "perfect":
            choices = best_moves(self.board, mark)
        elif name == "greedy":
            for player in (mark, _other(mark)):  # win if possible, else block
                wins = [i for i in empty if self._completes_line(i, player)]
                if wins:
                    choices = wins
                    break
        return choices[int(self.np_random.integers(len(choices)))]

    def _completes_line(self, cell: int, mark: str) -> bool:
        return any(cell in line and sum(self.board[i] == mark for i in line) == 2 for line in LINES)

    def _place(self, cell: int, seat: int) -> None:
        self.board = self.board[:cell] + MARKS[seat] + self.board[cell + 1 :]
        self._moves.append((seat, cell))
        self._to_move = 1 - seat
        self.result = winner(self.board)
        if self.result is not None and self.seats_outside:
            self._done = True

    def _legal_moves(self) -> list[str]:
        return [CELL_NAMES[i] for i, c in enumerate(self.board) if c == EMPTY]

    def _info(self, agent_move: str | None, opponent_move: str | None) -> dict[str, Any]:
        return {
            "board": self.board,
            "agent_move": agent_move,
            "opponent_move": opponent_move,
            "legal_moves": self._legal_moves(),
            "invalid_action": False,
            "winner": self.result,
        }

    def parse_move(self, action: Any) -> tuple[int | None, str | None]:
        cell, problem = parse_move(action)
        if cell is not None and self.board[cell] != EMPTY:
            return None, f"{CELL_NAMES[cell]} is already taken by {self.board[cell]}"
        return cell, problem

    def invalid_feedback(self, problem: str) -> str:
        return invalid_feedback(
            "move",
            problem,
            f"Empty cells: {', '.join(self._legal_moves())}. "
            "Reply with one empty cell in square brackets, like [b2].",
            consequence=self.invalid_consequence,
            reply=self.last_reply,
        )

    def invalid_info(self) -> dict[str, Any]:
        self._refuse_gym_step()
        return self._info(None, None)

    def play_move(self, move: int) -> tuple[str, float, dict[str, Any]]:
        self._refuse_gym_step()
        if self.result is not None:  # a policy opponent forfeited before the agent's first move
            return self._seat_message(0), self._reward(), self._info(None, None)
        self._place(move, 0)
        opponent_move = None
        if self.result is None:
            cell = self._opponent_turn()
            opponent_move = None if cell is None else CELL_NAMES[cell]
        else:
            self._play_opponent()  # a policy opponent's episode records the end
        return self._seat_message(0), self._reward(), self._info(CELL_NAMES[move], opponent_move)

    def _reward(self) -> float:
        result = self.seat_result(0)
        return 0.0 if result is None else self.result_reward(result)

    def is_over(self) -> bool:
        return self.result is not None

    def draw(self) -> str:
        """The board as text."""
        status = {None: f"{MARKS[self._to_move]} to move", "draw": "draw"}.get(
            self.result, f"{self.result} won"
        )
        return f"{_draw_board(self.board)}\n{status}\n"

    def oracle_move(self) -> str:
        """A perfect move for the seat to move, X through the gym API (see :func:`oracle_action`)."""
        return f"[{CELL_NAMES[best_moves(self.board, MARKS[self._to_move])[0]]}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random empty cell, in brackets."""
        legal = self._legal_moves()
        return f"[{legal[int(rng.integers(len(legal)))]}]"
