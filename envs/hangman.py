"""Hangman as a text environment: find a secret word one letter at a time before the lives run out."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ._common import count_noun, has_whitespace, quote, read_reply
from ._hangman_solver import candidates, hangman_words, oracle_move, words_between
from ._text_game import TextGame

__all__ = [
    "FREQUENCY_ORDER",
    "TextHangmanEnv",
    "candidate_words",
    "hangman_words",
    "oracle_action",
    "parse_guess",
]

FREQUENCY_ORDER = "esiarntolcdugpmhbyfvkwzxqj"
"""The letters by how many English dictionary words hold them: the order the scripted player
``frequency`` guesses in."""


def parse_guess(action: str) -> tuple[str | None, str | None]:
    """Extract a letter or word guess from free model text.

    The last ``[bracketed]`` guess wins; without brackets, the whole reply must be one bare letter
    or word.

    Args:
        action: The model's action text.

    Returns:
        ``(guess, None)`` with the lowercase guess (a letter, or a word whose length the game still
        has to check), or ``(None, problem)`` describing why no guess could be read.

    Example:
        >>> parse_guess("The most common letter is [E]")
        ('e', None)
        >>> parse_guess("garden.")
        ('garden', None)
        >>> parse_guess("[3]")
        (None, "'3' is not a letter or a word: use only the letters a-z")
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    if not bracketed and has_whitespace(candidate):
        return None, "no guess found: put one letter in square brackets, like [e]"
    if not (candidate.isascii() and candidate.isalpha()):
        return None, f"{quote(candidate)} is not a letter or a word: use only the letters a-z"
    return candidate.lower(), None


