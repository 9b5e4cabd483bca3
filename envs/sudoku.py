"""Sudoku as a text environment: fill a 4x4 or 9x9 grid one cell at a time."""

from __future__ import annotations

import re
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from ._common import count_noun, quote, read_reply
from ._sudoku_solver import (
    BOXES,
    MIN_CLUES,
    count_solutions,
    generate_puzzle,
    geometry,
    search,
    solve,
    to_cells,
)
from ._text_game import TextGame

__all__ = [
    "DIFFICULTY_CLUES",
    "TextSudokuEnv",
    "count_solutions",
    "generate_puzzle",
    "oracle_action",
    "parse_move",
    "solve",
]

DIFFICULTY_CLUES: dict[int, dict[str, int]] = {
    4: {"easy": 10, "medium": 8, "hard": 6},
    9: {"easy": 40, "medium": 32, "hard": 26},
}
"""Clues (given digits) per grid size and difficulty; the rest of the cells are blank."""

# "1 3 4", "1,3,4", "(1, 3, 4)", "1 3 = 4"; "r1c3=4"; and "134" (single digits only).
_MOVE = re.compile(
    r"\(?\s*(\d{1,4})\s*[,\s]\s*(\d{1,4})\s*[,\s=]\s*(\d{1,4})\s*\)?"
    r"|r\s*(\d{1,4})\s*c\s*(\d{1,4})\s*[=:\s]\s*(\d{1,4})"
    r"|(\d)(\d)(\d)",
    re.IGNORECASE | re.ASCII,
)


def oracle_action(env: gym.Env[str, str]) -> str:
    """The next correct move in ``env`` as a reply like ``[1 3 4]``, found by the solver.

    Solves the current board from scratch (it does not read the env's stored solution) and
    fills the first blank cell, row by row.
    """
    return TextSudokuEnv.unwrap(env, "oracle_action").oracle_action()


