"""Mastermind as a text environment: crack a secret code of coloured pegs from black/white pegs."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from ._common import quote, read_reply
from ._guessing import GuessingGame
from ._mastermind_solver import candidates, oracle_code

__all__ = ["TextMastermindEnv", "consistent_codes", "oracle_action", "parse_code", "score_code"]

MAX_COLORS = 9  # colours are the digits 1-9
MAX_CODE_LENGTH = 8
# Characters allowed between the digits of a code: "1 2 3 4", "1,2,3,4", "1-2-3-4".
_SEPARATORS = str.maketrans("", "", " \t,;-/|")
_DIGIT_RUN = re.compile(r"[0-9](?:[\s,;\-/|]*[0-9])*")  # a piece of a reply that may be a code


def score_code(secret: Sequence[int] | str, guess: Sequence[int] | str) -> tuple[int, int]:
    """Score ``guess`` against ``secret`` by the Mastermind rule.

    Args:
        secret: The secret code: a sequence of colours (ints, or a string of digits).
        guess: The guessed code, the same length.

    Returns:
        ``(black, white)``: ``black`` pegs are right colour in the right place; ``white`` pegs are
        right colour in the wrong place, counting each colour at most as often as the secret has
        it left over after the blacks (so ``black + white`` is the number of colours in common).

    Example:
        >>> score_code("1234", "1234")
        (4, 0)
        >>> score_code("1234", "4321")
        (0, 4)
        >>> score_code("1122", "1212")
        (2, 2)
        >>> score_code((1, 1, 2, 2), (1, 1, 1, 1))  # only two 1s in the secret
        (2, 0)
    """
    if len(secret) != len(guess):
        raise ValueError(f"guess {guess!r} and secret {secret!r} differ in length")
    black = sum(s == g for s, g in zip(secret, guess, strict=True))
    common = sum((Counter(secret) & Counter(guess)).values())
    return black, common - black


def parse_code(
    action: str, code_length: int = 4, num_colors: int = 6
) -> tuple[str | None, str | None]:
    """Extract a code from free model text.

    The last ``[bracketed]`` code wins; without brackets, the whole reply must be the code. Digits
    may be separated by spaces, commas or dashes: ``[1 2 3 4]``, ``[1234]``, ``1,2,3,4``.

    Args:
        action: The model's action text.
        code_length: Number of pegs expected.
        num_colors: Colours are the digits ``1..num_colors``.

    Returns:
        ``(code, None)`` with the code as a string of digits, or ``(None, problem)`` describing
        why no valid code could be read.

    Example:
        >>> parse_code("Let me try [1 1 2 2]")
        ('1122', None)
        >>> parse_code("6543")
        ('6543', None)
        >>> parse_code("[1 2 3]")
        (None, "'1 2 3' has 3 pegs, not 4")
        >>> parse_code("[1 2 3 7]")
        (None, 'colour 7 does not exist: use the digits 1 to 6')
    """
    candidate, bracketed, problem = read_reply(action)
    if problem is not None:
        return None, problem
    digits = candidate.translate(_SEPARATORS)
    if not (digits.isascii() and digits.isdigit()):
        if not bracketed:
            return (
                None,
                f"no code found: put your guess in square brackets, like {_example(code_length, num_colors)}",
            )
        return None, f"{quote(candidate)} is not a code: use only the digits 1 to {num_colors}"
    if len(digits) != code_length:
        return None, f"{quote(candidate)} has {len(digits)} pegs, not {code_length}"
    wrong = sorted({d for d in digits if not 1 <= int(d) <= num_colors})
    if wrong:
        return None, f"colour {wrong[0]} does not exist: use the digits 1 to {num_colors}"
    return digits, None


def _example(code_length: int, num_colors: int = 6) -> str:
    return "[" + " ".join(str(1 + i % min(num_colors, 6)) for i in range(code_length)) + "]"


class TextMastermindEnv(GuessingGame[str, tuple[int, int]]):
    """Mastermind: crack a secret code of ``code_length`` coloured pegs in ``max_guesses`` tries.

    ## Description
    Colours are the digits ``1..num_colors`` (default 1-6) and the secret code has
    ``code_length`` pegs (default 4), drawn with ``self.np_random``; colours may repeat unless
    ``allow_duplicates=False``. Every guess is answered with black and white pegs (see
    :func:`score_code`): black = right colour in the right place, white = right colour in the
    wrong place. The classic game (4 pegs, 6 colours, duplicates allowed) is always solvable in 5
    guesses; the default limit is 10.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The guess is the last ``[bracketed]`` code, or the whole
    reply if it is a bare code; digits may be separated by spaces, commas or dashes (``[1 2 3 4]``,
    ``[1234]``). Guesses may repeat colours even when the secret cannot. A reply with no readable
    code, the wrong number of pegs or a colour out of range is an *invalid action*: it never raises,
    uses up the turn, returns feedback that says exactly what was wrong, sets
    ``info["invalid_action"]`` and gives ``-invalid_action_penalty``.
    A reply that states exactly one legal move among other words ("My guess: 1 1 2 2") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rules and the reply format; every later one is only the
    new message (the delta): the guess, its black and white pegs and the guesses left. The secret
    is revealed when the episode ends.

    ## Rewards
    1.0 for cracking the code, 0.0 otherwise; ``-invalid_action_penalty`` for an invalid action.
    With ``partial_credit > 0``, each valid guess also earns ``partial_credit`` times the increase
    of its best score so far, where a guess scores ``(black + 0.5 * white) / code_length`` (so the
    shaped part of a return is at most ``partial_credit``).

    ## Episode End
    Terminated when the code is cracked. Truncated after ``max_guesses`` turns (valid or not);
    registered with ``max_episode_steps`` equal to ``max_guesses`` so gymnasium's ``TimeLimit``
    agrees.

    ## Arguments
    ```python
    gym.make("TextMastermind-v0", code_length=4, num_colors=6, allow_duplicates=True,
             max_guesses=10, invalid_action_penalty=0.1, partial_credit=0.0, render_mode="ansi")
    ```
    ``TextMastermindHard-v0`` is ``code_length=5, num_colors=8, max_guesses=12``.
    ``code_length`` is 1-8 and ``num_colors`` 2-9. Pass ``max_episode_steps`` equal to
    ``max_guesses`` when changing it. ``reset(options={"secret": "1234"})`` fixes the secret.

    ## Info
    ``guess`` (a digit string) and ``feedback`` (``(black, white)``) of the step (``None`` when
    invalid), ``guesses`` and ``feedbacks`` so far, ``invalid_action`` (with ``error``), ``won``,
    and ``secret`` once the episode ends.

    ## Version History
    * v0: Initial version. Replies that state one legal move in plain words are accepted, and
      invalid-reply feedback quotes the reply (issue 9); seeds and valid moves are unchanged.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextMastermind-v0")
        >>> observation, info = env.reset(seed=0, options={"secret": "1234"})
        >>> observation, reward, terminated, truncated, info = env.step("[1 1 2 2]")
        >>> info["feedback"]
        (1, 1)
        >>> env.step("I am sure: [1 2 3 4]")[1:3]
        (1.0, True)
    """

    game_name = "TextMastermind"
    description = "Crack a secret code of {code_length} pegs in {num_colors} colours (digits 1-{num_colors}) from black/white pegs in {max_guesses} guesses."
    options_example = '{"secret": "1234"}'
    secret_name = "code"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        code_length: int = 4,
        num_colors: int = 6,
        allow_duplicates: bool = True,
        max_guesses: int = 10,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, max_guesses, invalid_action_penalty, partial_credit)
        if not 1 <= code_length <= MAX_CODE_LENGTH:
            raise ValueError(f"code_length must be in [1, {MAX_CODE_LENGTH}], got {code_length}")
        if not 2 <= num_colors <= MAX_COLORS:
            raise ValueError(f"num_colors must be in [2, {MAX_COLORS}], got {num_colors}")
        if not allow_duplicates and code_length > num_colors:
            raise ValueError(
                f"allow_duplicates=False needs code_length <= num_colors, got {code_length} > "
                f"{num_colors}"
            )
        self.code_length = code_length
        self.num_colors = num_colors
        self.allow_duplicates = bool(allow_duplicates)
        self.invalid_advice = (
            f"Reply with {code_length} digits from 1 to {num_colors} in brackets, "
            f"like {_example(code_length, num_colors)}."
        )

    def draw_secret(self, secret: Any) -> str:
        if secret is None:
            colours = np.arange(1, self.num_colors + 1)
            if self.allow_duplicates:
                drawn = self.np_random.choice(colours, size=self.code_length)
            else:
                drawn = self.np_random.choice(colours, size=self.code_length, replace=False)
            return "".join(str(int(c)) for c in drawn)
        code, problem = (
            parse_code(secret, self.code_length, self.num_colors)
            if isinstance(secret, str)
            else (None, "not a string")
        )
        if code is None or (not self.allow_duplicates and len(set(code)) < len(code)):
            raise ValueError(
                f"options['secret'] must be {self.code_length} digits from 1 to "
                f"{self.num_colors}{'' if self.allow_duplicates else ', all different'}, "
                f"got {secret!r} ({problem or 'repeated colour'})"
            )
        return code

    def rules(self) -> str:
        n, k = self.code_length, self.num_colors
        repeats = "may repeat" if self.allow_duplicates else "are all different"
        return (
            f"Let's play Mastermind. I picked a secret code of {n} pegs; each peg is a colour "
            f"from 1 to {k}, and colours {repeats}. Crack it in {self.max_guesses} guesses.\n"
            "After each guess you get:\n"
            "  black = pegs with the right colour in the right place\n"
            "  white = other pegs with a right colour but in the wrong place\n"
            f"Reply with one guess of {n} digits in square brackets, for example {_example(n, k)}."
        )

    def parse_move(self, action: Any) -> tuple[str | None, str | None]:
        return parse_code(action, self.code_length, self.num_colors)

    def move_candidates(self, text: str) -> list[str]:
        """The runs of digits in a reply ("My guess: 1 1 2 2." -> one run, ``1 1 2 2``)."""
        return _DIGIT_RUN.findall(text[:1000])

    def invalid_info(self) -> dict[str, Any]:
        return {"guess": None, "feedback": None}

    def play_move(self, move: str) -> tuple[str, float, dict[str, Any]]:
        black, white = score_code(self.secret, move)
        score = (black + 0.5 * white) / self.code_length
        reward = self.record_guess(move, (black, white), won=black == self.code_length, score=score)
        message = (
            f"Guess {self.turn} of {self.max_guesses}: {' '.join(move)} -> "
            f"{black} black, {white} white"
        )
        return message, reward, {"guess": move, "feedback": (black, white)}

    def win_message(self, tries: str) -> str:
        return f"You cracked the code in {tries}!"

    def shown_secret(self) -> str:
        return " ".join(self.secret)

    def draw(self) -> str:
        """The board so far as text."""
        rows = [
            f"{' '.join(guess)}   black {black} white {white}"
            for guess, (black, white) in zip(self.guesses, self.feedbacks, strict=True)
        ]
        rows += [" ".join("_" * self.code_length)] * (self.max_guesses - max(self.turn, len(rows)))
        if self._done:
            rows.append(f"secret: {' '.join(self.secret)}")
        return "\n".join(rows) + "\n"

    def oracle_move(self) -> str:
        """See :func:`oracle_action`."""
        return "[" + " ".join(oracle_code(*self._history())) + "]"

    def _history(self) -> tuple[int, int, bool, tuple[str, ...], tuple[tuple[int, int], ...]]:
        """The rules and what the player has seen: the key of the oracle's cache."""
        n, k, duplicates = self.code_length, self.num_colors, self.allow_duplicates
        return n, k, duplicates, tuple(self.guesses), tuple(self.feedbacks)

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random code (colours may repeat), in brackets."""
        code = rng.integers(1, self.num_colors + 1, size=self.code_length).tolist()
        return "[" + " ".join(map(str, code)) + "]"


def consistent_codes(env: gym.Env[str, str]) -> list[str]:
    """Every secret still consistent with the feedback so far, in lexicographic order.

    Args:
        env: A ``TextMastermind`` env (wrapped or not).

    Returns:
        The candidate codes as digit strings.
    """
    codes, _ = candidates(*TextMastermindEnv.unwrap(env)._history())
    return ["".join(map(str, row)) for row in codes.tolist()]


def oracle_action(env: gym.Env[str, str]) -> str:
    """A strong Mastermind player: always guesses a code consistent with all feedback so far.

    The first guess is the Knuth-style opening ``1 1 2 2`` (colour pairs ``1 1 2 2 3 3 ...`` cut
    to the code length; ``1 2 3 4 ...`` without duplicates). After that it picks, among (at most
    256 of) the codes still possible, the one whose worst-case feedback leaves the fewest
    possibilities (minimax, ties to the first in lexicographic order). It uses only the guesses
    and their feedback, never the secret. It cracks every 4-peg 6-colour code within 6 guesses and
    every 5-peg 8-colour code within 9 (both checked exhaustively), inside the limits of 10 and 12.

    Args:
        env: A ``TextMastermind`` env (wrapped or not), reset and not yet ended.

    Returns:
        The action text, like ``"[1 1 2 2]"``.
    """
    return TextMastermindEnv.unwrap(env).oracle_action()