class TextHangmanEnv(TextGame[str]):
    """Hangman: find the secret English word one letter at a time before the lives run out.

    ## Description
    The secret is drawn with ``self.np_random`` from the common English words of
    ``min_length..max_length`` letters in :func:`hangman_words` (default 6-10 letters: 1,500
    words). The player sees one blank per letter and guesses a letter, which reveals every copy
    of it, or the whole word. Each letter that is not in the word and each wrong whole-word guess
    costs a life; the game is lost when ``lives`` (default 6) reach zero. Short words are harder
    (fewer letters to hit), so ``TextHangmanHard-v0`` uses words of 4-5 letters.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The guess is the last ``[bracketed]`` letter or word,
    or the whole reply if it is a single bare letter or word; case-insensitive. A whole-word guess
    must have the secret's length but need not be in the word list. A reply with no readable
    guess, a guess of the wrong length, or a repeated guess (a letter or word already tried) is an
    *invalid action*: it never raises and costs no life, but uses up the turn, returns feedback
    that says exactly what was wrong, sets ``info["invalid_action"]`` and gives
    ``-invalid_action_penalty``.
    A reply that states exactly one legal move among other words ("I guess the letter e") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rules, the blanks and the reply format; every later
    one is only the new message (the delta): whether the guess was right, the word so far, the
    lives left and the letters missed. The secret is revealed when the episode ends.

    ## Rewards
    1.0 for finding the word, 0.0 otherwise; ``-invalid_action_penalty`` for an invalid action.
    With ``partial_credit > 0``, each right letter that does not end the game also earns
    ``partial_credit`` times the fraction of the word it reveals (so the shaped part of a return
    is below ``partial_credit``).

    ## Episode End
    Terminated when the word is found (won) or the last life is lost. Truncated by gymnasium's
    ``TimeLimit`` after ``max_episode_steps=30`` turns (valid or not; a game never needs more
    than 26 valid ones).

    ## Arguments
    ```python
    gym.make("TextHangman-v0", lives=6, min_length=6, max_length=10,
             invalid_action_penalty=0.1, partial_credit=0.0, render_mode="ansi")
    ```
    ``TextHangmanHard-v0`` is ``min_length=4, max_length=5``. Lengths must lie in 4-10.
    ``reset(options={"secret": "garden"})`` fixes the secret (any word of letters a-z).

    ## Info
    ``guess`` of the step (``None`` when invalid), ``correct`` (bool: whether it was right; left
    out when the reply was invalid, so vector envs never batch a missing value as ``False``),
    ``pattern`` (the word so far, ``_`` for blanks), ``guessed`` letters,
    ``missed`` letters, ``wrong_words``, ``lives``, ``invalid_action`` (with ``error``), ``won``,
    and ``secret`` once the episode ends.

    ## Policies
    The oracle (:func:`oracle_action`) knows the word list and wins nearly every game; the random
    policy guesses a random untried letter. The scripted player ``frequency``
    (``trl-env eval TextHangman-v0 --policy frequency``) guesses the untried letters in the fixed
    order :data:`FREQUENCY_ORDER`, whatever the feedback: the simple heuristic a trained model is
    measured against (it wins 45 of the 256 games of seeds 10000-10255).

    ## Version History
    * v0: Initial version. Since the text-game base class, ``correct`` is left out (was ``None``)
      after an invalid reply; observations, rewards and seeds are unchanged. Later: replies that state
      one legal move in plain words are accepted, and invalid-reply feedback quotes the reply.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextHangman-v0")
        >>> observation, info = env.reset(seed=0, options={"secret": "garden"})
        >>> print(env.step("[e]")[0])
        Yes, E is in the word.
        Word: _ _ _ _ E _
        6 lives left.
        >>> env.step("I know it: [garden]")[1:3]
        (1.0, True)
    """

    game_name = "TextHangman"
    scripted_policies: ClassVar[tuple[str, ...]] = ("frequency",)
    description = "Find a secret {min_length}-{max_length} letter English word letter by letter with {lives} lives."
    move_kind = "guess"
    options_example = '{"secret": "garden"}'
    invalid_consequence = "No life lost, but that used up a turn."
    # Words a sentence uses around a guess ("I guess the letter e"): never read as the guess.
    prose_words = frozenset(
        ["i", "is", "my", "the", "guess", "letter", "think", "answer", "choose"]
    )

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        lives: int = 6,
        min_length: int = 6,
        max_length: int = 10,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        if isinstance(lives, bool) or not isinstance(lives, int) or lives < 1:
            raise ValueError(f"lives must be an int >= 1 (like lives=6), got {lives!r}")
        shortest, longest = len(hangman_words()[0]), len(hangman_words()[-1])
        if not shortest <= min_length <= max_length <= longest:
            raise ValueError(
                f"need {shortest} <= min_length <= max_length <= {longest}, got "
                f"min_length={min_length}, max_length={max_length}"
            )
        if partial_credit < 0:
            raise ValueError("invalid_action_penalty and partial_credit must be >= 0")
        self.lives = lives
        self.min_length, self.max_length = min_length, max_length
        self.partial_credit = float(partial_credit)
        # Built once per process and shared read-only: reset never rebuilds it.
        self._words = words_between(min_length, max_length)
        self.secret = ""
        self._clear()

    def _clear(self) -> None:
        self.lives_left = self.lives
        self.guessed: list[str] = []  # letters, in the order guessed
        self.missed: list[str] = []
        self.wrong_words: list[str] = []
        self.won = False

    @property
    def pattern(self) -> str:
        """The word as the player sees it: guessed letters, ``_`` for the others."""
        return "".join(c if c in self.guessed else "_" for c in self.secret)

    def _board(self) -> str:
        return "Word: " + " ".join(self.pattern.upper())

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Draw a new secret word (or take ``options["secret"]``) and return the rules."""
        secret = options.get("secret")
        if secret is None:
            self.secret = self._words[int(self.np_random.integers(len(self._words)))]
        else:
            if not (
                isinstance(secret, str) and secret.isascii() and secret.isalpha() and secret
            ) or not (2 <= len(secret) <= 64):
                raise ValueError(
                    f"options['secret'] must be a word of 2-64 letters a-z, got {secret!r}"
                )
            self.secret = secret.lower()
        self._clear()
        n, lives = len(self.secret), count_noun(self.lives, "life", "lives")
        self.invalid_advice = f"Reply with one new letter, like [e], or the whole {n}-letter word."
        observation = (
            f"Let's play Hangman. Find my secret English word of {n} letters.\n"
            f"{self._board()}\n"
            f"You have {lives}. Guess one letter at a time: it shows every place the "
            "letter is in the word. A letter that is not in the word, or a wrong guess of the "
            "whole word, costs one life. Repeating a guess costs no life but wastes a turn.\n"
            "Reply with one letter in square brackets, like [e], or with the whole word in "
            "brackets once you know it."
        )
        return observation, self._info()

    def _info(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "guessed": list(self.guessed),
            "missed": list(self.missed),
            "wrong_words": list(self.wrong_words),
            "lives": self.lives_left,
        }

    def parse_move(self, action: Any) -> tuple[str | None, str | None]:
        guess, problem = parse_guess(action)
        if guess is None:
            return None, problem
        n = len(self.secret)
        if len(guess) not in (1, n):
            return None, (
                f"{quote(guess)} has {len(guess)} letters: guess one letter or the whole "
                f"{n}-letter word"
            )
        if guess in self.guessed or guess in self.wrong_words:
            return None, f"you already guessed {guess.upper()}"
        return guess, None

    def invalid_info(self) -> dict[str, Any]:
        return {"guess": None}

    def play_move(self, move: str) -> tuple[str, float, dict[str, Any]]:
        reward = 0.0
        if len(move) == 1:  # a letter (secrets have at least two letters)
            self.guessed.append(move)
            hits = self.secret.count(move)
            correct = hits > 0
            if correct:
                times = "" if hits == 1 else f" ({hits} times)"
                message = f"Yes, {move.upper()} is in the word{times}."
                if "_" not in self.pattern:
                    self.won = True
                else:
                    reward = self.partial_credit * hits / len(self.secret)
            else:
                self.missed.append(move)
                self.lives_left -= 1
                message = f"No, {move.upper()} is not in the word."
        else:
            correct = move == self.secret
            if correct:
                self.won = True
                message = f"Yes, the word is {move.upper()}."
            else:
                self.wrong_words.append(move)
                self.lives_left -= 1
                message = f"No, the word is not {move.upper()}."
        return message, 1.0 if self.won else reward, {"guess": move, "correct": correct}

    def is_over(self) -> bool:
        return self.won or self.lives_left <= 0

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        if self.won:
            message += f"\nYou won! The word was {self.secret.upper()}."
        elif self.lives_left <= 0:
            message += f"\n{self._board()}\nNo lives left. The word was {self.secret.upper()}."
        else:
            message += f"\n{self._board()}\n{count_noun(self.lives_left, 'life', 'lives')} left."
            if self.missed:
                message += f" Missed: {' '.join(self.missed).upper()}."
        info.update(self._info(), won=self.won)
        if terminated:
            info["secret"] = self.secret
        return message

    def draw(self) -> str:
        """The word so far, lives and misses as text."""
        rows = [
            self._board(),
            f"Lives: {self.lives_left}/{self.lives}",
            f"Missed: {' '.join(self.missed + self.wrong_words).upper() or '-'}",
        ]
        if self._done:
            rows.append(f"secret: {self.secret.upper()}")
        return "\n".join(rows) + "\n"

    def oracle_move(self) -> str:
        """See :func:`oracle_action`."""
        guessed = "".join(sorted(set(self.guessed)))
        move = oracle_move(self.pattern, guessed, tuple(sorted(self.wrong_words)), self.lives_left)
        return f"[{move}]"

    def scripted_action(self, name: str) -> str:
        """The reply of the scripted player ``name``: ``frequency`` guesses the first letter of
        :data:`FREQUENCY_ORDER` not yet tried."""
        if name != "frequency":
            raise ValueError(f"TextHangman has no scripted player {name!r}; it has 'frequency'")
        tried = set(self.guessed)
        return f"[{next((c for c in FREQUENCY_ORDER if c not in tried), 'e')}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random letter not yet guessed, in brackets."""
        tried = set(self.guessed)
        letters = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in tried] or ["e"]
        return f"[{letters[int(rng.integers(len(letters)))]}]"


