"""Sudoku as a text environment: fill a 4x4 or 9x9 grid one cell at a time."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from trl_env.envs._common import (
    check_render_mode,
    count_noun,
    invalid_feedback,
    quote,
    read_reply,
    reset_needed,
)

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

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

MIN_CLUES = {4: 4, 9: 17}  # fewest clues any uniquely solvable puzzle has
_BOXES = {4: 2, 9: 3}
_GENERATION_TRIES = 3  # fresh solved grids tried when removal stalls above the clue target
# "1 3 4", "1,3,4", "(1, 3, 4)", "1 3 = 4"; "r1c3=4"; and "134" (single digits only).
_MOVE = re.compile(
    r"\(?\s*(\d{1,4})\s*[,\s]\s*(\d{1,4})\s*[,\s=]\s*(\d{1,4})\s*\)?"
    r"|r\s*(\d{1,4})\s*c\s*(\d{1,4})\s*[=:\s]\s*(\d{1,4})"
    r"|(\d)(\d)(\d)",
    re.IGNORECASE | re.ASCII,
)


@cache
def _geometry(size: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Row, column and box index of every cell of a ``size`` x ``size`` grid (built once)."""
    box = _BOXES[size]
    rows = tuple(i // size for i in range(size * size))
    cols = tuple(i % size for i in range(size * size))
    boxes = tuple((r // box) * box + c // box for r, c in zip(rows, cols, strict=True))
    return rows, cols, boxes


def _size_of(cells: int) -> int:
    for size in _BOXES:
        if size * size == cells:
            return size
    raise ValueError(f"a puzzle has 16 (4x4) or 81 (9x9) cells, got {cells}")


def _search(grid: list[int], size: int, limit: int) -> tuple[int, list[int] | None]:
    """Count solutions of ``grid`` (0 = blank) up to ``limit``; also return the first one.

    Depth-first search on bitmasks, always branching on the blank with the fewest candidates
    (so forced cells cost no branching). Digits already in conflict give 0 solutions.
    """
    rows_of, cols_of, boxes_of = _geometry(size)
    rows, cols, boxes = [0] * size, [0] * size, [0] * size
    grid = list(grid)
    blanks: list[int] = []
    for i, value in enumerate(grid):
        if value:
            bit = 1 << (value - 1)
            r, c, b = rows_of[i], cols_of[i], boxes_of[i]
            if (rows[r] | cols[c] | boxes[b]) & bit:
                return 0, None
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
        else:
            blanks.append(i)
    full = (1 << size) - 1
    total = len(blanks)
    found: list[list[int]] = []
    count = 0

    def dfs(k: int) -> bool:  # True: stop, the limit is reached
        nonlocal count
        if k == total:
            count += 1
            if not found:
                found.append(list(grid))
            return count >= limit
        best_j, best_free, best_n = k, 0, size + 1
        for j in range(k, total):
            i = blanks[j]
            free = full & ~(rows[rows_of[i]] | cols[cols_of[i]] | boxes[boxes_of[i]])
            n = free.bit_count()
            if n < best_n:
                best_j, best_free, best_n = j, free, n
                if n <= 1:
                    break
        if best_n == 0:
            return False
        blanks[k], blanks[best_j] = blanks[best_j], blanks[k]
        i = blanks[k]
        r, c, b = rows_of[i], cols_of[i], boxes_of[i]
        stop = False
        free = best_free
        while free and not stop:
            bit = free & -free
            free ^= bit
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            grid[i] = bit.bit_length()
            stop = dfs(k + 1)
            rows[r] ^= bit
            cols[c] ^= bit
            boxes[b] ^= bit
        grid[i] = 0
        blanks[k], blanks[best_j] = blanks[best_j], blanks[k]
        return stop

    dfs(0)
    return count, (found[0] if found else None)


def _to_cells(puzzle: str | list[int]) -> list[int]:
    if isinstance(puzzle, str):
        text = "".join(puzzle.split())
        if not all(ch in ".0123456789" for ch in text):
            raise ValueError("a puzzle string holds digits 1-9 and '.' or '0' for blanks")
        cells = [0 if ch in ".0" else int(ch) for ch in text]
    else:
        cells = [int(v) for v in puzzle]
    size = _size_of(len(cells))
    if any(not 0 <= v <= size for v in cells):
        raise ValueError(f"digits of a {size}x{size} puzzle are 1-{size}")
    return cells


def count_solutions(puzzle: str | list[int], limit: int = 2) -> int:
    """Number of solutions of ``puzzle``, counting stops at ``limit`` (2 decides uniqueness).

    Args:
        puzzle: 16 or 81 cells row by row, as a string (``.`` or ``0`` blank, whitespace ignored)
            or a list of ints (0 blank).
        limit: Stop counting here.

    Example:
        >>> count_solutions("1.3." "3.1." ".1.3" ".3.1")
        2
        >>> count_solutions("..34" ".31." "2..3" "....")
        1
    """
    cells = _to_cells(puzzle)
    return _search(cells, _size_of(len(cells)), limit)[0]


def solve(puzzle: str | list[int]) -> str | None:
    """A solution of ``puzzle`` as a string of digits (row by row), or None if it has none.

    Example:
        >>> solve("..34" ".31." "2..3" "....")
        '1234431221433421'
    """
    cells = _to_cells(puzzle)
    solution = _search(cells, _size_of(len(cells)), 1)[1]
    return None if solution is None else "".join(map(str, solution))


def _solved_grid(size: int, rng: np.random.Generator) -> list[int]:
    """A random solved grid: a pattern grid with bands, rows, stacks, columns, digits shuffled."""
    box = _BOXES[size]

    def order() -> list[int]:
        return [int(g) * box + int(x) for g in rng.permutation(box) for x in rng.permutation(box)]

    rows, cols, digits = order(), order(), rng.permutation(size) + 1
    grid = [
        int(digits[(box * (rows[r] % box) + rows[r] // box + cols[c]) % size])
        for r in range(size)
        for c in range(size)
    ]
    if rng.integers(2):  # transpose
        grid = [grid[c * size + r] for r in range(size) for c in range(size)]
    return grid


def _remove_clues(
    solution: list[int], size: int, clues: int, rng: np.random.Generator
) -> list[int]:
    """Blank cells of ``solution`` in random order while the solution stays unique."""
    rows_of, cols_of, boxes_of = _geometry(size)
    puzzle = list(solution)
    blanks, target = 0, size * size - clues
    for cell in rng.permutation(size * size):
        if blanks >= target:
            break
        cell = int(cell)
        value = puzzle[cell]
        r, c, b = rows_of[cell], cols_of[cell], boxes_of[cell]
        seen = {
            puzzle[j]
            for j in range(size * size)
            if puzzle[j] and (rows_of[j] == r or cols_of[j] == c or boxes_of[j] == b)
        }
        # The puzzle was unique; blanking `cell` keeps it unique iff no other digit that fits
        # the cell leads to a solution.
        unique = True
        for digit in range(1, size + 1):
            if digit != value and digit not in seen:
                puzzle[cell] = digit
                if _search(puzzle, size, 1)[0]:
                    unique = False
                    break
        puzzle[cell] = 0 if unique else value
        blanks += unique
    return puzzle


def generate_puzzle(size: int, clues: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """A random puzzle with a unique solution and ``clues`` given digits (or as few as possible).

    A random solved grid is drawn, then cells are blanked in random order whenever the solution
    stays unique. If that stalls above ``clues`` (some grids allow no more), up to 3 fresh grids
    are tried and the puzzle with the fewest clues is kept.

    Returns:
        ``(puzzle, solution)``: lists of ``size * size`` ints, row by row, 0 = blank.
    """
    best: tuple[list[int], list[int]] | None = None
    for _ in range(_GENERATION_TRIES):
        solution = _solved_grid(size, rng)
        puzzle = _remove_clues(solution, size, clues, rng)
        if best is None or puzzle.count(0) > best[0].count(0):
            best = (puzzle, solution)
        if size * size - puzzle.count(0) <= clues:
            break
    assert best is not None
    return best


def oracle_action(env: gym.Env[str, str]) -> str:
    """The next correct move in ``env`` as a reply like ``[1 3 4]``, found by the solver.

    Solves the current board from scratch (it does not read the env's stored solution) and
    fills the first blank cell, row by row.
    """
    game: TextSudokuEnv = env.unwrapped  # type: ignore[assignment]
    solution = _search(game.grid, game.size, 1)[1]
    assert solution is not None, "the board has no solution"
    cell = game.grid.index(0)
    return f"[{cell // game.size + 1} {cell % game.size + 1} {solution[cell]}]"


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
    box = _BOXES[size]
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


class TextSudokuEnv(gym.Env[str, str]):
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
    * v0: Initial version.

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

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

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
        check_render_mode(render_mode, self.metadata["render_modes"])
        if size not in _BOXES:
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
        if min(invalid_action_penalty, mistake_penalty, partial_credit) < 0:
            raise ValueError(
                "invalid_action_penalty, mistake_penalty and partial_credit must be >= 0"
            )
        self.render_mode = render_mode
        self.size = size
        self.difficulty = difficulty
        self.num_clues = DIFFICULTY_CLUES[size][difficulty] if num_clues is None else num_clues
        self.extra_turns = extra_turns
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.mistake_penalty = float(mistake_penalty)
        self.partial_credit = float(partial_credit)
        self.observation_space = TextSpace(4096)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        # Static geometry, built once per process: reset never rebuilds it.
        self._geometry = _geometry(size)
        self.grid: list[int] = []
        self.clues: list[bool] = []
        self._solution: list[int] = []
        self._reset_state()

    def _reset_state(self) -> None:
        self.turn = 0
        self.mistakes = 0
        self.solved = False
        self._done = False

    @property
    def blanks(self) -> int:
        """Blank cells at the start of the episode."""
        return self.clues.count(False)

    @property
    def max_turns(self) -> int:
        """Turns allowed this episode: the blanks plus ``extra_turns``."""
        return self.blanks + self.extra_turns

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Generate a new puzzle (or take ``options["puzzle"]``) and return the rules and board."""
        super().reset(seed=seed)
        given = (options or {}).get("puzzle")
        if given is None:
            puzzle, solution = generate_puzzle(self.size, self.num_clues, self.np_random)
        else:
            try:
                puzzle = _to_cells(given)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"options['puzzle'] is not a puzzle: {exc}") from None
            if len(puzzle) != self.size**2:
                raise ValueError(
                    f"options['puzzle'] must be a {self.size}x{self.size} puzzle "
                    f"({self.size**2} cells), got {len(puzzle)} cells"
                )
            count, found = _search(puzzle, self.size, 2)
            if count != 1 or found is None:
                raise ValueError(
                    f"options['puzzle'] must have exactly one solution, it has {count if count < 2 else '2 or more'}"
                )
            solution = found
        self.grid, self._solution = list(puzzle), list(solution)
        self.clues = [v != 0 for v in puzzle]
        self._reset_state()
        n, box = self.size, _BOXES[self.size]
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

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one move. Never raises on any string ``action``."""
        if not self.grid or self._done:
            raise reset_needed("TextSudoku", started=bool(self.grid))
        self.turn += 1
        n = self.size
        move, problem = parse_move(action)
        cell = -1
        if move is not None:
            row, col, digit = move
            if not (1 <= row <= n and 1 <= col <= n):
                problem = f"row {row}, column {col} is off the board (rows and columns are 1-{n})"
            elif not 1 <= digit <= n:
                problem = f"{digit} is not a digit of this puzzle (use 1-{n})"
            else:
                cell = (row - 1) * n + (col - 1)
                if self.clues[cell]:
                    problem = f"row {row}, column {col} is a given clue ({self.grid[cell]})"
                elif self.grid[cell]:
                    problem = f"row {row}, column {col} is already filled ({self.grid[cell]})"
        info = self._info(move)
        reward = 0.0
        if problem is not None:
            info.update(invalid_action=True, error=problem)
            reward = -self.invalid_action_penalty
            message = invalid_feedback(
                "move",
                problem,
                "Reply with one move like [1 3 4] (row, column, digit).",
                consequence=None,
            )
        else:
            assert move is not None
            row, col, digit = move
            if digit != self._solution[cell]:
                self.mistakes += 1
                clash = self._clash(cell, digit)
                reason = f": {clash}" if clash else ""
                message = f"Wrong: {digit} does not go in row {row}, column {col}{reason}. The board is unchanged."
                reward = -self.mistake_penalty
                info.update(mistake=True, mistakes=self.mistakes)
            else:
                self.grid[cell] = digit
                left = self.grid.count(0)
                self.solved = left == 0
                info.update(board=self._info(None)["board"], blanks_left=left, solved=self.solved)
                message = f"Correct: {digit} at row {row}, column {col}. "
                if self.solved:
                    reward = 1.0
                    message += f"Solved in {self.turn} turns!\n{_draw_board(self.grid, n)}"
                else:
                    reward = self.partial_credit / self.blanks if self.partial_credit else 0.0
                    message += f"{count_noun(left, 'blank')} left.\n{_draw_board(self.grid, n)}"
        terminated = self.solved
        truncated = not terminated and self.turn >= self.max_turns
        if truncated:
            message += "\nNo turns left."
        elif not terminated:
            message += f"\n{count_noun(self.max_turns - self.turn, 'turn')} left."
        if terminated or truncated:
            self._done = True
            info["solution"] = "".join(map(str, self._solution))
        return message, reward, terminated, truncated, info

    def render(self) -> str | None:  # type: ignore[override]
        """The board as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        status = "solved" if self.solved else f"{self.grid.count(0)} blanks left"
        return f"{_draw_board(self.grid, self.size)}\n{status}\n"
