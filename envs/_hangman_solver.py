"""Hangman's word list and solver (private): the words a secret is drawn from, and the oracle.

:mod:`trl_env.envs.hangman` re-exports :func:`hangman_words` and is the solver's public face
(``candidate_words``, ``oracle_action``).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache, lru_cache
from importlib import resources
from itertools import chain

__all__ = ["candidates", "hangman_words", "oracle_move", "words_between"]

# English letter frequency order: the oracle's fallback for a secret outside the word list.
_LETTER_ORDER = "etaoinsrhldcumfpgwybvkxjqz"
# The oracle searches exhaustively once this few candidate words are left.
_EXACT_SEARCH_SIZE = 20


@cache
def hangman_words() -> tuple[str, ...]:
    """The secret words: common English words of 4 to 10 letters, 300 of each length.

    Sorted by length, then alphabetically; lowercase ``a-z``. Built by
    ``scripts/build_hangman_words.py`` (see ``envs/data/README.md``).
    """
    text = resources.files("trl_env.envs").joinpath("data", "hangman_words.txt").read_text("ascii")
    return tuple(text.split())


@cache
def _words_of_length(length: int) -> tuple[str, ...]:
    return tuple(w for w in hangman_words() if len(w) == length)


@cache
def words_between(min_length: int, max_length: int) -> tuple[str, ...]:
    return tuple(w for w in hangman_words() if min_length <= len(w) <= max_length)


@cache
def _joined_words(length: int) -> str:
    return "\n".join(_words_of_length(length))


def candidates(pattern: str, guessed: str, wrong_words: tuple[str, ...]) -> list[str]:
    blank = f"[^{guessed}\\n]"
    regex = "".join(blank if c == "_" else c for c in pattern)
    found = re.findall(f"^{regex}$", _joined_words(len(pattern)), re.MULTILINE)
    return [w for w in found if w not in wrong_words]


@lru_cache(maxsize=100_000)
def oracle_move(pattern: str, guessed: str, wrong_words: tuple[str, ...], lives: int) -> str:
    """The oracle's move for what the player has seen (cached: openings repeat across games)."""
    left = candidates(pattern, guessed, wrong_words)
    if not left:  # secret outside the word list: plain letter frequency
        return next(c for c in _LETTER_ORDER if c not in guessed)
    if len(left) == 1:
        return left[0]
    if len(left) <= _EXACT_SEARCH_SIZE:
        return _best_move(tuple(left), lives)[1]
    counts = Counter(chain.from_iterable(map(set, left)))
    return max(sorted(set(counts) - set(guessed)), key=counts.__getitem__)


@lru_cache(maxsize=200_000)
def _best_move(candidates: tuple[str, ...], lives: int) -> tuple[int, str]:
    """``(wins, move)``: how many of ``candidates`` optimal play wins, and the move to do so."""
    if lives <= 0:
        return 0, candidates[0]
    if len(candidates) == 1:
        return 1, candidates[0]
    # Guessing a word wins for that word; the others are played on with one life less.
    best = 1 + _best_move(candidates[1:], lives - 1)[0], candidates[0]
    letters = sorted(set().union(*candidates))
    for letter in letters:
        if best[0] == len(candidates):
            break
        groups: dict[tuple[int, ...], list[str]] = {}
        for word in candidates:
            where = tuple(i for i, c in enumerate(word) if c == letter)
            groups.setdefault(where, []).append(word)
        if len(groups) == 1 and () not in groups:
            continue  # every candidate has it in the same places: no information
        wins = sum(
            _best_move(tuple(group), lives - 1 if where == () else lives)[0]
            for where, group in groups.items()
        )
        if wins > best[0]:
            best = wins, letter
    return best