def candidate_words(env: gym.Env[str, str]) -> list[str]:
    """The words of :func:`hangman_words` still consistent with everything the player has seen.

    A candidate has the secret's length, the revealed letters in their places and no guessed
    letter (hit or missed) in a blank, and is not a wrong whole-word guess.

    Args:
        env: A ``TextHangman`` env (wrapped or not), reset.

    Returns:
        The candidate words, in word-list order.
    """
    game = TextHangmanEnv.unwrap(env)
    guessed = "".join(sorted(set(game.guessed)))
    return candidates(game.pattern, guessed, tuple(game.wrong_words))


def oracle_action(env: gym.Env[str, str]) -> str:
    """A strong Hangman player that knows the word list (but never reads the secret).

    It keeps the :func:`candidate_words` consistent with what it has seen. While many are left it
    guesses the untried letter found in the most candidates (the safest letter); once at most 20
    are left it searches the game tree exhaustively for the move (letter or whole word) that wins
    against the most candidates with the lives left. With one candidate it guesses the word.

    With 6 lives it wins every word of 6-10 letters in the list (``TextHangman-v0``, checked
    exhaustively) and about 93% of the 4-5-letter words (``TextHangmanHard-v0``): some short
    words cannot be told apart in time by any strategy (``_ight``: fight, light, might, night,
    right, sight, tight, ...).

    Args:
        env: A ``TextHangman`` env (wrapped or not), reset and not yet ended.

    Returns:
        The action text, like ``"[e]"`` or ``"[garden]"``.
    """
    return TextHangmanEnv.unwrap(env).oracle_action()
