"""Guess the number as a text environment: find a secret integer from higher/lower hints."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ._common import MAX_DIGITS, has_whitespace, read_reply, read_whole_number
from ._guessing import GuessingGame

__all__ = ["TextGuessNumberEnv", "oracle_action", "parse_number"]


def parse_number(action: str) -> tuple[int | None, str | None]:
    """Extract an integer guess from free model text.

    The last ``[bracketed]`` number wins; without brackets, the whole reply must be one number.

    Args:
        action: The model's action text.

    Returns:
        ``(number, None)``, or ``(None, problem)`` describing why no number could be read. The
        number is not checked against the game's range here.

    Example:
        >>> parse_number("Half of 100 is [50]")
        (50, None)
        >>> parse_number("42.")
        (42, None)
        >>> parse_number("[4.5]")
        (None, "'4.5' is not a whole number")
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    if not bracketed and has_whitespace(candidate):
        return None, "no guess found: put your number in square brackets, like [50]"
    return read_whole_number(candidate)


class TextGuessNumberEnv(GuessingGame[int, str]):
    """Guess the number: find a secret integer in ``[low, high]`` from "higher"/"lower" hints.

    ## Description
    The secret is drawn uniformly with ``self.np_random`` from the integers ``low..high``
    (default 1..100). Each guess is answered with "higher" (the secret is larger), "lower" (it is
    smaller) or a win. With the defaults, binary search always wins in the 7 guesses allowed
    (``2**7 - 1 = 127 >= 100``); see :func:`oracle_action`. It is the easiest environment of the
    catalogue, meant for quick experiments with tiny models: the first observation is two lines.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The guess is the last ``[bracketed]`` integer, or the
    whole reply if it is a single bare integer (``[42]``, ``42``, ``42.``). A reply with no
    readable integer, a fraction, or a number outside ``low..high`` is an *invalid action*: it
    never raises, uses up the turn, returns feedback that says exactly what was wrong, sets
    ``info["invalid_action"]`` and gives ``-invalid_action_penalty``. Repeating a guess is valid
    (it just wastes a turn).
    A reply that states exactly one legal move among other words ("I guess 50") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the range, the number of guesses and the reply format;
    every later one is only the new message (the delta): the hint and the guesses left. The
    secret is revealed when the episode ends.

    ## Rewards
    1.0 for finding the number, 0.0 otherwise; ``-invalid_action_penalty`` for an invalid action.
    With ``partial_credit > 0`` (shaped reward), each valid guess that is not the secret also
    earns ``partial_credit`` times the increase of its best *closeness* so far, where a guess's
    closeness is ``1 - |guess - secret| / (high - low)``. The shaped part of a return is therefore
    at most ``partial_credit`` (the best closeness reached), and guessing closer than before is
    always rewarded.

    ## Episode End
    Terminated when the number is found. Truncated after ``max_guesses`` turns (valid or not);
    registered with ``max_episode_steps`` equal to ``max_guesses`` so gymnasium's ``TimeLimit``
    agrees.

    ## Arguments
    ```python
    gym.make("TextGuessNumber-v0", low=1, high=100, max_guesses=7, invalid_action_penalty=0.1,
             partial_credit=0.0, render_mode="ansi")
    ```
    ``TextGuessNumberHard-v0`` is ``low=1, high=1000, max_guesses=10``. Pass ``max_episode_steps``
    equal to ``max_guesses`` when changing it. ``reset(options={"secret": 42})`` fixes the secret.

    ## Info
    ``guess`` (the guess as text, like every game's ``guess``), ``number`` (the same as an int)
    and ``hint`` (``"higher"``, ``"lower"`` or ``"correct"``) of the step, all
    left out when the reply was invalid (so every key keeps one type and vector envs batch
    ``info``), ``guesses`` and ``hints`` so far, ``invalid_action`` (with ``error``), ``won``,
    and ``secret`` once the episode ends.

    ## Version History
    * v0: Initial version. Since the text-game base class, ``hint`` is left out (was ``None``)
      after an invalid reply; observations, rewards and seeds are unchanged. Later: replies that state
      one legal move in plain words are accepted, and invalid-reply feedback quotes the reply.
      ``info["guess"]`` is text (was an int, now in ``info["number"]``), so a vector env can mix
      this game with others.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextGuessNumber-v0")
        >>> observation, info = env.reset(seed=0, options={"secret": 42})
        >>> env.step("[50]")[0]
        '50 is too high: the number is lower. 6 guesses left.'
        >>> env.step("42")[1:3]
        (1.0, True)
    """

    game_name = "TextGuessNumber"
    description = (
        "Find a secret integer in {low}-{high} from higher/lower hints in {max_guesses} guesses."
    )
    observation_length = 1024
    options_example = '{"secret": 42}'
    feedback_key = "hints"
    secret_name = "number"
    message_separator = " "

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        low: int = 1,
        high: int = 100,
        max_guesses: int = 7,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, max_guesses, invalid_action_penalty, partial_credit)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise ValueError(f"low and high must be integers, got {low!r} and {high!r}")
        if not low < high or max(abs(low), abs(high)) >= 10**MAX_DIGITS:
            raise ValueError(
                f"need low < high, both below 10**{MAX_DIGITS} in size; got {low} and {high}"
            )
        self.low, self.high = low, high
        self.invalid_advice = (
            f"Reply with a whole number from {low} to {high} in brackets, like [50]."
        )

    @property
    def hints(self) -> list[str]:
        """The hint on each valid guess so far: ``"higher"``, ``"lower"`` or ``"correct"``."""
        return self.feedbacks

    def draw_secret(self, secret: Any) -> int:
        if secret is None:
            return int(self.np_random.integers(self.low, self.high + 1))
        if isinstance(secret, bool) or not isinstance(secret, int):
            raise ValueError(f"options['secret'] must be an int, got {secret!r}")
        if not self.low <= secret <= self.high:
            raise ValueError(
                f"options['secret'] must be in [{self.low}, {self.high}], got {secret}"
            )
        return int(secret)

    def rules(self) -> str:
        return (
            f"Guess my secret number, a whole number from {self.low} to {self.high}, in "
            f"{self.max_guesses} tries. After each guess I say if my number is higher or lower.\n"
            f"Reply with your guess in square brackets, like [{(self.low + self.high) // 2}]."
        )

    def parse_move(self, action: Any) -> tuple[int | None, str | None]:
        guess, problem = parse_number(action)
        if guess is not None and not self.low <= guess <= self.high:
            return None, f"{guess} is outside the range {self.low} to {self.high}"
        return guess, problem

    def play_move(self, move: int) -> tuple[str, float, dict[str, Any]]:
        if move == self.secret:
            hint = "correct"
            message = f"{move} is correct!"
        else:
            hint = "higher" if move < self.secret else "lower"
            too = "low" if hint == "higher" else "high"
            message = f"{move} is too {too}: the number is {hint}."
        closeness = 1.0 - abs(move - self.secret) / (self.high - self.low)
        reward = self.record_guess(move, hint, won=hint == "correct", score=closeness)
        # "guess" is text, as in every other game, so vector envs that mix games batch it.
        return message, reward, {"guess": str(move), "number": move, "hint": hint}

    def win_message(self, tries: str) -> str:
        return f"You found it in {tries}."

    def draw(self) -> str:
        """The guesses so far as text."""
        rows = [f"range {self.low}-{self.high}, guess {self.turn} of {self.max_guesses}"]
        rows += [f"{guess}: {hint}" for guess, hint in zip(self.guesses, self.hints, strict=True)]
        if self._done:
            rows.append(f"secret: {self.secret}")
        return "\n".join(rows) + "\n"

    def oracle_move(self) -> str:
        """Binary search over the interval still consistent with the hints (see below)."""
        low, high = self.low, self.high
        for guess, hint in zip(self.guesses, self.hints, strict=True):
            if hint == "higher":
                low = max(low, guess + 1)
            elif hint == "lower":
                high = min(high, guess - 1)
            else:
                low = high = guess
        return f"[{(low + high) // 2}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A number of the range, uniformly at random, in brackets."""
        return f"[{int(rng.integers(self.low, self.high + 1))}]"


def oracle_action(env: gym.Env[str, str]) -> str:
    """Binary search: the middle of the interval still consistent with the hints so far.

    Uses only what a player sees (the guesses and hints), never the secret. With ``high - low + 1
    <= 2**max_guesses - 1`` it always finds the number in time (1..100 in 7, 1..1000 in 10).
    The same as ``env.unwrapped.oracle_action()``.

    Args:
        env: A ``TextGuessNumber`` env (wrapped or not), reset and not yet ended.

    Returns:
        The action text, like ``"[50]"``.
    """
    return TextGuessNumberEnv.unwrap(env, "oracle_action").oracle_action()
