"""Wordle as a text environment: guess a secret five-letter word from coloured feedback."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import has_whitespace, quote, read_reply
from ._guessing import GuessingGame
from ._wordle_words import WORD_LENGTH, allowed_words, answer_words, score_guess

__all__ = ["TextWordleEnv", "allowed_words", "answer_words", "parse_guess", "score_guess"]

_PATTERN_WORDS = {"G": "correct", "Y": "elsewhere", "X": "absent"}


def parse_guess(action: str) -> tuple[str | None, str | None]:
    """Extract a guess from free model text.

    The last ``[bracketed]`` word wins; without brackets, the whole reply must be one bare word.

    Args:
        action: The model's action text.

    Returns:
        ``(guess, None)`` with the lowercase candidate guess (not yet checked against the
        dictionary), or ``(None, problem)`` describing why no guess could be read.

    Example:
        >>> parse_guess("I think [slate]... no, [CRANE]")
        ('crane', None)
        >>> parse_guess("crane.")
        ('crane', None)
        >>> parse_guess("")
        (None, 'your reply was empty')
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    if not bracketed and has_whitespace(candidate):
        return None, "no guess found: put your five-letter guess in square brackets, like [crane]"
    if not (candidate.isascii() and candidate.isalpha()):
        return None, f"{quote(candidate)} is not a word: use only the letters a-z"
    if len(candidate) != WORD_LENGTH:
        return None, f"{quote(candidate)} has {len(candidate)} letters, not {WORD_LENGTH}"
    return candidate.lower(), None


def _describe(guess: str, pattern: str) -> str:
    return ", ".join(
        f"{c.upper()} {_PATTERN_WORDS[p]}" for c, p in zip(guess, pattern, strict=True)
    )


