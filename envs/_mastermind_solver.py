"""The Mastermind solver (private): every code consistent with the feedback, and a minimax guess.

:func:`trl_env.envs.mastermind.oracle_action` and ``consistent_codes`` are its public face.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

__all__ = ["candidates", "code_table", "oracle_code"]

_POOL = 256  # the oracle scores at most this many candidate guesses per move
_ORACLE_EVAL = 4096  # ...against at most this many (evenly spaced) candidate secrets


@cache
def code_table(
    code_length: int, num_colors: int, duplicates: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Every possible secret in lexicographic order, and its colour counts (built once)."""
    grids = np.indices((num_colors,) * code_length).reshape(code_length, -1).T + 1
    codes = grids.astype(np.int8)
    if not duplicates:
        distinct = np.array([len(set(row)) == code_length for row in codes.tolist()])
        codes = codes[distinct]
    counts = np.stack([(codes == c).sum(axis=1) for c in range(1, num_colors + 1)], axis=1)
    codes.setflags(write=False)
    counts = counts.astype(np.int8)
    counts.setflags(write=False)
    return codes, counts


def scores(guess: np.ndarray, codes: np.ndarray, counts: np.ndarray, num_colors: int) -> np.ndarray:
    """``black * (code_length + 1) + white`` of ``guess`` against every row of ``codes``."""
    black = (codes == guess).sum(axis=1)
    guess_counts = np.bincount(guess, minlength=num_colors + 1)[1:]
    common = np.minimum(counts, guess_counts).sum(axis=1)
    return black * (codes.shape[1] + 1) + (common - black)


def candidates(
    n: int,
    k: int,
    duplicates: bool,
    guesses: tuple[str, ...],
    feedbacks: tuple[tuple[int, int], ...],
) -> tuple[np.ndarray, np.ndarray]:
    codes, counts = code_table(n, k, duplicates)
    keep = np.ones(len(codes), dtype=bool)
    for guess, (black, white) in zip(guesses, feedbacks, strict=True):
        g = np.frombuffer(guess.encode("ascii"), dtype=np.uint8).astype(np.int64) - ord("0")
        keep &= scores(g, codes, counts, k) == black * (n + 1) + white
    return codes[keep], counts[keep]


@lru_cache(maxsize=65_536)
def oracle_code(
    n: int,
    k: int,
    duplicates: bool,
    guesses: tuple[str, ...],
    feedbacks: tuple[tuple[int, int], ...],
) -> str:
    """The oracle's next code for a history (cached: the early moves repeat across games)."""
    if not guesses:
        opening = [1 + (i // 2) % k for i in range(n)] if duplicates else list(range(1, n + 1))
        return "".join(map(str, opening))
    codes, counts = candidates(n, k, duplicates, guesses, feedbacks)
    if len(codes) == 0:  # impossible feedback (cannot happen in a real game): any legal code
        return "1" * n
    if len(codes) <= 2:
        best = codes[0]
    else:
        step = max(1, len(codes) // _ORACLE_EVAL)
        targets, target_counts = codes[::step], counts[::step]
        pick = slice(None, None, max(1, len(codes) // _POOL))
        pool, pool_counts = codes[pick][:_POOL], counts[pick][:_POOL]
        # Peg by peg and colour by colour: 2-D operations are much faster than 3-D reductions.
        black = np.zeros((len(pool), len(targets)), dtype=np.int16)
        for peg in range(n):
            black += pool[:, peg, None] == targets[None, :, peg]
        common = np.zeros_like(black)
        for colour in range(k):
            common += np.minimum(pool_counts[:, colour, None], target_counts[None, :, colour])
        keys = (n + 1) ** 2
        scores = black * (n + 1) + (common - black) + keys * np.arange(len(pool))[:, None]
        worst = np.bincount(scores.ravel(), minlength=keys * len(pool)).reshape(len(pool), keys)
        best = pool[int(np.argmin(worst.max(axis=1)))]
    return "".join(map(str, best.tolist()))
