"""Wordle's word lists and its scoring rule: what the game and its solver both stand on.

Kept apart from :mod:`trl_env.envs.wordle` so that the solver (the game's oracle) needs the rules,
not the game, and the game can ask the solver without an import loop.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["WORD_LENGTH", "allowed_words", "answer_words", "score_guess"]

WORD_LENGTH = 5


@cache
def _load_words(name: str) -> tuple[str, ...]:
    text = resources.files("trl_env.envs").joinpath("data", name).read_text("ascii")
    return tuple(text.split())


def answer_words() -> tuple[str, ...]:
    """The secret words, common five-letter English words (sorted, lowercase)."""
    return _load_words("wordle_answers.txt")


@cache
def allowed_words() -> frozenset[str]:
    """Every accepted guess: the answers plus a larger dictionary of five-letter words."""
    return frozenset(_load_words("wordle_allowed.txt")) | frozenset(answer_words())


def score_guess(secret: str, guess: str) -> str:
    """Score ``guess`` against ``secret`` by the standard Wordle rule.

    Greens are marked first; then, left to right, a letter is yellow while the secret still has
    copies of it that are neither green nor already claimed by an earlier yellow; otherwise grey.

    Args:
        secret: The secret word.
        guess: The guessed word, the same length as ``secret`` (case-insensitive).

    Returns:
        One character per letter: ``G`` right letter right place, ``Y`` in the word elsewhere,
        ``X`` not in the word (or all its copies already accounted for).

    Example:
        >>> score_guess("crane", "crate")
        'GGGXG'
        >>> score_guess("abbey", "babes")  # one yellow 'b', the second 'b' is green
        'YYGGX'
        >>> score_guess("crane", "eerie")  # the secret's one 'e' is taken by the green
        'XXYXG'
    """
    secret, guess = secret.lower(), guess.lower()
    if len(secret) != len(guess):
        raise ValueError(f"guess {guess!r} and secret {secret!r} differ in length")
    pattern = ["X"] * len(guess)
    unmatched: dict[str, int] = {}
    for i, (s, g) in enumerate(zip(secret, guess, strict=True)):
        if s == g:
            pattern[i] = "G"
        else:
            unmatched[s] = unmatched.get(s, 0) + 1
    for i, g in enumerate(guess):
        if pattern[i] != "G" and unmatched.get(g, 0) > 0:
            pattern[i] = "Y"
            unmatched[g] -= 1
    return "".join(pattern)