def parse_move(action: str) -> tuple[tuple[int, int, int] | None, str | None]:
    """Extract ``(row, column, digit)`` (1-based, not yet range-checked) from free model text.

    The last ``[bracketed]`` move wins; without brackets the whole reply must be one move.
    Accepted: ``[1 3 4]``, ``[1,3,4]``, ``[(1, 3, 4)]``, ``[1 3 = 4]``, ``[r1c3=4]``, ``[134]``.

    Example:
        >>> parse_move("Row 1, column 3 must be 4: [1 3 4]")
        ((1, 3, 4), None)
        >>> parse_move("[r2c1=3]")
        ((2, 1, 3), None)
        >>> parse_move("[1 3]")
        (None, "'1 3' is not a move: give row, column and digit, like [1 3 4]")
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    match = _MOVE.fullmatch(candidate)
    if match is None:
        if not bracketed:
            return None, "no move found: put row, column and digit in square brackets, like [1 3 4]"
        return None, f"{quote(candidate)} is not a move: give row, column and digit, like [1 3 4]"
    row, col, digit = (int(g) for g in match.groups() if g is not None)
    return (row, col, digit), None


def _draw_board(grid: list[int], size: int) -> str:
    box = BOXES[size]
    rule = "  " + "+" + "+".join(["-" * (2 * box + 1)] * box) + "+"
    header = "    " + "   ".join(
        " ".join(str(c + 1) for c in range(s * box, (s + 1) * box)) for s in range(box)
    )
    lines = [header, rule]
    for r in range(size):
        cells = [str(v) if v else "." for v in grid[r * size : (r + 1) * size]]
        groups = " | ".join(" ".join(cells[s * box : (s + 1) * box]) for s in range(box))
        lines.append(f"{r + 1} | {groups} |")
        if (r + 1) % box == 0:
            lines.append(rule)
    return "\n".join(lines)


class TextSudokuEnv(TextGame[tuple[int, int, int]]):
    """Sudoku: fill the grid so every row, column and box holds each digit once.

    ## Description
    A ``size`` x ``size`` grid (4x4 with 2x2 boxes, or 9x9 with 3x3 boxes) with some digits
    given. Puzzles are generated in ``reset`` with ``self.np_random``: a random solved grid
    (a pattern grid with shuffled bands, rows, stacks, columns and digits, maybe transposed),
    then cells are blanked in random order as long as the solution stays **unique** (checked by
    an exact solver, see :func:`count_solutions`). Generation cost per ``reset`` (measured,
    CPython 3.11): 4x4 about 0.1 ms; 9x9 about 1.5 ms (easy), 3.5 ms (medium) and 13 ms (hard) on
    average, at most ~50 ms. Steps cost tens of microseconds.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). One move per step: row, column and digit, 1-based, in
    square brackets, like ``[1 3 4]`` (row 1, column 3, digit 4); ``[1,3,4]``, ``[r1c3=4]`` and
    ``[134]`` are accepted too. The last ``[bracketed]`` move wins; a bare move is accepted if it
    is the whole reply. An unreadable reply, a cell or digit off the board, a given clue or an
    already-filled cell is an *invalid action*: feedback saying what was wrong,
    ``info["invalid_action"]`` and ``-invalid_action_penalty``. A well-formed move whose digit is
    not the (unique) solution's digit is a *mistake*: it is not placed, the feedback says it is
    wrong and, when the digit clashes with one already on the board, names the clash (row,
    column or box); otherwise it says only that it is wrong. It gives ``-mistake_penalty`` and
    sets ``info["mistake"]``. Both use up a turn. Correct digits are placed and are final.
    A reply that states exactly one legal move among other words ("I place 134") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rules, the reply format and the board. After a
    correct move: a short confirmation and the updated board (the board is the state: 9 short
    lines for 4x4, 13 for 9x9). After an invalid move or a mistake: only the feedback (the board
    is unchanged).

    ## Rewards
    1.0 on the move that completes the grid, 0.0 otherwise; ``-mistake_penalty`` for a wrong
    digit, ``-invalid_action_penalty`` for an invalid action. With ``partial_credit > 0`` each
    other correct digit also earns ``partial_credit / blanks`` (the shaped part of a return is
    below ``partial_credit``).

    ## Episode End
    Terminated when the grid is complete. Truncated after ``blanks + extra_turns`` turns (valid or
    not). Registered with ``max_episode_steps`` = the most blanks any puzzle of that size can have
    plus the default ``extra_turns`` (22 for 4x4, 74 for 9x9), so the env's own limit is the one
    that applies; pass ``max_episode_steps`` when raising ``extra_turns``.

    ## Arguments
    ```python
    gym.make("TextSudoku-v0", size=4, difficulty="medium", num_clues=None, extra_turns=10,
             invalid_action_penalty=0.1, mistake_penalty=0.1, partial_credit=0.0,
             render_mode="ansi")
    ```
    ``difficulty`` sets the number of clues (:data:`DIFFICULTY_CLUES`: 4x4 10/8/6, 9x9 40/32/26
    for easy/medium/hard); ``num_clues`` overrides it (at least 4 for 4x4, 17 for 9x9; when no
    more digits can be removed uniquely, the puzzle keeps a few more, see ``info["clues"]``).
    ``TextSudoku9x9-v0`` is ``size=9``. ``reset(options={"puzzle": "12..3..."})`` plays a given
    puzzle (16 or 81 characters, ``.`` or ``0`` for blanks) of the env's size; it must have
    exactly one solution.

    ## Info
    ``board`` (the grid as a string, ``.`` for blanks), ``move`` (``(row, col, digit)`` or
    ``None``), ``invalid_action`` (with ``error``), ``mistake``, ``mistakes``, ``blanks_left``,
    ``clues``, ``solved``, and ``solution`` once the episode ends.

    ## Version History
    * v0: Initial version. Replies that state one legal move in plain words are accepted, and
      invalid-reply feedback quotes the reply (issue 9); seeds and valid moves are unchanged.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextSudoku-v0")
        >>> observation, info = env.reset(seed=0, options={"puzzle": "..34.31.2..3...."})
        >>> env.step("[1 1 1]")[1:3]
        (0.0, False)
        >>> observation, reward, *_ = env.step("[1 2 3]")
        >>> observation.splitlines()[0], reward
        ('Wrong: 3 does not go in row 1, column 2: row 1 already has a 3. The board is unchanged.', -0.1)
    """

    game_name = "TextSudoku"
    description = "{size}x{size} Sudoku with a unique solution, one [row col digit] move per turn."
    options_example = '{"puzzle": "..34.31.2..3...."}'
    invalid_advice = "Reply with one move like [1 3 4] (row, column, digit)."
    invalid_consequence = None

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        size: int = 4,
        difficulty: Literal["easy", "medium", "hard"] = "medium",
        num_clues: int | None = None,
        extra_turns: int = 10,
        invalid_action_penalty: float = 0.1,
        mistake_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        if size not in BOXES:
            raise ValueError(f"size must be 4 or 9, got {size!r}")
        if difficulty not in DIFFICULTY_CLUES[size]:
            raise ValueError(
                f"difficulty must be one of {tuple(DIFFICULTY_CLUES[size])}, got {difficulty!r}"
            )
        if num_clues is not None and not MIN_CLUES[size] <= num_clues <= size * size:
            raise ValueError(
                f"num_clues must be in [{MIN_CLUES[size]}, {size * size}] for a {size}x{size} "
                f"grid, got {num_clues}"
            )
        if extra_turns < 0:
            raise ValueError(f"extra_turns must be >= 0, got {extra_turns}")
        if min(mistake_penalty, partial_credit) < 0:
            raise ValueError(
                "invalid_action_penalty, mistake_penalty and partial_credit must be >= 0"
            )
        self.size = size
        self.difficulty = difficulty
        self.num_clues = DIFFICULTY_CLUES[size][difficulty] if num_clues is None else num_clues
        self.extra_turns = extra_turns
        self.mistake_penalty = float(mistake_penalty)
        self.partial_credit = float(partial_credit)
        # Static geometry, built once per process: reset never rebuilds it.
        self._geometry = geometry(size)
        self.grid: list[int] = []
        self.clues: list[bool] = []
        self._solution: list[int] = []
        self.mistakes = 0
        self.solved = False

    @property
    def blanks(self) -> int:
        """Blank cells at the start of the episode."""
        return self.clues.count(False)

    @property
    def max_turns(self) -> int:
        """Turns allowed this episode: the blanks plus ``extra_turns``."""
        return self.blanks + self.extra_turns

    @property
    def turn_limit(self) -> int:
        return self.max_turns

    def _given_puzzle(self, given: Any) -> tuple[list[int], list[int]]:
        try:
            puzzle = to_cells(given)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"options['puzzle'] is not a puzzle: {exc}") from None
        if len(puzzle) != self.size**2:
            raise ValueError(
                f"options['puzzle'] must be a {self.size}x{self.size} puzzle "
                f"({self.size**2} cells), got {len(puzzle)} cells"
            )
        count, found = search(puzzle, self.size, 2)
        if count != 1 or found is None:
            raise ValueError(
                f"options['puzzle'] must have exactly one solution, it has {count if count < 2 else '2 or more'}"
            )
        return puzzle, found

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generate a new puzzle (or take ``options["puzzle"]``) and return the rules and board."""
        given = options.get("puzzle")
        if given is None:
            puzzle, solution = generate_puzzle(self.size, self.num_clues, self.np_random)
        else:
            puzzle, solution = self._given_puzzle(given)
        self.grid, self._solution = list(puzzle), list(solution)
        self.clues = [v != 0 for v in puzzle]
        self.mistakes, self.solved = 0, False
        n, box = self.size, BOXES[self.size]
        message = (
            f"Let's play Sudoku ({n}x{n}). Fill every blank (.) with a digit 1-{n} so that each "
            f"row, each column and each {box}x{box} box contains every digit 1-{n} exactly once. "
            "The puzzle has exactly one solution.\n"
            "Make one move per turn: row, column and digit (counted from 1, row 1 at the top, "
            "column 1 at the left) in square brackets, for example [1 3 4] puts a 4 in row 1, "
            "column 3. Wrong digits are rejected and cost a penalty.\n"
            f"{self.blanks} blanks, {self.max_turns} turns.\n\n{_draw_board(self.grid, n)}"
        )
        return message, self._info(None)

    def _info(self, move: tuple[int, int, int] | None) -> dict[str, Any]:
        return {
            "board": "".join(str(v) if v else "." for v in self.grid),
            "move": move,
            "invalid_action": False,
            "mistake": False,
            "mistakes": self.mistakes,
            "blanks_left": self.grid.count(0),
            "clues": self.clues.count(True),
            "solved": self.solved,
        }

    def _clash(self, cell: int, digit: int) -> str | None:
        rows_of, cols_of, boxes_of = self._geometry
        r, c, b = rows_of[cell], cols_of[cell], boxes_of[cell]
        for name, index, of in (("row", r, rows_of), ("column", c, cols_of), ("box", b, boxes_of)):
            if any(self.grid[j] == digit and of[j] == index for j in range(self.size**2)):
                where = f"{name} {index + 1}" if name != "box" else "its box"
                return f"{where} already has a {digit}"
        return None

    def parse_move(self, action: Any) -> tuple[tuple[int, int, int] | None, str | None]:
        move, problem = parse_move(action)
        if move is None:
            return None, problem
        n = self.size
        row, col, digit = move
        if not (1 <= row <= n and 1 <= col <= n):
            return None, f"row {row}, column {col} is off the board (rows and columns are 1-{n})"
        if not 1 <= digit <= n:
            return None, f"{digit} is not a digit of this puzzle (use 1-{n})"
        cell = (row - 1) * n + (col - 1)
        if self.clues[cell]:
            return None, f"row {row}, column {col} is a given clue ({self.grid[cell]})"
        if self.grid[cell]:
            return None, f"row {row}, column {col} is already filled ({self.grid[cell]})"
        return move, None

    def invalid_info(self) -> dict[str, Any]:
        return self._info(parse_move(self.last_reply)[0])

    def play_move(self, move: tuple[int, int, int]) -> tuple[str, float, dict[str, Any]]:
        row, col, digit = move
        cell = (row - 1) * self.size + (col - 1)
        info = self._info(move)
        if digit != self._solution[cell]:
            self.mistakes += 1
            clash = self._clash(cell, digit)
            reason = f": {clash}" if clash else ""
            message = f"Wrong: {digit} does not go in row {row}, column {col}{reason}. The board is unchanged."
            info.update(mistake=True, mistakes=self.mistakes)
            return message, -self.mistake_penalty, info
        self.grid[cell] = digit
        left = self.grid.count(0)
        self.solved = left == 0
        info.update(board=self._info(None)["board"], blanks_left=left, solved=self.solved)
        message = f"Correct: {digit} at row {row}, column {col}. "
        board = _draw_board(self.grid, self.size)
        if self.solved:
            return message + f"Solved in {self.turn} turns!\n{board}", 1.0, info
        reward = self.partial_credit / self.blanks if self.partial_credit else 0.0
        return message + f"{count_noun(left, 'blank')} left.\n{board}", reward, info

    def is_over(self) -> bool:
        return self.solved

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        if truncated:
            message += "\nNo turns left."
        elif not terminated:
            message += f"\n{count_noun(self.max_turns - self.turn, 'turn')} left."
        if terminated or truncated:
            info["solution"] = "".join(map(str, self._solution))
        return message

    def draw(self) -> str:
        """The board as text."""
        status = "solved" if self.solved else f"{self.grid.count(0)} blanks left"
        return f"{_draw_board(self.grid, self.size)}\n{status}\n"

    def oracle_move(self) -> str:
        """The next correct move, from solving the current board (see :func:`oracle_action`)."""
        solution = search(self.grid, self.size, 1)[1]
        assert solution is not None, "the board has no solution"
        cell = self.grid.index(0)
        return f"[{cell // self.size + 1} {cell % self.size + 1} {solution[cell]}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random blank cell and a uniformly random digit, in brackets."""
        blanks = [i for i, value in enumerate(self.grid) if value == 0] or [0]
        cell = blanks[int(rng.integers(len(blanks)))]
        digit = int(rng.integers(1, self.size + 1))
        return f"[{cell // self.size + 1} {cell % self.size + 1} {digit}]"
