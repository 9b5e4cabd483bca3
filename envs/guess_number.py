"""Guess the number as a text environment: find a secret integer from higher/lower hints."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
from trl_env.envs._common import (
    check_render_mode,
    count_noun,
    has_whitespace,
    improvement_reward,
    invalid_feedback,
    quote,
    read_reply,
    reset_needed,
)

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = ["TextGuessNumberEnv", "oracle_action", "parse_number"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = (
    18  # longer numbers are out of any range we accept (and int() of huge strings is slow)
)


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
    if not (candidate.isascii() and _INTEGER.fullmatch(candidate)):
        return None, f"{quote(candidate)} is not a whole number"
    if len(candidate.lstrip("+-").lstrip("0")) > _MAX_DIGITS:
        return None, f"{quote(candidate)} is far too large"
    return int(candidate), None


class TextGuessNumberEnv(gym.Env[str, str]):
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
    ``guess`` and ``hint`` (``"higher"``, ``"lower"`` or ``"correct"``) of the step (``hint`` is
    ``None`` and ``guess`` absent when the reply was invalid, which keeps ``info`` batchable by
    vector envs), ``guesses`` and ``hints`` so far, ``invalid_action`` (with ``error``), ``won``,
    and ``secret`` once the episode ends.

    ## Version History
    * v0: Initial version.

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

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

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
        check_render_mode(render_mode, self.metadata["render_modes"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise ValueError(f"low and high must be integers, got {low!r} and {high!r}")
        if not low < high or max(abs(low), abs(high)) >= 10**_MAX_DIGITS:
            raise ValueError(
                f"need low < high, both below 10**{_MAX_DIGITS} in size; got {low} and {high}"
            )
        if max_guesses < 1:
            raise ValueError(f"max_guesses must be >= 1, got {max_guesses}")
        if invalid_action_penalty < 0 or partial_credit < 0:
            raise ValueError("invalid_action_penalty and partial_credit must be >= 0")
        self.render_mode = render_mode
        self.low, self.high = low, high
        self.max_guesses = max_guesses
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.partial_credit = float(partial_credit)
        self.observation_space = TextSpace(1024)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self.secret: int | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self.turn = 0
        self.guesses: list[int] = []
        self.hints: list[str] = []
        self.won = False
        self._done = False
        self._best_closeness = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw a new secret (or take ``options["secret"]``) and return the rules."""
        super().reset(seed=seed)
        secret = (options or {}).get("secret")
        if secret is None:
            self.secret = int(self.np_random.integers(self.low, self.high + 1))
        else:
            if isinstance(secret, bool) or not isinstance(secret, int):
                raise ValueError(f"options['secret'] must be an int, got {secret!r}")
            if not self.low <= secret <= self.high:
                raise ValueError(
                    f"options['secret'] must be in [{self.low}, {self.high}], got {secret}"
                )
            self.secret = int(secret)
        self._reset_state()
        observation = (
            f"Guess my secret number, a whole number from {self.low} to {self.high}, in "
            f"{self.max_guesses} tries. After each guess I say if my number is higher or lower.\n"
            f"Reply with your guess in square brackets, like [{(self.low + self.high) // 2}]."
        )
        return observation, {"guesses": [], "hints": []}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one guess. Never raises on any string ``action``."""
        if self.secret is None or self._done:
            raise reset_needed("TextGuessNumber", started=self.secret is not None)
        self.turn += 1
        left = self.max_guesses - self.turn
        guess, problem = parse_number(action)
        if guess is not None and not self.low <= guess <= self.high:
            guess, problem = None, f"{guess} is outside the range {self.low} to {self.high}"
        # "guess" is present only for valid guesses: an int-or-None value would break
        # gymnasium's vector-env info batching (it makes an int array from the first env's value).
        info: dict[str, Any] = {"invalid_action": problem is not None}
        if problem is not None:
            reward = -self.invalid_action_penalty
            info["hint"] = None
            info["error"] = problem
            message = invalid_feedback(
                "guess",
                problem,
                f"Reply with a whole number from {self.low} to {self.high} in brackets, like [50].",
            )
        else:
            assert guess is not None
            if guess == self.secret:
                hint, reward = "correct", 1.0
                message = f"{guess} is correct!"
            else:
                hint = "higher" if guess < self.secret else "lower"
                reward = self._shaped_reward(guess)
                too = "low" if hint == "higher" else "high"
                message = f"{guess} is too {too}: the number is {hint}."
            self.guesses.append(guess)
            self.hints.append(hint)
            info["guess"] = guess
            info["hint"] = hint
            self.won = hint == "correct"
        terminated = self.won
        truncated = not terminated and left <= 0
        if self.won:
            message += f" You found it in {count_noun(self.turn, 'guess', 'guesses')}."
        elif truncated:
            message += f" No guesses left. The number was {self.secret}."
        else:
            message += f" {count_noun(left, 'guess', 'guesses')} left."
        info.update(guesses=list(self.guesses), hints=list(self.hints), won=self.won)
        if terminated or truncated:
            self._done = True
            info["secret"] = self.secret
        return message, reward, terminated, truncated, info

    def _shaped_reward(self, guess: int) -> float:
        if not self.partial_credit:
            return 0.0
        assert self.secret is not None
        closeness = 1.0 - abs(guess - self.secret) / (self.high - self.low)
        reward, self._best_closeness = improvement_reward(
            self.partial_credit, self._best_closeness, closeness
        )
        return reward

    def render(self) -> str | None:  # type: ignore[override]
        """The guesses so far as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        rows = [f"range {self.low}-{self.high}, guess {self.turn} of {self.max_guesses}"]
        rows += [f"{guess}: {hint}" for guess, hint in zip(self.guesses, self.hints, strict=True)]
        if self._done:
            rows.append(f"secret: {self.secret}")
        return "\n".join(rows) + "\n"


def oracle_action(env: gym.Env[str, str]) -> str:
    """Binary search: the middle of the interval still consistent with the hints so far.

    Uses only what a player sees (the guesses and hints), never the secret. With ``high - low + 1
    <= 2**max_guesses - 1`` it always finds the number in time (1..100 in 7, 1..1000 in 10).

    Args:
        env: A ``TextGuessNumber`` env (wrapped or not), reset and not yet ended.

    Returns:
        The action text, like ``"[50]"``.
    """
    game = env.unwrapped
    if not isinstance(game, TextGuessNumberEnv):
        raise TypeError(f"oracle_action needs a TextGuessNumber env, got {type(game).__name__}")
    low, high = game.low, game.high
    for guess, hint in zip(game.guesses, game.hints, strict=True):
        if hint == "higher":
            low = max(low, guess + 1)
        elif hint == "lower":
            high = min(high, guess - 1)
        else:
            low = high = guess
    return f"[{(low + high) // 2}]"
