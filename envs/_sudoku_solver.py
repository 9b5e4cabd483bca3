"""Sudoku grids (private): geometry, an exact solver, and puzzle generation with a unique solution.

:mod:`trl_env.envs.sudoku` re-exports the public names.
"""

from __future__ import annotations

from functools import cache

import numpy as np

__all__ = [
    "BOXES",
    "MIN_CLUES",
    "count_solutions",
    "generate_puzzle",
    "geometry",
    "search",
    "solve",
    "to_cells",
]

MIN_CLUES = {4: 4, 9: 17}  # fewest clues any uniquely solvable puzzle has
BOXES = {4: 2, 9: 3}
_GENERATION_TRIES = 3  # fresh solved grids tried when removal stalls above the clue target


@cache
def geometry(size: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Row, column and box index of every cell of a ``size`` x ``size`` grid (built once)."""
    box = BOXES[size]
    rows = tuple(i // size for i in range(size * size))
    cols = tuple(i % size for i in range(size * size))
    boxes = tuple((r // box) * box + c // box for r, c in zip(rows, cols, strict=True))
    return rows, cols, boxes


def _size_of(cells: int) -> int:
    for size in BOXES:
        if size * size == cells:
            return size
    raise ValueError(f"a puzzle has 16 (4x4) or 81 (9x9) cells, got {cells}")


def search(grid: list[int], size: int, limit: int) -> tuple[int, list[int] | None]:
    """Count solutions of ``grid`` (0 = blank) up to ``limit``; also return the first one.

    Depth-first search on bitmasks, always branching on the blank with the fewest candidates
    (so forced cells cost no branching). Digits already in conflict give 0 solutions.
    """
    rows_of, cols_of, boxes_of = geometry(size)
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


def to_cells(puzzle: str | list[int]) -> list[int]:
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
    cells = to_cells(puzzle)
    return search(cells, _size_of(len(cells)), limit)[0]


def solve(puzzle: str | list[int]) -> str | None:
    """A solution of ``puzzle`` as a string of digits (row by row), or None if it has none.

    Example:
        >>> solve("..34" ".31." "2..3" "....")
        '1234431221433421'
    """
    cells = to_cells(puzzle)
    solution = search(cells, _size_of(len(cells)), 1)[1]
    return None if solution is None else "".join(map(str, solution))


def _solved_grid(size: int, rng: np.random.Generator) -> list[int]:
    """A random solved grid: a pattern grid with bands, rows, stacks, columns, digits shuffled."""
    box = BOXES[size]

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
    rows_of, cols_of, boxes_of = geometry(size)
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
                if search(puzzle, size, 1)[0]:
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