class TextWordleEnv(GuessingGame[str, str]):
    """Wordle: find the secret five-letter English word in six guesses.

    ## Description
    The secret is drawn with ``self.np_random`` from ~2,300 common English words. Every guess is
    answered with one mark per letter: ``G`` (right letter, right place), ``Y`` (in the word,
    elsewhere), ``X`` (not in the word, or no copies left). Duplicate letters follow the standard
    rule (see :func:`score_guess`).

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The guess is the last ``[bracketed]`` word, or the
    whole reply if it is a single bare word; case-insensitive. Guesses must be in the dictionary
    (>10,000 five-letter words). Anything else is an *invalid action*: it never raises, uses up the
    turn, returns feedback that says exactly what was wrong, sets ``info["invalid_action"]`` and
    gives ``-invalid_action_penalty``.
    A reply that states exactly one legal move among other words ("I guess crane") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rules and the reply format; every later one is only the
    new message (the delta): the guess, its pattern, a per-letter reading of it and the guesses
    left. The secret is revealed when the episode ends.

    ## Rewards
    1.0 for solving the puzzle, 0.0 otherwise; ``-invalid_action_penalty`` for an invalid action.
    With ``partial_credit > 0``, each valid guess also earns ``partial_credit`` times the increase
    of its best score so far, where a guess scores ``(greens + 0.5 * yellows) / 5`` (so the shaped
    part of a return is at most ``partial_credit``).

    ## Episode End
    Terminated when the word is found. Truncated after ``max_guesses`` turns (valid or not);
    registered with ``max_episode_steps=6`` so gymnasium's ``TimeLimit`` agrees.

    ## Arguments
    ```python
    gym.make("TextWordle-v0", max_guesses=6, invalid_action_penalty=0.1, partial_credit=0.0,
             render_mode="ansi")
    ```
    Pass ``max_episode_steps`` equal to ``max_guesses`` when changing it.
    ``reset(options={"secret": "crane"})`` fixes the secret (any allowed word).

    ## Info
    ``guess`` and ``pattern`` of the step (str, or ``None`` when invalid: vector envs batch them
    as object arrays), ``guesses`` and ``patterns``
    so far, ``invalid_action`` (with ``error``), ``won``, and ``secret`` once the episode ends.

    ## Version History
    * v0: Initial version. Replies that state one legal move in plain words are accepted, and
      invalid-reply feedback quotes the reply (issue 9); seeds and valid moves are unchanged.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextWordle-v0")
        >>> observation, info = env.reset(seed=0, options={"secret": "crane"})
        >>> observation, reward, terminated, truncated, info = env.step("[slate]")
        >>> info["pattern"]
        'XXGXG'
        >>> env.step("I am sure it is [crane]")[1:3]
        (1.0, True)
    """

    game_name = "TextWordle"
    description = (
        "Guess a secret five-letter English word in {max_guesses} tries from G/Y/X feedback."
    )
    options_example = '{"secret": "crane"}'
    invalid_advice = "Reply like [crane]."
    feedback_key = "patterns"
    secret_name = "word"
    # Five-letter dictionary words a sentence uses around a guess: never read as the guess.
    prose_words = frozenset(
        [
            "about",
            "again",
            "could",
            "every",
            "final",
            "first",
            "going",
            "guess",
            "hello",
            "maybe",
            "might",
            "other",
            "reply",
            "right",
            "shall",
            "since",
            "start",
            "still",
            "their",
            "there",
            "these",
            "think",
            "those",
            "today",
            "where",
            "which",
            "while",
            "would",
            "words",
        ]
    )

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        max_guesses: int = 6,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, max_guesses, invalid_action_penalty, partial_credit)
        # Loaded once per process and shared read-only: reset never rebuilds them.
        self._answers = answer_words()
        self._allowed = allowed_words()

    @property
    def patterns(self) -> list[str]:
        """The pattern of each valid guess so far, like ``"XXGXG"``."""
        return self.feedbacks

    def draw_secret(self, secret: Any) -> str:
        if secret is None:
            return self._answers[int(self.np_random.integers(len(self._answers)))]
        if not isinstance(secret, str) or secret.lower() not in self._allowed:
            raise ValueError(
                f"options['secret'] must be a five-letter word in the dictionary, got {secret!r}"
            )
        return secret.lower()

    def rules(self) -> str:
        return (
            f"Let's play Wordle. Guess the secret five-letter English word in {self.max_guesses} tries.\n"
            "After each guess you get one mark per letter:\n"
            "  G = right letter, right place\n"
            "  Y = in the word, but in another place\n"
            "  X = not in the word (or no more copies of it)\n"
            "Reply with one guess in square brackets, for example [crane]. "
            "Guesses must be real English words."
        )

    def parse_move(self, action: Any) -> tuple[str | None, str | None]:
        guess, problem = parse_guess(action)
        if guess is not None and guess not in self._allowed:
            return None, f"{guess!r} is not in the word list"
        return guess, problem

    def invalid_info(self) -> dict[str, Any]:
        return {"guess": None, "pattern": None}

    def play_move(self, move: str) -> tuple[str, float, dict[str, Any]]:
        pattern = score_guess(self.secret, move)
        score = (pattern.count("G") + 0.5 * pattern.count("Y")) / WORD_LENGTH
        reward = self.record_guess(move, pattern, won=pattern == "G" * WORD_LENGTH, score=score)
        message = (
            f"Guess {self.turn} of {self.max_guesses}: {move.upper()} -> {' '.join(pattern)}\n"
            f"({_describe(move, pattern)})"
        )
        return message, reward, {"guess": move, "pattern": pattern}

    def win_message(self, tries: str) -> str:
        return f"You won in {tries}! The word was {self.shown_secret()}."

    def shown_secret(self) -> str:
        return self.secret.upper()

    def draw(self) -> str:
        """The board so far as text."""
        rows = [
            f"{' '.join(guess.upper())}   {' '.join(pattern)}"
            for guess, pattern in zip(self.guesses, self.patterns, strict=True)
        ]
        rows += ["_ _ _ _ _"] * (self.max_guesses - max(self.turn, len(rows)))
        if self.won or self.turn >= self.max_guesses:
            rows.append(f"secret: {self.secret.upper()}")
        return "\n".join(rows) + "\n"

    def oracle_move(self) -> str:
        """The solver's next guess (:mod:`trl_env.envs.wordle_solver`), from what a player sees."""
        from .wordle_solver import solver  # imports this module: import on use

        return f"[{solver().next_guess(self.guesses, self.patterns)}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random answer word, in brackets."""
        return f"[{self._answers[int(rng.integers(len(self._answers)))]}]"
